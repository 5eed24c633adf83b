//! Scalar semantics on [`Value`]s: the elementwise ops, comparisons and casts
//! exactly as compiled code computes them, built on [`crate::ops`].
//!
//! The JIT inlines most of these with machine instructions; the heap-tensor
//! routines apply these functions element by element, so both paths agree.

use crate::ops::{BinaryOp, RtError, UnaryOp};
use crate::value::{ScalarKind, Value};

/// `op x` on a scalar.
pub fn unary(op: UnaryOp, x: &Value) -> Result<Value, RtError> {
    match *x {
        Value::F64(x) if op != UnaryOp::Not => Ok(Value::F64(op.f64(x))),
        Value::F32(x) if op != UnaryOp::Not => Ok(Value::F32(op.f32(x))),
        Value::I64(x) => op.i64(x).map(Value::I64),
        Value::Bool(b) if op == UnaryOp::Not => Ok(Value::Bool(!b)),
        _ => Err(RtError::BadOperand(op.name())),
    }
}

/// `a op b` on two scalars of one kind.
pub fn binary(op: BinaryOp, a: &Value, b: &Value) -> Result<Value, RtError> {
    let bad = || RtError::BadOperand(op.name());
    match (a, b) {
        (&Value::F64(a), &Value::F64(b)) if op.is_comparison() => Ok(Value::Bool(op.cmp_f64(a, b))),
        (&Value::F64(a), &Value::F64(b)) if !op.is_logical() => Ok(Value::F64(op.f64(a, b))),
        (&Value::F32(a), &Value::F32(b)) if op.is_comparison() => {
            Ok(Value::Bool(op.cmp_f64(a as f64, b as f64)))
        }
        (&Value::F32(a), &Value::F32(b)) if !op.is_logical() => Ok(Value::F32(op.f32(a, b))),
        (&Value::I64(a), &Value::I64(b)) if op.is_comparison() => Ok(Value::Bool(op.cmp_i64(a, b))),
        (&Value::I64(a), &Value::I64(b)) if !op.is_logical() && !op.float_only() => {
            op.i64(a, b).map(Value::I64)
        }
        (&Value::Bool(a), &Value::Bool(b)) => match op {
            BinaryOp::And => Ok(Value::Bool(a && b)),
            BinaryOp::Or => Ok(Value::Bool(a || b)),
            BinaryOp::Eq => Ok(Value::Bool(a == b)),
            BinaryOp::Ne => Ok(Value::Bool(a != b)),
            _ => Err(bad()),
        },
        _ => Err(bad()),
    }
}

/// `x as k`: Rust's `as` between numbers (float to int saturates, NaN gives 0);
/// `bool` converts to `i64` only (0 or 1); nothing converts to `bool`.
pub fn cast(x: &Value, k: ScalarKind) -> Result<Value, RtError> {
    Ok(match (k, x) {
        (ScalarKind::F64, &Value::F64(x)) => Value::F64(x),
        (ScalarKind::F64, &Value::F32(x)) => Value::F64(x as f64),
        (ScalarKind::F64, &Value::I64(x)) => Value::F64(x as f64),
        (ScalarKind::F32, &Value::F64(x)) => Value::F32(x as f32),
        (ScalarKind::F32, &Value::F32(x)) => Value::F32(x),
        (ScalarKind::F32, &Value::I64(x)) => Value::F32(x as f32),
        (ScalarKind::I64, &Value::F64(x)) => Value::I64(x as i64),
        (ScalarKind::I64, &Value::F32(x)) => Value::I64(x as i64),
        (ScalarKind::I64, &Value::I64(x)) => Value::I64(x),
        (ScalarKind::I64, &Value::Bool(b)) => Value::I64(b as i64),
        _ => return Err(RtError::BadOperand("cast")),
    })
}

/// The zero of a kind (`false` for `bool`).
pub fn zero(k: ScalarKind) -> Value {
    match k {
        ScalarKind::F64 => Value::F64(0.0),
        ScalarKind::F32 => Value::F32(0.0),
        ScalarKind::I64 => Value::I64(0),
        ScalarKind::Bool => Value::Bool(false),
    }
}

/// The kind of a scalar value.
pub fn kind_of(v: &Value) -> Option<ScalarKind> {
    match v {
        &Value::F64(_) => Some(ScalarKind::F64),
        &Value::F32(_) => Some(ScalarKind::F32),
        &Value::I64(_) => Some(ScalarKind::I64),
        &Value::Bool(_) => Some(ScalarKind::Bool),
        Value::Tensor(_) | Value::Tuple(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_division_by_zero_is_an_error() {
        assert_eq!(
            binary(BinaryOp::Div, &Value::I64(1), &Value::I64(0)),
            Err(RtError::DivByZero)
        );
        assert_eq!(
            binary(BinaryOp::Div, &Value::I64(i64::MIN), &Value::I64(-1)),
            Ok(Value::I64(i64::MIN))
        );
    }

    #[test]
    fn casts_follow_rust_as() {
        assert_eq!(
            cast(&Value::F64(f64::NAN), ScalarKind::I64),
            Ok(Value::I64(0))
        );
        assert_eq!(
            cast(&Value::F64(1e300), ScalarKind::I64),
            Ok(Value::I64(i64::MAX))
        );
        assert_eq!(cast(&Value::Bool(true), ScalarKind::I64), Ok(Value::I64(1)));
        assert!(cast(&Value::Bool(true), ScalarKind::F32).is_err());
        assert!(cast(&Value::I64(-3), ScalarKind::Bool).is_err());
    }

    #[test]
    fn bool_logic_and_bad_operands() {
        assert_eq!(
            binary(BinaryOp::And, &Value::Bool(true), &Value::Bool(false)),
            Ok(Value::Bool(false))
        );
        assert_eq!(
            binary(BinaryOp::Ne, &Value::Bool(false), &Value::Bool(true)),
            Ok(Value::Bool(true))
        );
        assert!(binary(BinaryOp::Lt, &Value::Bool(false), &Value::Bool(true)).is_err());
        assert!(binary(BinaryOp::Add, &Value::Bool(true), &Value::Bool(false)).is_err());
        assert!(unary(UnaryOp::Sqrt, &Value::I64(4)).is_err());
    }
}
