//! Whether run-time values fit a function's parameter types: what every back end checks
//! before a call from the host.

use mad_runtime::Value;

use super::{Dim, Function, Type};

/// Extents bound to symbolic dimension names during one signature check.
type SymBindings = Vec<(String, usize)>;

/// Whether `v` is a value of type `t`: same structure and kinds, fixed extents equal,
/// a symbolic extent equal wherever its name occurs in one signature.
fn check_value(v: &Value, t: &Type, syms: &mut SymBindings) -> Result<(), String> {
    let describe = || format!("expected {t}, found {}", value_kind(v));
    match (v, t) {
        (Value::Tensor(x), Type::Tensor { elem, shape }) => {
            if x.kind() != *elem || x.shape.len() != shape.len() {
                return Err(describe());
            }
            if x.shape
                .iter()
                .try_fold(1usize, |acc, &n| acc.checked_mul(n))
                != Some(x.data.len())
            {
                return Err(format!(
                    "a tensor of shape {:?} holds {} elements",
                    x.shape,
                    x.data.len()
                ));
            }
            for (axis, (&n, d)) in x.shape.iter().zip(shape).enumerate() {
                match d {
                    Dim::Fixed(m) if *m != n as u64 => {
                        return Err(format!("expected {t}, axis {axis} has extent {n}"));
                    }
                    Dim::Sym(name) => match syms.iter().find(|(s, _)| s == name) {
                        Some((_, m)) if *m != n => {
                            return Err(format!(
                                "expected {t}, but {name} is {m} elsewhere and {n} on axis {axis}"
                            ));
                        }
                        Some(_) => {}
                        None => syms.push((name.clone(), n)),
                    },
                    _ => {}
                }
            }
            Ok(())
        }
        (Value::Tuple(xs), Type::Tuple(ts)) if xs.len() == ts.len() => {
            for (x, t) in xs.iter().zip(ts) {
                check_value(x, t, syms)?;
            }
            Ok(())
        }
        (Value::F64(_), Type::Scalar(mad_runtime::ScalarKind::F64))
        | (Value::F32(_), Type::Scalar(mad_runtime::ScalarKind::F32))
        | (Value::I64(_), Type::Scalar(mad_runtime::ScalarKind::I64))
        | (Value::Bool(_), Type::Scalar(mad_runtime::ScalarKind::Bool)) => Ok(()),
        _ => Err(describe()),
    }
}

/// A short description of a value's type, for messages.
fn value_kind(v: &Value) -> String {
    match v {
        Value::F64(_) => "f64".into(),
        Value::F32(_) => "f32".into(),
        Value::I64(_) => "i64".into(),
        Value::Bool(_) => "bool".into(),
        Value::Tensor(t) => format!("a {} tensor of shape {:?}", t.kind().name(), t.shape),
        Value::Tuple(xs) => format!("a tuple of {} values", xs.len()),
    }
}

/// Checks `args` against `func`'s parameters; the message names the argument.
pub fn check_args(func: &Function, args: &[Value]) -> Result<(), String> {
    let params = func.params();
    if params.len() != args.len() {
        return Err(format!(
            "`{}` takes {} argument(s), {} given",
            func.name,
            params.len(),
            args.len()
        ));
    }
    let mut syms = SymBindings::new();
    for (i, (a, &p)) in args.iter().zip(params).enumerate() {
        check_value(a, func.ty(p), &mut syms)
            .map_err(|m| format!("`{}` argument {i}: {m}", func.name))?;
    }
    Ok(())
}
