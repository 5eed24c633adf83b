//! Elementwise ops: `Unary`, `Binary` (with scalar broadcast), `Select`, `Cast`.
//!
//! Scalar semantics come from [`mad_runtime::ops`] (shared with the JIT): f32
//! comparisons compare exactly in f64; comparisons give `bool`; integer ops wrap and
//! report division by zero.

use mad_runtime::{BinaryOp, RtError, ScalarKind, Tensor, TensorData, UnaryOp, Value};

pub fn unary(op: UnaryOp, x: &Value) -> Result<Value, RtError> {
    match x {
        Value::Tensor(t) => {
            let kind = t.kind();
            let data = map_data(&t.data, kind, |e| unary_scalar(op, e))?;
            Ok(Value::Tensor(Tensor {
                shape: t.shape.clone(),
                data,
            }))
        }
        scalar => unary_scalar(op, scalar),
    }
}

fn unary_scalar(op: UnaryOp, x: &Value) -> Result<Value, RtError> {
    let bad = || RtError::BadOperand(op.name());
    match (op, x) {
        (UnaryOp::Not, Value::Bool(b)) => Ok(Value::Bool(!b)),
        (UnaryOp::Not, _) | (_, Value::Bool(_)) => Err(bad()),
        (_, Value::F64(a)) => Ok(Value::F64(op.f64(*a))),
        (_, Value::F32(a)) => Ok(Value::F32(op.f32(*a))),
        (_, Value::I64(a)) => Ok(Value::I64(op.i64(*a)?)),
        _ => Err(bad()),
    }
}

pub fn binary(op: BinaryOp, a: &Value, b: &Value) -> Result<Value, RtError> {
    match (a, b) {
        (Value::Tensor(ta), Value::Tensor(tb)) => {
            if ta.shape != tb.shape {
                return Err(RtError::ShapeMismatch(format!(
                    "`{}` of operands of shapes {:?} and {:?}",
                    op.source_form(),
                    ta.shape,
                    tb.shape
                )));
            }
            let values = (0..ta.data.len())
                .map(|i| binary_scalar(op, &ta.data.get(i), &tb.data.get(i)))
                .collect::<Result<Vec<_>, _>>()?;
            tensor_result(op, ta, values)
        }
        (Value::Tensor(t), s) => {
            let values = (0..t.data.len())
                .map(|i| binary_scalar(op, &t.data.get(i), s))
                .collect::<Result<Vec<_>, _>>()?;
            tensor_result(op, t, values)
        }
        (s, Value::Tensor(t)) => {
            let values = (0..t.data.len())
                .map(|i| binary_scalar(op, s, &t.data.get(i)))
                .collect::<Result<Vec<_>, _>>()?;
            tensor_result(op, t, values)
        }
        (x, y) => binary_scalar(op, x, y),
    }
}

fn tensor_result(op: BinaryOp, like: &Tensor, values: Vec<Value>) -> Result<Value, RtError> {
    let kind = if op.is_comparison() {
        ScalarKind::Bool
    } else {
        like.kind()
    };
    let data = data_from_scalars(kind, &values)?;
    Ok(Value::Tensor(Tensor {
        shape: like.shape.clone(),
        data,
    }))
}

pub fn binary_scalar(op: BinaryOp, a: &Value, b: &Value) -> Result<Value, RtError> {
    let bad = || RtError::BadOperand(op.name());
    Ok(match (a, b) {
        (Value::F64(x), Value::F64(y)) => {
            if op.is_comparison() {
                Value::Bool(op.cmp_f64(*x, *y))
            } else if op.is_logical() {
                return Err(bad());
            } else {
                Value::F64(op.f64(*x, *y))
            }
        }
        (Value::F32(x), Value::F32(y)) => {
            if op.is_comparison() {
                Value::Bool(op.cmp_f64(*x as f64, *y as f64))
            } else if op.is_logical() {
                return Err(bad());
            } else {
                Value::F32(op.f32(*x, *y))
            }
        }
        (Value::I64(x), Value::I64(y)) => {
            if op.is_comparison() {
                Value::Bool(op.cmp_i64(*x, *y))
            } else {
                Value::I64(op.i64(*x, *y)?)
            }
        }
        (Value::Bool(x), Value::Bool(y)) => match op {
            BinaryOp::And => Value::Bool(*x && *y),
            BinaryOp::Or => Value::Bool(*x || *y),
            BinaryOp::Eq => Value::Bool(x == y),
            BinaryOp::Ne => Value::Bool(x != y),
            _ => return Err(bad()),
        },
        _ => return Err(bad()),
    })
}

pub fn select(cond: &Value, a: &Value, b: &Value) -> Result<Value, RtError> {
    match cond {
        Value::Bool(true) => Ok(a.clone()),
        Value::Bool(false) => Ok(b.clone()),
        Value::Tensor(c) => match (a, b) {
            (Value::Tensor(a), Value::Tensor(b)) => mad_runtime::jit::tensor::select_elements(c, a, b).map(Value::Tensor),
            _ => Err(RtError::BadOperand("select")),
        },
        _ => Err(RtError::BadOperand("select")),
    }
}

/// Converts like Rust's `as`: float → int truncates toward zero and saturates, NaN → 0.
pub fn cast(x: &Value, to: ScalarKind) -> Result<Value, RtError> {
    match x {
        Value::Tensor(t) => {
            let data = map_data(&t.data, to, |e| cast_scalar(e, to))?;
            Ok(Value::Tensor(Tensor {
                shape: t.shape.clone(),
                data,
            }))
        }
        s => cast_scalar(s, to),
    }
}

fn cast_scalar(x: &Value, to: ScalarKind) -> Result<Value, RtError> {
    let bad = || RtError::BadOperand("cast");
    Ok(match (to, x) {
        (ScalarKind::F64, Value::F64(a)) => Value::F64(*a),
        (ScalarKind::F64, Value::F32(a)) => Value::F64(*a as f64),
        (ScalarKind::F64, Value::I64(a)) => Value::F64(*a as f64),
        (ScalarKind::F32, Value::F64(a)) => Value::F32(*a as f32),
        (ScalarKind::F32, Value::F32(a)) => Value::F32(*a),
        (ScalarKind::F32, Value::I64(a)) => Value::F32(*a as f32),
        (ScalarKind::I64, Value::F64(a)) => Value::I64(*a as i64),
        (ScalarKind::I64, Value::F32(a)) => Value::I64(*a as i64),
        (ScalarKind::I64, Value::I64(a)) => Value::I64(*a),
        (ScalarKind::I64, Value::Bool(a)) => Value::I64(*a as i64),
        _ => return Err(bad()),
    })
}

fn kind_mismatch(what: &str) -> RtError {
    RtError::ShapeMismatch(format!("{what}: element kinds differ"))
}

/// A tensor's data from scalar values of `kind`.
fn data_from_scalars(kind: ScalarKind, values: &[Value]) -> Result<TensorData, RtError> {
    macro_rules! collect {
        ($variant:ident) => {
            TensorData::$variant(
                values
                    .iter()
                    .map(|v| match v {
                        Value::$variant(x) => Ok(*x),
                        _ => Err(kind_mismatch("tensor elements")),
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            )
        };
    }
    Ok(match kind {
        ScalarKind::F64 => collect!(F64),
        ScalarKind::F32 => collect!(F32),
        ScalarKind::I64 => collect!(I64),
        ScalarKind::Bool => collect!(Bool),
    })
}

/// Applies `f` to every element; the results must be scalars of `out`.
fn map_data(
    data: &TensorData,
    out: ScalarKind,
    f: impl Fn(&Value) -> Result<Value, RtError>,
) -> Result<TensorData, RtError> {
    let values = (0..data.len())
        .map(|i| f(&data.get(i)))
        .collect::<Result<Vec<_>, _>>()?;
    data_from_scalars(out, &values)
}
