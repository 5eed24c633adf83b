//! Structured control flow: `if` (statements and expressions), short-circuit
//! `&&`/`||`, `for` and `while` loops.
//!
//! Mutable variables assigned inside a construct are carried through it: they are
//! yielded by both branches of an `If` and are the carried values of `For` and
//! `While`. `return`, `break` and `continue` set hidden flag variables (carried
//! like any other mutable variable); the statements after one that may exit run
//! under `if !flags { ... }`, a `while` re-checks the flags before each
//! iteration, and a `for` that may exit early is lowered as a `while`.

use super::env::Pos;
use super::{FnCx, Tv};
use crate::front::diagnostics::ErrorKind;
use crate::front::types::SurfaceType;
use crate::ir::{BinaryOp, Literal, OpKind, Type, UnaryOp, ValueId};
use mad_grammar::ast::{self, Block, Expr, ExprKind, Stmt, StmtKind};
use mad_grammar::span::Span;

pub const RET_FLAG: &str = "$ret";
pub const RET_VAL: &str = "$retval";
pub const BRK_FLAG: &str = "$brk";
pub const CONT_FLAG: &str = "$cont";
const COUNTER: &str = "$i";

/// One branch of an `If` being lowered.
pub enum Arm<'x> {
    Block(&'x Block),
    Expr(&'x Expr),
    /// The rest of a block after a statement that may exit.
    Rest(&'x [Stmt], Option<&'x Expr>),
    Bool(bool),
    /// A zero of the other branch's type (the branch is never taken for its value).
    Zero,
    Unit,
}

impl Arm<'_> {
    fn diverges(&self) -> bool {
        match self {
            Arm::Block(b) => block_diverges(b),
            Arm::Expr(e) => expr_diverges(e),
            Arm::Zero => true,
            _ => false,
        }
    }
}

/// Whether a block never ends normally: it ends with `return`, `break` or `continue`, with an
/// `if`/`else` (or a block) whose every branch does, or with a `while true` loop that has no
/// `break` of its own. Such a block needs no value (`fn f(x: f64) -> f64 { if x > 0.0 {
/// return 1.0; } else { return 2.0; } }`).
pub fn block_diverges(b: &Block) -> bool {
    match &b.tail {
        Some(t) => expr_diverges(t),
        None => match b.stmts.last().map(|s| &s.kind) {
            Some(StmtKind::Break | StmtKind::Continue | StmtKind::Return(_)) => true,
            Some(StmtKind::Expr(e)) => expr_diverges(e),
            Some(StmtKind::While { cond, body }) => {
                let mut ex = Exits::default();
                exits_block(body, 0, &mut ex);
                matches!(cond.kind, ExprKind::Bool(true)) && !ex.brk
            }
            _ => false,
        },
    }
}

/// Whether an expression never ends normally (see [`block_diverges`]).
fn expr_diverges(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Block(b) => block_diverges(b),
        ExprKind::If { then, else_: Some(els), .. } => block_diverges(then) && expr_diverges(els),
        _ => false,
    }
}

/// What a piece of code may do to leave the current block early.
#[derive(Default, Clone, Copy)]
pub struct Exits {
    pub ret: bool,
    /// `break` of the loop at depth 0 (not of a nested loop).
    pub brk: bool,
    pub cont: bool,
}

impl Exits {
    pub fn any(self) -> bool {
        self.ret || self.brk || self.cont
    }
}

pub fn exits_stmts(stmts: &[Stmt], tail: Option<&Expr>, depth: usize, out: &mut Exits) {
    for s in stmts {
        exits_stmt(s, depth, out);
    }
    if let Some(t) = tail {
        exits_expr(t, depth, out);
    }
}

pub fn exits_block(b: &Block, depth: usize, out: &mut Exits) {
    exits_stmts(&b.stmts, b.tail.as_deref(), depth, out)
}

pub fn exits_stmt(s: &Stmt, depth: usize, out: &mut Exits) {
    match &s.kind {
        StmtKind::Let { value, .. } => exits_expr(value, depth, out),
        StmtKind::Assign { place, value, .. } => {
            exits_expr(place, depth, out);
            exits_expr(value, depth, out);
        }
        StmtKind::Expr(e) => exits_expr(e, depth, out),
        StmtKind::For { lo, hi, body, .. } => {
            exits_expr(lo, depth, out);
            exits_expr(hi, depth, out);
            exits_block(body, depth + 1, out);
        }
        StmtKind::While { cond, body } => {
            exits_expr(cond, depth + 1, out);
            exits_block(body, depth + 1, out);
        }
        StmtKind::Break => out.brk |= depth == 0,
        StmtKind::Continue => out.cont |= depth == 0,
        StmtKind::Return(e) => {
            out.ret = true;
            if let Some(e) = e {
                exits_expr(e, depth, out);
            }
        }
        StmtKind::Error => {}
    }
}

pub fn exits_expr(e: &Expr, depth: usize, out: &mut Exits) {
    walk_expr(e, &mut |x| match &x.kind {
        ExprKind::Block(b) => exits_block(b, depth, out),
        ExprKind::If { then, .. } => exits_block(then, depth, out),
        _ => {}
    });
}

/// Calls `f` on `e` and every sub-expression, without entering blocks (`f` sees
/// the `Block`/`If` expressions themselves and handles their blocks).
pub fn walk_expr(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Binary { lhs, rhs, .. } => {
            walk_expr(lhs, f);
            walk_expr(rhs, f);
        }
        ExprKind::Unary { operand, .. } => walk_expr(operand, f),
        ExprKind::Cast { expr, .. } => walk_expr(expr, f),
        ExprKind::Call { callee, args } => {
            walk_expr(callee, f);
            args.iter().for_each(|a| walk_expr(a, f));
        }
        ExprKind::Index { base, indices } => {
            walk_expr(base, f);
            indices.iter().for_each(|a| walk_expr(a, f));
        }
        ExprKind::Slice { base, lo, hi } => {
            walk_expr(base, f);
            lo.iter().chain(hi.iter()).for_each(|a| walk_expr(a, f));
        }
        ExprKind::Field { base, .. } | ExprKind::TupleField { base, .. } => walk_expr(base, f),
        ExprKind::Tuple(xs) | ExprKind::Array(xs) => xs.iter().for_each(|a| walk_expr(a, f)),
        ExprKind::ArrayRepeat { value, count } => {
            walk_expr(value, f);
            walk_expr(count, f);
        }
        ExprKind::If { cond, else_, .. } => {
            walk_expr(cond, f);
            if let Some(e) = else_ {
                walk_expr(e, f);
            }
        }
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Bool(_)
        | ExprKind::Str(_)
        | ExprKind::Path(_)
        | ExprKind::Block(_)
        | ExprKind::Error => {}
    }
}

pub fn block_has_return(b: &Block) -> bool {
    let mut x = Exits::default();
    exits_block(b, 1, &mut x);
    x.ret
}

/// Names of variables assigned in the code (the roots of assignment places), plus
/// the hidden flags that `return`/`break`/`continue` set.
pub fn assigned_stmts(stmts: &[Stmt], tail: Option<&Expr>, out: &mut Vec<String>) {
    for s in stmts {
        assigned_stmt(s, out);
    }
    if let Some(t) = tail {
        assigned_expr(t, out);
    }
}

fn add(out: &mut Vec<String>, n: &str) {
    if !out.iter().any(|x| x == n) {
        out.push(n.to_string());
    }
}

pub fn assigned_block(b: &Block, out: &mut Vec<String>) {
    assigned_stmts(&b.stmts, b.tail.as_deref(), out)
}

fn assigned_stmt(s: &Stmt, out: &mut Vec<String>) {
    match &s.kind {
        StmtKind::Let { value, .. } => assigned_expr(value, out),
        StmtKind::Assign { place, value, .. } => {
            let mut root = place;
            while let ExprKind::Index { base, .. }
            | ExprKind::Field { base, .. }
            | ExprKind::TupleField { base, .. } = &root.kind
            {
                root = base;
            }
            if let ExprKind::Path(p) = &root.kind
                && p.len() == 1
            {
                add(out, &p[0].node);
            }
            assigned_expr(place, out);
            assigned_expr(value, out);
        }
        StmtKind::Expr(e) => assigned_expr(e, out),
        StmtKind::For { lo, hi, body, .. } => {
            assigned_expr(lo, out);
            assigned_expr(hi, out);
            assigned_block(body, out);
        }
        StmtKind::While { cond, body } => {
            assigned_expr(cond, out);
            assigned_block(body, out);
        }
        StmtKind::Break => add(out, BRK_FLAG),
        StmtKind::Continue => add(out, CONT_FLAG),
        StmtKind::Return(e) => {
            add(out, RET_FLAG);
            add(out, RET_VAL);
            if let Some(e) = e {
                assigned_expr(e, out);
            }
        }
        StmtKind::Error => {}
    }
}

fn assigned_expr(e: &Expr, out: &mut Vec<String>) {
    walk_expr(e, &mut |x| match &x.kind {
        ExprKind::Block(b) => assigned_block(b, out),
        ExprKind::If { then, .. } => assigned_block(then, out),
        _ => {}
    });
}

impl FnCx<'_, '_> {
    /// The mutable locals (by position) with these names.
    pub fn carried(&self, names: &[String]) -> Vec<Pos> {
        let mut out: Vec<Pos> = Vec::new();
        for n in names {
            if let Some(p) = self.env.lookup(n)
                && self.env.get(p).mutable
                && !out.contains(&p)
            {
                out.push(p);
            }
        }
        out
    }

    fn carried_vals(&self, carried: &[Pos]) -> Vec<ValueId> {
        carried.iter().map(|&p| self.env.get(p).val).collect()
    }

    fn carried_types(&self, carried: &[Pos]) -> Vec<Type> {
        carried
            .iter()
            .map(|&p| self.env.get(p).ty.ir_type())
            .collect()
    }

    fn rebind(&mut self, carried: &[Pos], vals: &[ValueId]) {
        for (&p, &v) in carried.iter().zip(vals) {
            self.env.set(p, v);
        }
    }

    fn arm(&mut self, arm: &Arm, expected: Option<&SurfaceType>) -> Tv {
        match arm {
            Arm::Block(b) => self.block(b, expected),
            Arm::Expr(e) => self.expr(e, expected),
            Arm::Rest(stmts, tail) => {
                self.env.push();
                let r = self.stmts(stmts, *tail, expected);
                self.env.pop();
                r
            }
            Arm::Bool(b) => {
                let v = self.konst(Literal::Bool(*b));
                Tv {
                    ty: SurfaceType::Bool,
                    v,
                }
            }
            Arm::Zero | Arm::Unit => self.unit(),
        }
    }

    /// Lowers `if cond { then } else { else_ }` with the given mutable variables
    /// carried through. With `want_value`, the `If` also yields the branches' value.
    #[allow(clippy::too_many_arguments)]
    pub fn lower_if(
        &mut self,
        cond: ValueId,
        then: Arm,
        else_: Arm,
        carried: Vec<Pos>,
        expected: Option<&SurfaceType>,
        want_value: bool,
        else_span: Span,
    ) -> Tv {
        // A source `if` (set by `if_expr`), taken before the branches lower their own.
        let source_if = self.if_span.take();
        let snapshot = self.carried_vals(&carried);
        let then_first = !then.diverges() || else_.diverges();
        let (first, second) = if then_first {
            (&then, &else_)
        } else {
            (&else_, &then)
        };

        self.b.begin_region(&[]);
        let t1 = self.arm(first, expected);
        let mut y1 = if want_value { vec![t1.v] } else { vec![] };
        y1.extend(self.carried_vals(&carried));
        self.rebind(&carried, &snapshot);
        let r1 = self.b.end_region(y1);
        // `first` diverges only when both branches do (then the value is unit).

        self.b.begin_region(&[]);
        let ty = if t1.ty.is_error() {
            expected.cloned().unwrap_or(SurfaceType::Error)
        } else {
            t1.ty.clone()
        };
        let exp2 = if want_value && !first.diverges() {
            Some(ty.clone())
        } else {
            expected.cloned()
        };
        let t2 = self.arm(second, exp2.as_ref());
        let mut result_ty = ty.clone();
        let v2 = if !want_value {
            None
        } else if second.diverges() {
            Some(self.zero(&ty))
        } else {
            if !t2.ty.compatible(&ty) {
                let (then_ty, else_ty) = if then_first {
                    (ty.to_string(), t2.ty.to_string())
                } else {
                    (t2.ty.to_string(), ty.to_string())
                };
                self.error(ErrorKind::BranchMismatch { then_ty, else_ty }, else_span);
                result_ty = SurfaceType::Error;
            }
            Some(t2.v)
        };
        let mut y2: Vec<ValueId> = v2.into_iter().collect();
        y2.extend(self.carried_vals(&carried));
        self.rebind(&carried, &snapshot);
        let r2 = self.b.end_region(y2);

        // Without `else` the `then` branch must be unit.
        if matches!(else_, Arm::Unit) {
            let then_ty = if then_first { &t1.ty } else { &t2.ty };
            if !then_ty.is_unit() && !then_ty.is_error() {
                let found = then_ty.to_string();
                self.error(
                    ErrorKind::BranchMismatch {
                        then_ty: found,
                        else_ty: "() (no `else`)".into(),
                    },
                    else_span,
                );
            }
        }
        let (then_r, else_r) = if then_first { (r1, r2) } else { (r2, r1) };
        let mut types = if want_value {
            vec![result_ty.ir_type()]
        } else {
            vec![]
        };
        types.extend(self.carried_types(&carried));
        let outer = self.b.span();
        if let Some(sp) = source_if {
            self.b.set_span(sp);
        }
        let op = self
            .b
            .push_with_regions(OpKind::If, vec![cond], types, vec![then_r, else_r]);
        self.b.set_span(outer);
        let results = self.b.func.ops[op].results.clone();
        let off = usize::from(want_value);
        self.rebind(&carried, &results[off..]);
        if want_value {
            Tv {
                ty: result_ty,
                v: results[0],
            }
        } else {
            self.unit()
        }
    }

    /// `if` as an expression or statement.
    pub fn if_expr(
        &mut self,
        span: Span,
        cond: &Expr,
        then: &Block,
        else_: Option<&Expr>,
        expected: Option<&SurfaceType>,
    ) -> Tv {
        let c = self.expr(cond, Some(&SurfaceType::Bool));
        let c = self.expect(c, &SurfaceType::Bool, cond.span);
        self.if_span = Some(span);
        let mut names = Vec::new();
        assigned_block(then, &mut names);
        if let Some(e) = else_ {
            assigned_expr(e, &mut names);
        }
        let carried = self.carried(&names);
        match else_ {
            Some(e) => self.lower_if(
                c.v,
                Arm::Block(then),
                Arm::Expr(e),
                carried,
                expected,
                true,
                e.span,
            ),
            None => self.lower_if(
                c.v,
                Arm::Block(then),
                Arm::Unit,
                carried,
                None,
                false,
                then.span,
            ),
        }
    }

    /// `a && b`, `a || b`: `b` is evaluated only when needed.
    pub fn short_circuit(&mut self, and: bool, lhs: &Expr, rhs: &Expr) -> Tv {
        let a = self.expr(lhs, Some(&SurfaceType::Bool));
        let a = self.expect(a, &SurfaceType::Bool, lhs.span);
        let mut names = Vec::new();
        assigned_expr(rhs, &mut names);
        let carried = self.carried(&names);
        let bool_ty = SurfaceType::Bool;
        let t = if and {
            self.lower_if(
                a.v,
                Arm::Expr(rhs),
                Arm::Bool(false),
                carried,
                Some(&bool_ty),
                true,
                rhs.span,
            )
        } else {
            self.lower_if(
                a.v,
                Arm::Bool(true),
                Arm::Expr(rhs),
                carried,
                Some(&bool_ty),
                true,
                rhs.span,
            )
        };
        if !t.ty.compatible(&bool_ty) {
            self.error(
                ErrorKind::TypeMismatch {
                    expected: "bool".into(),
                    found: t.ty.to_string(),
                },
                rhs.span,
            );
        }
        Tv {
            ty: SurfaceType::Bool,
            v: t.v,
        }
    }

    /// The disjunction of the exit flags in scope (`None` when there are none).
    pub fn exit_flag(&mut self, include_cont: bool) -> Option<ValueId> {
        let mut names = vec![RET_FLAG, BRK_FLAG];
        if include_cont {
            names.push(CONT_FLAG);
        }
        let mut acc: Option<ValueId> = None;
        for n in names {
            if let Some(p) = self.env.lookup(n) {
                let v = self.env.get(p).val;
                acc = Some(match acc {
                    None => v,
                    Some(a) => self
                        .b
                        .push1(OpKind::Binary(BinaryOp::Or), vec![a, v], Type::BOOL),
                });
            }
        }
        acc
    }

    /// Runs the rest of a block only when no exit flag is set.
    pub fn guarded_rest(
        &mut self,
        stmts: &[Stmt],
        tail: Option<&Expr>,
        expected: Option<&SurfaceType>,
    ) -> Tv {
        let Some(flag) = self.exit_flag(true) else {
            return self.stmts(stmts, tail, expected);
        };
        let mut names = Vec::new();
        assigned_stmts(stmts, tail, &mut names);
        let carried = self.carried(&names);
        let span = stmts
            .first()
            .map(|s| s.span)
            .or(tail.map(|t| t.span))
            .unwrap_or_default();
        self.lower_if(
            flag,
            Arm::Zero,
            Arm::Rest(stmts, tail),
            carried,
            expected,
            true,
            span,
        )
    }

    fn set_flag(&mut self, name: &str) -> bool {
        match self.env.lookup(name) {
            Some(p) => {
                let t = self.konst(Literal::Bool(true));
                self.env.set(p, t);
                true
            }
            None => false,
        }
    }

    pub fn break_or_continue(&mut self, is_break: bool, span: Span) {
        if self.loops == 0 {
            let what = if is_break { "break" } else { "continue" };
            self.error(ErrorKind::OutsideLoop { what }, span);
            return;
        }
        self.set_flag(if is_break { BRK_FLAG } else { CONT_FLAG });
    }

    pub fn return_stmt(&mut self, value: Option<&Expr>, span: Span) {
        let ret = self.ret.clone();
        let tv = match value {
            Some(e) => self.expr(e, Some(&ret)),
            None => self.unit(),
        };
        if !tv.ty.compatible(&ret) {
            let sp = value.map(|e| e.span).unwrap_or(span);
            self.error(
                ErrorKind::ReturnMismatch {
                    expected: ret.to_string(),
                    found: tv.ty.to_string(),
                },
                sp,
            );
            return;
        }
        if let Some(p) = self.env.lookup(RET_VAL) {
            let v = if tv.ty.is_error() {
                self.zero(&ret)
            } else {
                tv.v
            };
            self.env.set(p, v);
        }
        self.set_flag(RET_FLAG);
    }

    /// The body of a loop iteration: a fresh `continue` flag, the user's block.
    fn loop_body(&mut self, body: &Block, exits: Exits) {
        self.loops += 1;
        self.env.push();
        if exits.cont {
            let f = self.konst(Literal::Bool(false));
            self.declare(CONT_FLAG, SurfaceType::Bool, true, f, body.span);
        }
        self.block(body, None);
        self.env.pop();
        self.loops -= 1;
    }

    pub fn while_loop(&mut self, cond: &Expr, body: &Block) {
        let mut exits = Exits::default();
        exits_block(body, 0, &mut exits);
        self.env.push();
        if exits.brk {
            let f = self.konst(Literal::Bool(false));
            self.declare(BRK_FLAG, SurfaceType::Bool, true, f, body.span);
        }
        let mut names = Vec::new();
        assigned_expr(cond, &mut names);
        assigned_block(body, &mut names);
        if exits.brk {
            add(&mut names, BRK_FLAG);
        }
        let carried = self.carried(&names);
        let init = self.carried_vals(&carried);
        let types = self.carried_types(&carried);

        let args = self.b.begin_region(&types);
        self.rebind(&carried, &args);
        let exit = if exits.brk || exits.ret {
            self.exit_flag(false)
        } else {
            None
        };
        let c = match exit {
            Some(flag) => {
                let t = self.lower_if(
                    flag,
                    Arm::Bool(false),
                    Arm::Expr(cond),
                    Vec::new(),
                    Some(&SurfaceType::Bool),
                    true,
                    cond.span,
                );
                self.expect(t, &SurfaceType::Bool, cond.span)
            }
            None => {
                let t = self.expr(cond, Some(&SurfaceType::Bool));
                self.expect(t, &SurfaceType::Bool, cond.span)
            }
        };
        let cond_r = self.b.end_region(vec![c.v]);

        let args = self.b.begin_region(&types);
        self.rebind(&carried, &args);
        self.loop_body(body, exits);
        let yields = self.carried_vals(&carried);
        let body_r = self.b.end_region(yields);

        // The loop's span (for diagnostics about the loop) is its condition.
        self.b.set_span(cond.span);
        let op = self
            .b
            .push_with_regions(OpKind::While, init, types, vec![cond_r, body_r]);
        let results = self.b.func.ops[op].results.clone();
        self.rebind(&carried, &results);
        self.env.pop();
    }

    pub fn for_loop(&mut self, var: &ast::Ident, lo: &Expr, hi: &Expr, body: &Block) {
        let lo_t = self.expr(lo, Some(&SurfaceType::I64));
        let lo_t = self.expect(lo_t, &SurfaceType::I64, lo.span);
        let hi_t = self.expr(hi, Some(&SurfaceType::I64));
        let hi_t = self.expect(hi_t, &SurfaceType::I64, hi.span);
        let mut exits = Exits::default();
        exits_block(body, 0, &mut exits);
        let mut names = Vec::new();
        assigned_block(body, &mut names);

        if !exits.brk && !exits.ret {
            let carried = self.carried(&names);
            let init = self.carried_vals(&carried);
            let types = self.carried_types(&carried);
            let mut arg_types = vec![Type::I64];
            arg_types.extend(types.iter().cloned());
            let args = self.b.begin_region(&arg_types);
            self.rebind(&carried, &args[1..]);
            self.env.push();
            let pos = self.declare(&var.node, SurfaceType::I64, false, args[0], var.span);
            self.set_role(pos, "loop variable");
            self.loop_body(body, exits);
            self.env.pop();
            let yields = self.carried_vals(&carried);
            let body_r = self.b.end_region(yields);
            let mut operands = vec![lo_t.v, hi_t.v];
            operands.extend(init);
            self.b.set_span(mad_grammar::span::Span {
                start: lo.span.start,
                end: hi.span.end,
            });
            let op = self
                .b
                .push_with_regions(OpKind::For, operands, types, vec![body_r]);
            let results = self.b.func.ops[op].results.clone();
            self.rebind(&carried, &results);
            return;
        }

        // A loop that may stop early: `while !exit && i < hi { body; i += 1 }`.
        self.env.push();
        self.declare(COUNTER, SurfaceType::I64, true, lo_t.v, var.span);
        if exits.brk {
            let f = self.konst(Literal::Bool(false));
            self.declare(BRK_FLAG, SurfaceType::Bool, true, f, body.span);
            add(&mut names, BRK_FLAG);
        }
        add(&mut names, COUNTER);
        let carried = self.carried(&names);
        let init = self.carried_vals(&carried);
        let types = self.carried_types(&carried);

        let args = self.b.begin_region(&types);
        self.rebind(&carried, &args);
        let i = self.local_val(COUNTER);
        let mut c = self
            .b
            .push1(OpKind::Binary(BinaryOp::Lt), vec![i, hi_t.v], Type::BOOL);
        if let Some(flag) = self.exit_flag(false) {
            let not = self
                .b
                .push1(OpKind::Unary(UnaryOp::Not), vec![flag], Type::BOOL);
            c = self
                .b
                .push1(OpKind::Binary(BinaryOp::And), vec![not, c], Type::BOOL);
        }
        let cond_r = self.b.end_region(vec![c]);

        let args = self.b.begin_region(&types);
        self.rebind(&carried, &args);
        let i = self.local_val(COUNTER);
        self.env.push();
        let pos = self.declare(&var.node, SurfaceType::I64, false, i, var.span);
        self.set_role(pos, "loop variable");
        self.loop_body(body, exits);
        self.env.pop();
        let one = self.i64c(1);
        let next = self
            .b
            .push1(OpKind::Binary(BinaryOp::Add), vec![i, one], Type::I64);
        if let Some(p) = self.env.lookup(COUNTER) {
            self.env.set(p, next);
        }
        let yields = self.carried_vals(&carried);
        let body_r = self.b.end_region(yields);

        self.b.set_span(mad_grammar::span::Span {
            start: lo.span.start,
            end: hi.span.end,
        });
        let op = self
            .b
            .push_with_regions(OpKind::While, init, types, vec![cond_r, body_r]);
        let results = self.b.func.ops[op].results.clone();
        self.rebind(&carried, &results);
        self.env.pop();
    }

    fn local_val(&self, name: &str) -> ValueId {
        let p = self
            .env
            .lookup(name)
            .expect("hidden local declared by the loop lowering");
        self.env.get(p).val
    }
}
