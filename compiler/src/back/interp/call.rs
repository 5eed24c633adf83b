//! Calls: argument checking against a function's signature, the call-depth limit,
//! and running a function body in a fresh frame.

use super::Machine;
use super::frame::Frame;
use crate::ir::{Dim, FuncRef, Function, Type};
use mad_runtime::{RtError, Value};

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
            for (axis, (&n, d)) in x.shape.iter().zip(shape).enumerate() {
                match d {
                    Dim::Fixed(m) if *m != n as u64 => return Err(format!("expected {t}, axis {axis} has extent {n}")),
                    Dim::Sym(name) => match syms.iter().find(|(s, _)| s == name) {
                        Some((_, m)) if *m != n => {
                            return Err(format!("expected {t}, but {name} is {m} elsewhere and {n} on axis {axis}"));
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
        return Err(format!("`{}` takes {} argument(s), {} given", func.name, params.len(), args.len()));
    }
    let mut syms = SymBindings::new();
    for (i, (a, &p)) in args.iter().zip(params).enumerate() {
        check_value(a, func.ty(p), &mut syms).map_err(|m| format!("`{}` argument {i}: {m}", func.name))?;
    }
    Ok(())
}

impl Machine<'_> {
    /// Runs `f` on `args` (whose shapes are checked against its signature).
    pub(super) fn call_function(&mut self, f: FuncRef, args: Vec<Value>) -> Result<Value, RtError> {
        let module = self.module;
        let func = module.functions.get(f).ok_or_else(|| RtError::Other(format!("function #{} does not exist", f.index())))?;
        check_args(func, &args).map_err(RtError::ShapeMismatch)?;
        if self.depth >= self.max_depth {
            return Err(RtError::RecursionLimit);
        }
        self.depth += 1;
        let result = self.run_body(func, args);
        self.depth -= 1;
        result
    }

    fn run_body(&mut self, func: &Function, args: Vec<Value>) -> Result<Value, RtError> {
        let mut frame = Frame::new(func.values.len());
        frame.set_all(func.params(), args)?;
        let mut yields = self.run_region(func, &mut frame, &func.body)?;
        match yields.len() {
            1 => Ok(yields.pop().unwrap_or(Value::UNIT)),
            n => Err(RtError::Other(format!("`{}` yields {n} values, a function returns one", func.name))),
        }
    }
}
