//! Compile-time evaluation of `const` items and array lengths: scalar literals,
//! other constants, unary and binary operators and casts. Uses of a constant are
//! inlined as an IR `Const`.

use super::Front;
use crate::front::diagnostics::ErrorKind;
use crate::front::items::{Def, ModId};
use crate::front::types::SurfaceType;
use crate::ir::{Literal, ScalarKind};
use mad_grammar::ast::{BinOp, Expr, ExprKind, UnOp};
use mad_runtime::BinaryOp;

fn to_f64(l: Literal) -> f64 {
    match l {
        Literal::F64(x) => x,
        Literal::F32(x) => x as f64,
        Literal::I64(x) => x as f64,
        Literal::Bool(b) => b as i64 as f64,
    }
}

fn cast(l: Literal, k: ScalarKind) -> Literal {
    match k {
        ScalarKind::F64 => Literal::F64(to_f64(l)),
        ScalarKind::F32 => Literal::F32(match l {
            Literal::F32(x) => x,
            other => to_f64(other) as f32,
        }),
        ScalarKind::I64 => Literal::I64(match l {
            Literal::I64(x) => x,
            Literal::Bool(b) => b as i64,
            other => to_f64(other) as i64,
        }),
        ScalarKind::Bool => l,
    }
}

impl Front {
    /// The value of `const` item `idx` (evaluated once; `None` after an error).
    pub fn const_value(&mut self, idx: usize) -> Option<Literal> {
        if let Some(v) = self.const_values.get(&idx) {
            return *v;
        }
        let c = &self.items.consts[idx];
        let (file, module, span, value, ty) =
            (c.file, c.module, c.span, c.value.clone(), c.ty.clone());
        if self.const_stack.contains(&idx) {
            let name = self.items.qualified(Def::Const(idx));
            self.error(
                ErrorKind::ConstFails {
                    detail: format!("`{name}` is defined in terms of itself (a cycle of constants)"),
                },
                file,
                span,
            );
            return None;
        }
        self.const_stack.push(idx);
        let kind = ty.scalar();
        if kind.is_none() && !ty.is_error() {
            self.error(
                ErrorKind::TypeMismatch {
                    expected: "a scalar type (f64, f32, i64, bool)".into(),
                    found: ty.to_string(),
                },
                file,
                span,
            );
        }
        let v = kind
            .and_then(|k| self.eval_const(&value, Some(k), file, module))
            .and_then(|l| {
                let found = SurfaceType::from_scalar(l.kind());
                if Some(l.kind()) != kind {
                    self.error(
                        ErrorKind::TypeMismatch {
                            expected: ty.to_string(),
                            found: found.to_string(),
                        },
                        file,
                        value.span,
                    );
                    None
                } else {
                    Some(l)
                }
            });
        self.const_stack.pop();
        self.const_values.insert(idx, v);
        v
    }

    /// Evaluates a constant expression; integer literals adapt to a float `expected`.
    pub fn eval_const(
        &mut self,
        e: &Expr,
        expected: Option<ScalarKind>,
        file: usize,
        module: ModId,
    ) -> Option<Literal> {
        let not_const = |g: &mut Front| {
            g.error(ErrorKind::NotConstant { what: "this value" }, file, e.span);
            None
        };
        match &e.kind {
            ExprKind::Int(n) => Some(match expected {
                Some(ScalarKind::F64) => Literal::F64(*n as f64),
                Some(ScalarKind::F32) => Literal::F32(*n as f32),
                _ => Literal::I64(*n),
            }),
            ExprKind::Float(x) => match expected {
                Some(ScalarKind::F32) if x.single.is_infinite() => {
                    self.error(super::expr::f32_overflow(), file, e.span);
                    None
                }
                Some(ScalarKind::F32) => Some(Literal::F32(x.single)),
                _ => Some(Literal::F64(x.value)),
            },
            ExprKind::Bool(b) => Some(Literal::Bool(*b)),
            ExprKind::Path(p) => match self.items.lookup_path(module, p).map(|d| self.items.value_def(&d)) {
                Some(Ok(Def::Const(i))) => self.const_value(i),
                Some(Err(candidates)) => {
                    let name = p.iter().map(|i| i.node.as_str()).collect::<Vec<_>>().join("::");
                    self.error(ErrorKind::AmbiguousName { name, candidates }, file, e.span);
                    None
                }
                _ => not_const(self),
            },
            ExprKind::Unary { op, operand } => {
                let v = self.eval_const(operand, expected, file, module)?;
                match (op, v) {
                    (UnOp::Neg, Literal::F64(x)) => Some(Literal::F64(-x)),
                    (UnOp::Neg, Literal::F32(x)) => Some(Literal::F32(-x)),
                    (UnOp::Neg, Literal::I64(x)) => Some(Literal::I64(x.wrapping_neg())),
                    (UnOp::Not, Literal::Bool(b)) => Some(Literal::Bool(!b)),
                    _ => not_const(self),
                }
            }
            ExprKind::Cast { expr, ty } => {
                let t = self.items.resolve_type(ty, file);
                let v = self.eval_const(expr, None, file, module)?;
                match t.scalar() {
                    Some(k) if k != ScalarKind::Bool => Some(cast(v, k)),
                    _ => not_const(self),
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let cmp = matches!(
                    op,
                    BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
                );
                let exp = if cmp || matches!(op, BinOp::And | BinOp::Or) {
                    None
                } else {
                    expected
                };
                let mut a = self.eval_const(lhs, exp, file, module)?;
                let mut b = self.eval_const(rhs, exp.or(Some(a.kind())), file, module)?;
                // An integer literal next to a float adapts to it.
                if a.kind() == ScalarKind::I64
                    && b.kind().is_float()
                    && matches!(lhs.kind, ExprKind::Int(_))
                {
                    a = cast(a, b.kind());
                }
                if *op == BinOp::Pow && a.kind().is_float() && b.kind() == ScalarKind::I64 {
                    b = cast(b, a.kind());
                }
                let bad_operands = |g: &mut Front| {
                    let name = |l: Literal| SurfaceType::from_scalar(l.kind()).to_string();
                    let kind = ErrorKind::BadOperands {
                        op: super::ops::symbol(*op).to_string(),
                        lhs: name(a),
                        rhs: Some(name(b)),
                        help: None,
                    };
                    g.error(kind, file, e.span);
                    None
                };
                if a.kind() != b.kind() {
                    return bad_operands(self);
                }
                let bop = super::ops::ir_op(*op);
                match (a, b) {
                    (Literal::Bool(x), Literal::Bool(y)) => match bop {
                        BinaryOp::And => Some(Literal::Bool(x && y)),
                        BinaryOp::Or => Some(Literal::Bool(x || y)),
                        BinaryOp::Eq => Some(Literal::Bool(x == y)),
                        BinaryOp::Ne => Some(Literal::Bool(x != y)),
                        _ => bad_operands(self),
                    },
                    (Literal::I64(x), Literal::I64(y)) if bop.is_comparison() => {
                        Some(Literal::Bool(bop.cmp_i64(x, y)))
                    }
                    (Literal::I64(x), Literal::I64(y)) if !bop.is_logical() => {
                        match bop.i64(x, y) {
                            Ok(v) => Some(Literal::I64(v)),
                            Err(err) => {
                                self.error(ErrorKind::ConstFails { detail: err.to_string() }, file, e.span);
                                None
                            }
                        }
                    }
                    (x, y) if x.kind().is_float() && bop.is_comparison() => {
                        Some(Literal::Bool(bop.cmp_f64(to_f64(x), to_f64(y))))
                    }
                    (Literal::F64(x), Literal::F64(y)) if !bop.is_logical() => {
                        Some(Literal::F64(bop.f64(x, y)))
                    }
                    (Literal::F32(x), Literal::F32(y)) if !bop.is_logical() => {
                        Some(Literal::F32(bop.f32(x, y)))
                    }
                    _ => bad_operands(self),
                }
            }
            _ => not_const(self),
        }
    }
}
