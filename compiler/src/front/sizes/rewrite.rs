//! Writing out one instance of a size-generic function (see [`super`]): the sizes put
//! into type names, size variables as integer literals, and `for` loops over literal
//! ranges unrolled.
//!
//! An unrolled loop `for i in a..b { body }` becomes, for each `k` from `a` to `b - 1`, the
//! block statement `{ let i = k; body }`: the same scoping and the same values as the loop,
//! as straight-line code. A loop whose body can leave it (`break`, `continue`, `return`),
//! or that runs more than [`MAX_UNROLL`] times, stays a loop.

use super::Sizes;
use crate::front::lower::control::{Exits, exits_block};
use mad_grammar::ast::{
    Block, Expr, ExprKind, FnDecl, Param, Pattern, Stmt, StmtKind, TypeExpr, TypeExprKind,
};
use mad_grammar::span::Spanned;

/// The most trips of a loop that is unrolled.
pub const MAX_UNROLL: i64 = 256;

/// The function `decl` with the sizes `sizes` written in.
pub fn instantiate(decl: &FnDecl, sizes: &Sizes) -> FnDecl {
    let r = Rewriter { sizes };
    FnDecl {
        name: decl.name.clone(),
        params: decl
            .params
            .iter()
            .map(|p| Param {
                name: p.name.clone(),
                ty: r.ty(&p.ty),
                span: p.span,
            })
            .collect(),
        ret: decl.ret.as_ref().map(|t| r.ty(t)),
        body: r.block(&decl.body),
    }
}

/// A type with the sizes put into its names.
pub fn type_expr(t: &TypeExpr, sizes: &Sizes) -> TypeExpr {
    Rewriter { sizes }.ty(t)
}

struct Rewriter<'s> {
    sizes: &'s Sizes,
}

/// The value of an integer expression made of literals, `+`, `-` and `*`.
fn const_int(e: &Expr) -> Option<i64> {
    use mad_grammar::ast::{BinOp, UnOp};
    match &e.kind {
        ExprKind::Int(n) => Some(*n),
        ExprKind::Unary {
            op: UnOp::Neg,
            operand,
        } => const_int(operand)?.checked_neg(),
        ExprKind::Binary { op, lhs, rhs } => {
            let (a, b) = (const_int(lhs)?, const_int(rhs)?);
            match op {
                BinOp::Add => a.checked_add(b),
                BinOp::Sub => a.checked_sub(b),
                BinOp::Mul => a.checked_mul(b),
                _ => None,
            }
        }
        _ => None,
    }
}

impl Rewriter<'_> {
    fn name(&self, name: &str) -> String {
        self.sizes.type_name(name).unwrap_or_else(|| name.to_string())
    }

    fn ty(&self, t: &TypeExpr) -> TypeExpr {
        let kind = match &t.kind {
            TypeExprKind::Named(n) => TypeExprKind::Named(self.name(n)),
            TypeExprKind::Array(e, n) => TypeExprKind::Array(Box::new(self.ty(e)), *n),
            TypeExprKind::Slice(e) => TypeExprKind::Slice(Box::new(self.ty(e))),
            TypeExprKind::Tuple(ts) => TypeExprKind::Tuple(ts.iter().map(|t| self.ty(t)).collect()),
        };
        TypeExpr { kind, span: t.span }
    }

    fn block(&self, b: &Block) -> Block {
        let mut stmts = Vec::new();
        for s in &b.stmts {
            self.stmt(s, &mut stmts);
        }
        Block {
            stmts,
            tail: b.tail.as_ref().map(|t| Box::new(self.expr(t))),
            span: b.span,
        }
    }

    fn stmt(&self, s: &Stmt, out: &mut Vec<Stmt>) {
        let kind = match &s.kind {
            StmtKind::Let {
                pat,
                mutable,
                ty,
                value,
            } => StmtKind::Let {
                pat: pat.clone(),
                mutable: *mutable,
                ty: ty.as_ref().map(|t| self.ty(t)),
                value: self.expr(value),
            },
            StmtKind::Assign { place, op, value } => StmtKind::Assign {
                place: self.expr(place),
                op: *op,
                value: self.expr(value),
            },
            StmtKind::Expr(e) => StmtKind::Expr(self.expr(e)),
            StmtKind::For { var, lo, hi, body } => {
                let (lo, hi) = (self.expr(lo), self.expr(hi));
                let mut exits = Exits::default();
                exits_block(body, 0, &mut exits);
                match (const_int(&lo), const_int(&hi)) {
                    (Some(a), Some(b)) if !exits.any() && b.saturating_sub(a) <= MAX_UNROLL => {
                        let body = self.block(body);
                        for k in a..b {
                            out.push(unrolled_trip(var, k, &body, s));
                        }
                        return;
                    }
                    _ => StmtKind::For {
                        var: var.clone(),
                        lo,
                        hi,
                        body: self.block(body),
                    },
                }
            }
            StmtKind::While { cond, body } => StmtKind::While {
                cond: self.expr(cond),
                body: self.block(body),
            },
            StmtKind::Return(e) => StmtKind::Return(e.as_ref().map(|e| self.expr(e))),
            StmtKind::Break => StmtKind::Break,
            StmtKind::Continue => StmtKind::Continue,
            StmtKind::Error => StmtKind::Error,
        };
        out.push(Stmt { kind, span: s.span });
    }

    fn exprs(&self, es: &[Expr]) -> Vec<Expr> {
        es.iter().map(|e| self.expr(e)).collect()
    }

    fn boxed(&self, e: &Expr) -> Box<Expr> {
        Box::new(self.expr(e))
    }

    fn expr(&self, e: &Expr) -> Expr {
        let kind = match &e.kind {
            ExprKind::Path(p) if p.len() == 1 && self.sizes.value(&p[0].node).is_some() => {
                ExprKind::Int(self.sizes.value(&p[0].node).map_or(0, i64::from))
            }
            ExprKind::Path(p) => ExprKind::Path(
                p.iter()
                    .enumerate()
                    .map(|(i, seg)| match i {
                        0 => Spanned::new(self.name(&seg.node), seg.span),
                        _ => seg.clone(),
                    })
                    .collect(),
            ),
            ExprKind::Binary { op, lhs, rhs } => ExprKind::Binary {
                op: *op,
                lhs: self.boxed(lhs),
                rhs: self.boxed(rhs),
            },
            ExprKind::Unary { op, operand } => ExprKind::Unary {
                op: *op,
                operand: self.boxed(operand),
            },
            ExprKind::Cast { expr, ty } => ExprKind::Cast {
                expr: self.boxed(expr),
                ty: self.ty(ty),
            },
            ExprKind::Call { callee, args } => ExprKind::Call {
                callee: self.boxed(callee),
                args: self.exprs(args),
            },
            ExprKind::Index { base, indices } => ExprKind::Index {
                base: self.boxed(base),
                indices: self.exprs(indices),
            },
            ExprKind::Slice { base, lo, hi } => ExprKind::Slice {
                base: self.boxed(base),
                lo: lo.as_deref().map(|e| self.boxed(e)),
                hi: hi.as_deref().map(|e| self.boxed(e)),
            },
            ExprKind::Field { base, name } => ExprKind::Field {
                base: self.boxed(base),
                name: name.clone(),
            },
            ExprKind::TupleField {
                base,
                index,
                index_span,
            } => ExprKind::TupleField {
                base: self.boxed(base),
                index: *index,
                index_span: *index_span,
            },
            ExprKind::Tuple(xs) => ExprKind::Tuple(self.exprs(xs)),
            ExprKind::Array(xs) => ExprKind::Array(self.exprs(xs)),
            ExprKind::ArrayRepeat { value, count } => ExprKind::ArrayRepeat {
                value: self.boxed(value),
                count: self.boxed(count),
            },
            ExprKind::Block(b) => ExprKind::Block(self.block(b)),
            ExprKind::If { cond, then, else_ } => ExprKind::If {
                cond: self.boxed(cond),
                then: self.block(then),
                else_: else_.as_ref().map(|x| self.boxed(x)),
            },
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::Str(_)
            | ExprKind::Error => e.kind.clone(),
        };
        Expr { kind, span: e.span }
    }
}

/// One trip of an unrolled loop: `{ let var = k; body }` as a statement.
fn unrolled_trip(var: &Spanned<String>, k: i64, body: &Block, at: &Stmt) -> Stmt {
    let bind = Stmt {
        kind: StmtKind::Let {
            pat: Pattern::Name(var.clone()),
            mutable: false,
            ty: None,
            value: Expr {
                kind: ExprKind::Int(k),
                span: var.span,
            },
        },
        span: var.span,
    };
    let mut stmts = vec![bind];
    stmts.extend(body.stmts.iter().cloned());
    let block = Block {
        stmts,
        tail: body.tail.clone(),
        span: body.span,
    };
    Stmt {
        kind: StmtKind::Expr(Expr {
            kind: ExprKind::Block(block),
            span: at.span,
        }),
        span: at.span,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instance(src: &str, sizes: Sizes) -> FnDecl {
        let (file, diags) = mad_grammar::parse(src, 0);
        assert!(diags.is_empty(), "{diags:?}");
        match file.items.into_iter().next().map(|i| i.kind) {
            Some(mad_grammar::ast::ItemKind::Fn(d)) => instantiate(&d, &sizes),
            _ => panic!("a function"),
        }
    }

    #[test]
    fn sizes_are_written_in_and_loops_unrolled() {
        let d = instance(
            "fn f(m: matN) -> vecN { let z = [0.0; N]; for i in 1..N - 1 { let x = m[i, i]; } matN::identity()[0] }",
            Sizes(vec![('N', 4)]),
        );
        assert_eq!(d.params[0].ty.kind, TypeExprKind::Named("mat4".into()));
        assert_eq!(d.ret.unwrap().kind, TypeExprKind::Named("vec4".into()));
        let StmtKind::Let { value, .. } = &d.body.stmts[0].kind else {
            panic!("a let")
        };
        let ExprKind::ArrayRepeat { count, .. } = &value.kind else {
            panic!("a repeat")
        };
        assert_eq!(count.kind, ExprKind::Int(4));
        // `1..3`: two trips, each a block binding `i`.
        assert_eq!(d.body.stmts.len(), 3);
        for (s, k) in d.body.stmts[1..].iter().zip(1..) {
            let StmtKind::Expr(Expr {
                kind: ExprKind::Block(b),
                ..
            }) = &s.kind
            else {
                panic!("a block statement")
            };
            let StmtKind::Let { value, .. } = &b.stmts[0].kind else {
                panic!("the loop variable")
            };
            assert_eq!(value.kind, ExprKind::Int(k));
        }
        let tail = d.body.tail.unwrap();
        let ExprKind::Index { base, .. } = &tail.kind else {
            panic!("an index")
        };
        let ExprKind::Call { callee, .. } = &base.kind else {
            panic!("a call")
        };
        let ExprKind::Path(p) = &callee.kind else {
            panic!("a path")
        };
        assert_eq!(p[0].node, "mat4");
    }

    #[test]
    fn loops_that_can_leave_early_stay_loops() {
        let d = instance(
            "fn f(v: vecN) -> f64 { let mut s = 0.0; for i in 0..N { if v[i] < 0.0 { break; } s += v[i]; } s }",
            Sizes(vec![('N', 3)]),
        );
        assert!(matches!(d.body.stmts[1].kind, StmtKind::For { .. }));
    }
}
