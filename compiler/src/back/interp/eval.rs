//! One op: reads its operands from the frame, computes, binds its results.

use super::frame::Frame;
use super::{Machine, elementwise as ew, tensor};
use crate::back::ErrorSite;
use crate::ir::{Function, Literal, OpId, OpKind};
use mad_runtime::{RtError, Value};

impl Machine<'_> {
    pub(super) fn eval_op(
        &mut self,
        func: &Function,
        frame: &mut Frame,
        id: OpId,
    ) -> Result<(), RtError> {
        let op = func
            .ops
            .get(id)
            .ok_or_else(|| RtError::Other(format!("op #{} does not exist", id.index())))?;
        let operands = frame.get_all(&op.operands)?;
        let results = match &op.kind {
            OpKind::If => self.eval_if(func, frame, op, operands)?,
            OpKind::For => self.eval_for(func, frame, op, operands)?,
            OpKind::While => self.eval_while(func, frame, op, operands)?,
            OpKind::Call(f) => vec![
                self.call_function(*f, operands)
                    .inspect_err(|_| self.note_site(func, id))?,
            ],
            OpKind::Print => vec![self.print(&operands)?],
            OpKind::TapePush => {
                self.tape_push(func, op, &operands)?;
                Vec::new()
            }
            OpKind::TapePop => self.tape_pop(func, op)?,
            OpKind::PrintStr(s) => {
                writeln!(self.out, "{s}").map_err(|e| RtError::Other(format!("print: {e}")))?;
                vec![Value::UNIT]
            }
            kind => vec![simple(kind, &operands).inspect_err(|_| self.note_site(func, id))?],
        };
        frame.set_all(&op.results, results)
    }

    /// Records where the first error happened (the innermost op with a source).
    fn note_site(&mut self, func: &Function, id: OpId) {
        let span = func.span(id);
        if self.site.is_none()
            && span != Default::default()
            && let Some(file) = func.source_file
        {
            self.site = Some(ErrorSite { file, span });
        }
    }

    fn print(&mut self, operands: &[Value]) -> Result<Value, RtError> {
        let [v] = operands else {
            return Err(arity("print", 1, operands.len()));
        };
        writeln!(self.out, "{v}").map_err(|e| RtError::Other(format!("print: {e}")))?;
        Ok(Value::UNIT)
    }
}

fn arity(name: &str, want: usize, found: usize) -> RtError {
    RtError::Other(format!("`{name}` takes {want} operand(s), found {found}"))
}

/// Ops without regions, calls or effects.
fn simple(kind: &OpKind, xs: &[Value]) -> Result<Value, RtError> {
    let name = kind.name();
    let need = |n: usize| {
        if xs.len() == n {
            Ok(())
        } else {
            Err(arity(name, n, xs.len()))
        }
    };
    let at_least = |n: usize| {
        if xs.len() >= n {
            Ok(())
        } else {
            Err(arity(name, n, xs.len()))
        }
    };
    match kind {
        OpKind::Const(lit) => Ok(match *lit {
            Literal::F64(x) => Value::F64(x),
            Literal::F32(x) => Value::F32(x),
            Literal::I64(x) => Value::I64(x),
            Literal::Bool(x) => Value::Bool(x),
        }),
        OpKind::Unary(u) => {
            need(1)?;
            ew::unary(*u, &xs[0])
        }
        OpKind::Binary(b) => {
            need(2)?;
            ew::binary(*b, &xs[0], &xs[1])
        }
        OpKind::Select => {
            need(3)?;
            ew::select(&xs[0], &xs[1], &xs[2])
        }
        OpKind::Cast(k) => {
            need(1)?;
            ew::cast(&xs[0], *k)
        }
        OpKind::Pack => tensor::pack(xs),
        OpKind::Full => {
            at_least(1)?;
            tensor::full(&xs[0], &xs[1..])
        }
        OpKind::Extract(i) => {
            need(1)?;
            tensor::extract(&xs[0], *i)
        }
        OpKind::Index => {
            at_least(2)?;
            tensor::index(&xs[0], &xs[1..])
        }
        OpKind::Insert => {
            at_least(3)?;
            tensor::insert(&xs[0], &xs[1], &xs[2..])
        }
        OpKind::DimOf(axis) => {
            need(1)?;
            tensor::dim(&xs[0], *axis)
        }
        OpKind::MatMul => {
            need(2)?;
            tensor::matmul(&xs[0], &xs[1])
        }
        OpKind::Transpose => {
            need(1)?;
            tensor::transpose(&xs[0])
        }
        OpKind::Sum => {
            need(1)?;
            tensor::sum(&xs[0])
        }
        OpKind::Tuple => Ok(Value::Tuple(xs.to_vec())),
        OpKind::TupleGet(i) => {
            need(1)?;
            match &xs[0] {
                Value::Tuple(items) => items
                    .get(*i as usize)
                    .cloned()
                    .ok_or(RtError::BadOperand("tuple.get")),
                _ => Err(RtError::BadOperand("tuple.get")),
            }
        }
        OpKind::Call(_)
        | OpKind::Print
        | OpKind::PrintStr(_)
        | OpKind::If
        | OpKind::For
        | OpKind::While
        | OpKind::TapePush
        | OpKind::TapePop => Err(RtError::Other(format!("`{name}` is not a simple op"))),
    }
}
