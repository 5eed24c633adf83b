//! Operators and casts: their typing rules (lang-decisions "Semantics of
//! operators") and their IR (`Binary`, `Unary`, `MatMul`, `Cast`), including
//! the adaptation of numeric literals to the other operand's kind.

use super::{FnCx, Tv};
use crate::front::diagnostics::ErrorKind;
use crate::front::types::SurfaceType;
use crate::ir::{BinaryOp, OpKind, ScalarKind, Type, UnaryOp};
use mad_grammar::ast::{BinOp, Expr, ExprKind, TypeExpr, UnOp};
use mad_grammar::span::Span;

/// A numeric literal, possibly negated or combined with other literals: its type
/// is decided by its context.
pub fn is_literal(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Int(_) | ExprKind::Float(_) => true,
        ExprKind::Unary {
            op: UnOp::Neg,
            operand,
        } => is_literal(operand),
        ExprKind::Binary { op, lhs, rhs } => is_arith(*op) && is_literal(lhs) && is_literal(rhs),
        _ => false,
    }
}

/// Whether a literal expression contains a float literal.
pub fn has_float_literal(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Float(_) => true,
        ExprKind::Unary { operand, .. } => has_float_literal(operand),
        ExprKind::Binary { lhs, rhs, .. } => has_float_literal(lhs) || has_float_literal(rhs),
        _ => false,
    }
}

fn is_arith(op: BinOp) -> bool {
    matches!(
        op,
        BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem | BinOp::Pow
    )
}

pub fn symbol(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::Rem => "%",
        BinOp::Pow => "^",
        BinOp::Eq => "==",
        BinOp::Ne => "!=",
        BinOp::Lt => "<",
        BinOp::Le => "<=",
        BinOp::Gt => ">",
        BinOp::Ge => ">=",
        BinOp::And => "&&",
        BinOp::Or => "||",
    }
}

/// The IR op of a surface binary operator.
pub fn ir_op(op: BinOp) -> BinaryOp {
    match op {
        BinOp::Add => BinaryOp::Add,
        BinOp::Sub => BinaryOp::Sub,
        BinOp::Mul => BinaryOp::Mul,
        BinOp::Div => BinaryOp::Div,
        BinOp::Rem => BinaryOp::Rem,
        BinOp::Pow => BinaryOp::Pow,
        BinOp::Eq => BinaryOp::Eq,
        BinOp::Ne => BinaryOp::Ne,
        BinOp::Lt => BinaryOp::Lt,
        BinOp::Le => BinaryOp::Le,
        BinOp::Gt => BinaryOp::Gt,
        BinOp::Ge => BinaryOp::Ge,
        BinOp::And => BinaryOp::And,
        BinOp::Or => BinaryOp::Or,
    }
}

/// The scalar type a literal adapts to next to a value of type `t`.
pub fn literal_hint(t: &SurfaceType) -> Option<SurfaceType> {
    match t.elem_kind()? {
        ScalarKind::Bool => None,
        k => Some(SurfaceType::from_scalar(k)),
    }
}

impl FnCx<'_, '_> {
    pub fn binary_expr(
        &mut self,
        op: BinOp,
        lhs: &Expr,
        rhs: &Expr,
        span: Span,
        expected: Option<&SurfaceType>,
    ) -> Tv {
        if matches!(op, BinOp::And | BinOp::Or) {
            return self.short_circuit(op == BinOp::And, lhs, rhs);
        }
        let scalar_expected = expected.filter(|t| t.is_number() && is_arith(op));
        let (a, b) = match (is_literal(lhs), is_literal(rhs)) {
            (true, true) => {
                let hint = scalar_expected.cloned().or_else(|| {
                    (has_float_literal(lhs) || has_float_literal(rhs)).then_some(SurfaceType::F64)
                });
                let a = self.expr(lhs, hint.as_ref());
                let b = self.expr(rhs, hint.as_ref());
                (a, b)
            }
            (true, false) => {
                let b = self.expr(
                    rhs,
                    if op == BinOp::Pow {
                        None
                    } else {
                        scalar_expected
                    },
                );
                let a = self.expr(lhs, literal_hint(&b.ty).as_ref());
                (a, b)
            }
            (false, true) => {
                let a = self.expr(lhs, scalar_expected);
                let b = self.expr(rhs, literal_hint(&a.ty).as_ref());
                (a, b)
            }
            (false, false) => {
                let a = self.expr(lhs, scalar_expected);
                let b = self.expr(
                    rhs,
                    if op == BinOp::Pow {
                        None
                    } else {
                        scalar_expected
                    },
                );
                (a, b)
            }
        };
        self.b.set_span(span);
        self.binary_tv(op, a, b, span)
    }

    /// `lhs op rhs` where `lhs` is already lowered (compound assignment).
    pub fn binary_with_lhs(&mut self, op: BinOp, lhs: Tv, rhs: &Expr, span: Span) -> Tv {
        let hint = if is_literal(rhs) {
            literal_hint(&lhs.ty)
        } else {
            None
        };
        let b = self.expr(rhs, hint.as_ref());
        self.b.set_span(span);
        self.binary_tv(op, lhs, b, span)
    }

    fn bad_operands(&mut self, op: BinOp, a: &SurfaceType, b: &SurfaceType, span: Span) -> Tv {
        let help = match (op, a, b) {
            (BinOp::Mul, SurfaceType::Vec(_), SurfaceType::Vec(_))
            | (BinOp::Mul, SurfaceType::Vector, SurfaceType::Vector)
            | (BinOp::Mul, SurfaceType::Array(..), SurfaceType::Array(..)) => Some(
                "use dot(a, b) for the inner product or hadamard(a, b) for the elementwise product"
                    .to_string(),
            ),
            (_, x, y) if x.is_number() && y.is_number() => {
                let o = symbol(op);
                Some(format!(
                    "convert one operand with `as`: `lhs {o} (rhs as {x})` or `(lhs as {y}) {o} rhs`"
                ))
            }
            _ => None,
        };
        self.error(
            ErrorKind::BadOperands {
                op: symbol(op).to_string(),
                lhs: a.to_string(),
                rhs: Some(b.to_string()),
                help,
            },
            span,
        );
        let ty = if op.is_comparison_like() {
            SurfaceType::Bool
        } else {
            SurfaceType::Error
        };
        let v = self.poison().v;
        Tv { ty, v }
    }

    fn emit(&mut self, op: BinaryOp, a: &Tv, b: &Tv, ty: SurfaceType) -> Tv {
        let v = self.b.push1(OpKind::Binary(op), vec![a.v, b.v], ty.ir_type());
        Tv { ty, v }
    }

    /// Types and lowers `a op b` on lowered operands.
    pub fn binary_tv(&mut self, op: BinOp, a: Tv, b: Tv, span: Span) -> Tv {
        use SurfaceType as S;
        if a.ty.is_error() || b.ty.is_error() {
            let v = self.poison().v;
            let ty = if op.is_comparison_like() {
                S::Bool
            } else {
                S::Error
            };
            return Tv { ty, v };
        }
        let numeric_tensor =
            |t: &S| t.is_tensor() && matches!(t.elem_kind(), Some(k) if k != ScalarKind::Bool);
        let broadcast =
            |s: &S, t: &S| s.is_number() && numeric_tensor(t) && s.scalar() == t.elem_kind();
        match op {
            BinOp::Add | BinOp::Sub => {
                if (a.ty.is_number() || numeric_tensor(&a.ty)) && a.ty.compatible(&b.ty) {
                    let ty = a.ty.clone();
                    return self.emit(ir_op(op), &a, &b, ty);
                }
            }
            BinOp::Mul => {
                if a.ty.is_number() && a.ty == b.ty {
                    let ty = a.ty.clone();
                    return self.emit(BinaryOp::Mul, &a, &b, ty);
                }
                if broadcast(&a.ty, &b.ty) {
                    let ty = b.ty.clone();
                    return self.emit(BinaryOp::Mul, &a, &b, ty);
                }
                if broadcast(&b.ty, &a.ty) {
                    let ty = a.ty.clone();
                    return self.emit(BinaryOp::Mul, &a, &b, ty);
                }
                let prod = match (&a.ty, &b.ty) {
                    (S::Mat(r, k1), S::Mat(k2, c)) if k1 == k2 => Some(S::Mat(*r, *c)),
                    (S::Mat(r, k), S::Vec(n)) if *k == *n => Some(if *r >= 2 {
                        S::Vec(*r)
                    } else {
                        S::Array(Box::new(S::F64), *r as u64)
                    }),
                    (S::Matrix, S::Matrix) => Some(S::Matrix),
                    (S::Matrix, S::Vector) => Some(S::Vector),
                    _ => None,
                };
                if let Some(ty) = prod {
                    let v = self.b.push1(OpKind::MatMul, vec![a.v, b.v], ty.ir_type());
                    return Tv { ty, v };
                }
            }
            BinOp::Div => {
                if a.ty.is_number() && a.ty == b.ty {
                    let ty = a.ty.clone();
                    return self.emit(BinaryOp::Div, &a, &b, ty);
                }
                if broadcast(&b.ty, &a.ty) {
                    let ty = a.ty.clone();
                    return self.emit(BinaryOp::Div, &a, &b, ty);
                }
            }
            BinOp::Rem => {
                if a.ty.is_number() && a.ty == b.ty {
                    let ty = a.ty.clone();
                    return self.emit(BinaryOp::Rem, &a, &b, ty);
                }
            }
            BinOp::Pow => {
                if a.ty.is_number() && a.ty == b.ty {
                    let ty = a.ty.clone();
                    return self.emit(BinaryOp::Pow, &a, &b, ty);
                }
                if a.ty.is_float() && b.ty == S::I64 {
                    let k = a.ty.scalar().unwrap_or(ScalarKind::F64);
                    let e = self.b.push1(OpKind::Cast(k), vec![b.v], Type::Scalar(k));
                    let ty = a.ty.clone();
                    return self.emit(
                        BinaryOp::Pow,
                        &a,
                        &Tv {
                            ty: a.ty.clone(),
                            v: e,
                        },
                        ty,
                    );
                }
            }
            BinOp::Eq | BinOp::Ne => {
                if (a.ty.is_number() || a.ty == S::Bool) && a.ty == b.ty {
                    return self.emit(ir_op(op), &a, &b, S::Bool);
                }
            }
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                if a.ty.is_number() && a.ty == b.ty {
                    return self.emit(ir_op(op), &a, &b, S::Bool);
                }
            }
            BinOp::And | BinOp::Or => {
                if a.ty == S::Bool && b.ty == S::Bool {
                    return self.emit(ir_op(op), &a, &b, S::Bool);
                }
            }
        }
        let (at, bt) = (a.ty.clone(), b.ty.clone());
        self.bad_operands(op, &at, &bt, span)
    }

    pub fn unary_expr(
        &mut self,
        op: UnOp,
        operand: &Expr,
        span: Span,
        expected: Option<&SurfaceType>,
    ) -> Tv {
        let exp = if op == UnOp::Neg {
            expected
        } else {
            Some(&SurfaceType::Bool)
        };
        let x = self.expr(operand, exp);
        if x.ty.is_error() {
            return x;
        }
        self.b.set_span(span);
        let ok = match op {
            UnOp::Neg => {
                x.ty.is_number() || (x.ty.is_tensor() && x.ty.elem_kind() != Some(ScalarKind::Bool))
            }
            UnOp::Not => x.ty == SurfaceType::Bool,
        };
        if !ok {
            let sym = if op == UnOp::Neg { "-" } else { "!" };
            self.error(
                ErrorKind::BadOperands {
                    op: sym.into(),
                    lhs: x.ty.to_string(),
                    rhs: None,
                    help: None,
                },
                span,
            );
            return self.poison();
        }
        let uop = if op == UnOp::Neg {
            UnaryOp::Neg
        } else {
            UnaryOp::Not
        };
        let v = self.b.push1(OpKind::Unary(uop), vec![x.v], x.ty.ir_type());
        Tv { ty: x.ty, v }
    }

    pub fn cast_expr(&mut self, inner: &Expr, ty: &TypeExpr, span: Span) -> Tv {
        let target = self.g.items.resolve_type(ty, self.file);
        let x = self.expr(inner, None);
        if x.ty.is_error() || target.is_error() {
            return Tv { ty: target, v: x.v };
        }
        let scalar_ok = |from: ScalarKind, to: ScalarKind| {
            from == to
                || (from != ScalarKind::Bool && to != ScalarKind::Bool)
                || to == ScalarKind::I64
        };
        let ok = match (x.ty.ir_type(), target.ir_type()) {
            (Type::Scalar(from), Type::Scalar(to)) => {
                x.ty.scalar().is_some() && scalar_ok(from, to)
            }
            // Elementwise between tensors of the same shape.
            (
                Type::Tensor {
                    elem: from,
                    shape: sa,
                },
                Type::Tensor {
                    elem: to,
                    shape: sb,
                },
            ) => x.ty.is_tensor() && target.is_tensor() && sa == sb && scalar_ok(from, to),
            _ => false,
        };
        if !ok {
            self.error(
                ErrorKind::BadCast {
                    from: x.ty.to_string(),
                    to: target.to_string(),
                },
                span,
            );
            let v = self.poison().v;
            return Tv { ty: target, v };
        }
        if x.ty == target {
            return x;
        }
        self.b.set_span(span);
        let k = target.elem_kind().unwrap_or(ScalarKind::F64);
        let v = self.b.push1(OpKind::Cast(k), vec![x.v], target.ir_type());
        Tv { ty: target, v }
    }
}

trait ComparisonLike {
    fn is_comparison_like(&self) -> bool;
}

impl ComparisonLike for BinOp {
    fn is_comparison_like(&self) -> bool {
        matches!(
            self,
            BinOp::Eq
                | BinOp::Ne
                | BinOp::Lt
                | BinOp::Le
                | BinOp::Gt
                | BinOp::Ge
                | BinOp::And
                | BinOp::Or
        )
    }
}
