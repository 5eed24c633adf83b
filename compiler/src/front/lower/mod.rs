//! Type checking and lowering of function bodies to IR, in one walk over the AST.
//!
//! Each expression is checked against its context and lowered to SSA values with
//! [`crate::ir::Builder`] at the same time. Errors are recorded and the expression
//! gets the poison type [`SurfaceType::Error`], which is compatible with
//! everything, so one error does not cascade. When any error was found the IR is
//! discarded, so poisoned values only need to keep the builder consistent.
//!
//! - [`env`](mod@env): local scopes; mutable variables are SSA values rebound on assignment.
//! - [`stmt`]: blocks, `let`, assignment to variables and their elements.
//! - [`expr`]: literals, names, fields, indexing, tuples, arrays, constructors.
//! - [`ops`]: operators and casts. [`call`]: calls and overloads. [`builtins`]: builtin functions.
//! - [`control`]: `if`, `&&`/`||`, `for`, `while`, and `break`/`continue`/`return` as
//!   flag variables carried through structured control flow.
//! - [`consts`]: compile-time evaluation of `const` items and array lengths.
//! - [`term`]: reads of mesh fields inside energy and residual bodies.
//! - [`diff`]: the differentiation operators `grad jvp vjp hessian jacobian` at call sites.

pub mod builtins;
pub mod call;
pub mod consts;
pub mod control;
pub mod diff;
pub mod dynlit;
pub mod env;
pub mod expr;
pub mod ops;
pub mod shape_ops;
pub mod stmt;
pub mod term;

use super::diagnostics::{ErrorKind, FrontError};
use super::items::{Items, ModId};
use super::types::SurfaceType;
use crate::ir::{
    self, Builder, Dim, FuncRef, Function, Literal, OpKind, ScalarKind, Type, ValueId,
};
use env::{Env, Local};
use mad_grammar::ast;
use mad_grammar::span::Span;
use std::collections::HashMap;

/// A typed, lowered value.
#[derive(Clone, Debug)]
pub struct Tv {
    pub ty: SurfaceType,
    pub v: ValueId,
}

/// State shared by all function bodies of one compilation.
pub struct Front {
    pub items: Items,
    pub module: ir::Module,
    /// Functions whose FuncRef was handed out but whose body is not lowered yet.
    pub worklist: Vec<usize>,
    /// Evaluated `const` items (`None` after an error).
    pub const_values: HashMap<usize, Option<Literal>>,
    /// `const` items being evaluated (to detect cycles).
    pub const_stack: Vec<usize>,
    /// The placeholder function of each differentiation-operator application.
    pub derivs: HashMap<diff::DerivKey, FuncRef>,
    /// Placeholders whose bodies [`crate::front::derive`] still has to generate.
    pub pending_derivs: Vec<diff::PendingDeriv>,
    /// Defects found while generating derivatives (reported as compiler bugs).
    pub bugs: Vec<String>,
}

impl Front {
    pub fn new(items: Items) -> Front {
        Front {
            items,
            module: ir::Module::new(),
            worklist: Vec::new(),
            const_values: HashMap::new(),
            const_stack: Vec::new(),
            derivs: HashMap::new(),
            pending_derivs: Vec::new(),
            bugs: Vec::new(),
        }
    }

    pub fn error(&mut self, kind: ErrorKind, file: usize, span: Span) {
        self.items.errors.push(FrontError { kind, file, span });
    }

    /// The function's FuncRef; the first request adds a placeholder and queues its body.
    pub fn fref(&mut self, idx: usize) -> FuncRef {
        if let Some(f) = self.items.fns[idx].fref {
            return f;
        }
        let it = &self.items.fns[idx];
        let params: Vec<Type> = it.params.iter().map(SurfaceType::ir_type).collect();
        let mut f = Function::new(it.ir_name.clone(), &params, it.ret.ir_type());
        f.source_file = Some(it.file);
        let r = self.module.add_function(f);
        self.items.fns[idx].fref = Some(r);
        self.worklist.push(idx);
        r
    }

    /// Lowers every queued function body (and those they call).
    pub fn drain(&mut self) {
        while let Some(idx) = self.worklist.pop() {
            lower_fn(self, idx);
        }
    }
}

/// The element a term body is evaluated on (see [`term`]).
pub use term::TermCx;

/// The per-function lowering context.
pub struct FnCx<'a, 'f> {
    pub g: &'a mut Front,
    pub b: Builder<&'f mut Function>,
    pub file: usize,
    pub module: ModId,
    pub env: Env,
    /// The declared return type of the function being lowered.
    pub ret: SurfaceType,
    /// How many loops enclose the current point.
    pub loops: usize,
    /// Set inside energy and residual bodies.
    pub term: Option<TermCx>,
    /// The span of the source `if` expression whose `scf.if` is being lowered next: that
    /// op gets it (the `if` keyword first), so tools such as `madc explain` can tell it from
    /// the `scf.if`s that `&&`, `||`, `return`, `break` and `continue` lower to.
    pub if_span: Option<Span>,
}

impl<'a, 'f> FnCx<'a, 'f> {
    pub fn new(
        g: &'a mut Front,
        func: &'f mut Function,
        file: usize,
        module: ModId,
        ret: SurfaceType,
    ) -> Self {
        let mut env = Env::default();
        env.push();
        FnCx {
            g,
            b: Builder::new(func),
            file,
            module,
            env,
            ret,
            loops: 0,
            term: None,
            if_span: None,
        }
    }

    pub fn error(&mut self, kind: ErrorKind, span: Span) {
        self.g.error(kind, self.file, span);
    }

    pub fn unit(&mut self) -> Tv {
        let v = self.b.push1(OpKind::Tuple, vec![], Type::unit());
        Tv {
            ty: SurfaceType::unit(),
            v,
        }
    }

    /// A value of the error type.
    pub fn poison(&mut self) -> Tv {
        let v = self.b.push1(OpKind::Tuple, vec![], Type::unit());
        Tv {
            ty: SurfaceType::Error,
            v,
        }
    }

    pub fn konst(&mut self, lit: Literal) -> ValueId {
        self.b.constant(lit)
    }

    pub fn i64c(&mut self, n: i64) -> ValueId {
        self.b.constant(Literal::I64(n))
    }

    /// A value of the given type: zero, `false`, empty dynamic tensors, tuples of those.
    /// Used on paths that are never taken (after `return`, `break`).
    pub fn zero(&mut self, ty: &SurfaceType) -> ValueId {
        let irt = ty.ir_type();
        self.zero_ir(&irt)
    }

    fn zero_ir(&mut self, t: &Type) -> ValueId {
        match t {
            Type::Scalar(k) => self.konst(zero_lit(*k)),
            Type::Tensor { elem, shape } => {
                let mut ops = vec![self.konst(zero_lit(*elem))];
                for d in shape {
                    let n = match d {
                        Dim::Fixed(n) => *n as i64,
                        _ => 0,
                    };
                    ops.push(self.i64c(n));
                }
                self.b.push1(OpKind::Full, ops, t.clone())
            }
            Type::Tuple(items) => {
                let vals = items.iter().map(|t| self.zero_ir(t)).collect();
                self.b.push1(OpKind::Tuple, vals, t.clone())
            }
        }
    }

    /// Checks that `tv` has the expected type; reports E0101 at `span` otherwise.
    pub fn expect(&mut self, tv: Tv, expected: &SurfaceType, span: Span) -> Tv {
        if !tv.ty.compatible(expected) {
            self.error(
                ErrorKind::TypeMismatch {
                    expected: expected.to_string(),
                    found: tv.ty.to_string(),
                },
                span,
            );
            return Tv {
                ty: expected.clone(),
                v: tv.v,
            };
        }
        if tv.ty.is_error() {
            return Tv {
                ty: expected.clone(),
                v: tv.v,
            };
        }
        tv
    }

    pub fn declare(
        &mut self,
        name: &str,
        ty: SurfaceType,
        mutable: bool,
        val: ValueId,
        span: Span,
    ) -> env::Pos {
        self.env.declare(Local {
            name: name.to_string(),
            ty,
            mutable,
            val,
            span,
            role: "variable",
        })
    }

    /// Names the role of the local just declared at `pos` (a parameter, a loop variable),
    /// for the message of an assignment to it.
    pub fn set_role(&mut self, pos: env::Pos, role: &'static str) {
        self.env.get_mut(pos).role = role;
    }
}

pub fn zero_lit(k: ScalarKind) -> Literal {
    match k {
        ScalarKind::F64 => Literal::F64(0.0),
        ScalarKind::F32 => Literal::F32(0.0),
        ScalarKind::I64 => Literal::I64(0),
        ScalarKind::Bool => Literal::Bool(false),
    }
}

/// Reads `@ad(tape)` / `@ad(sct)` and reports unknown attributes.
fn ad_mode(g: &mut Front, attrs: &[ast::Attribute], file: usize) -> Option<ir::AdMode> {
    let mut mode = None;
    for a in attrs {
        if a.name.node != "ad" {
            let help = Some("the only attribute is `@ad(tape)` or `@ad(sct)`".to_string());
            g.error(
                ErrorKind::UnknownAttribute {
                    name: a.name.node.clone(),
                    help,
                },
                file,
                a.span,
            );
            continue;
        }
        let args = a.args.iter().map(|i| i.node.as_str()).collect::<Vec<_>>();
        if mode.is_some() && matches!(args.as_slice(), ["tape"] | ["sct"]) {
            g.error(ErrorKind::RepeatedAttribute { name: "ad(...)".to_string() }, file, a.span);
            continue;
        }
        match args.as_slice() {
            ["tape"] => mode = Some(ir::AdMode::Tape),
            ["sct"] => mode = Some(ir::AdMode::Sct),
            _ => {
                let found = if a.args.is_empty() { "@ad".to_string() } else { format!("@ad({})", args.join(", ")) };
                g.error(ErrorKind::BadAttributeArguments { name: "ad".to_string(), found }, file, a.span);
            }
        }
    }
    mode
}

/// Lowers the body of function `idx` into its placeholder in the module.
fn lower_fn(g: &mut Front, idx: usize) {
    let Some(fref) = g.items.fns[idx].fref else {
        return;
    };
    let it = &g.items.fns[idx];
    let (decl, params, ret, file, module, attrs) = (
        it.body_decl(),
        it.params.clone(),
        it.ret.clone(),
        it.file,
        it.module,
        it.attrs.clone(),
    );
    let mut func = std::mem::replace(
        &mut g.module.functions[fref],
        Function::new("", &[], Type::unit()),
    );
    func.ad_mode = ad_mode(g, &attrs, file);
    let args = func.params().to_vec();
    {
        let mut cx = FnCx::new(g, &mut func, file, module, ret.clone());
        cx.report_duplicates(decl.params.iter().map(|p| (p.name.node.as_str(), p.name.span)));
        for ((p, ty), v) in decl.params.iter().zip(&params).zip(args) {
            let pos = cx.declare(&p.name.node, ty.clone(), false, v, p.name.span);
            cx.set_role(pos, "parameter");
        }
        let v = cx.function_body(&decl.body, &ret);
        cx.b.finish(vec![v]);
    }
    g.module.functions[fref] = func;
}

impl FnCx<'_, '_> {
    /// Lowers a function (or term) body, returning the value it yields.
    pub fn function_body(&mut self, body: &ast::Block, ret: &SurfaceType) -> ValueId {
        let has_return = control::block_has_return(body);
        if has_return {
            let f = self.konst(Literal::Bool(false));
            self.declare(control::RET_FLAG, SurfaceType::Bool, true, f, body.span);
            let z = self.zero(ret);
            self.declare(control::RET_VAL, ret.clone(), true, z, body.span);
        }
        let tv = self.block(body, Some(ret));
        let diverges = control::block_diverges(body);
        let mut v = tv.v;
        if !diverges && !tv.ty.compatible(ret) {
            let span = body.tail.as_ref().map(|t| t.span).unwrap_or(body.span);
            self.error(
                ErrorKind::ReturnMismatch {
                    expected: ret.to_string(),
                    found: tv.ty.to_string(),
                },
                span,
            );
        }
        if diverges || !tv.ty.compatible(ret) || tv.ty.is_error() {
            v = self.zero(ret);
        }
        if has_return {
            let flag = self
                .env
                .lookup(control::RET_FLAG)
                .map(|p| self.env.get(p).val);
            let rv = self
                .env
                .lookup(control::RET_VAL)
                .map(|p| self.env.get(p).val);
            if let (Some(flag), Some(rv)) = (flag, rv) {
                let t = ret.ir_type();
                self.b.begin_region(&[]);
                let then = self.b.end_region(vec![rv]);
                self.b.begin_region(&[]);
                let els = self.b.end_region(vec![v]);
                let op = self
                    .b
                    .push_with_regions(OpKind::If, vec![flag], vec![t], vec![then, els]);
                v = self.b.func.ops[op].results[0];
            }
        }
        v
    }
}
