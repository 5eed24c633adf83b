//! One op: reads its operands from the frame, computes, binds its results.

use super::frame::Frame;
use super::{Machine, elementwise as ew};
use mad_runtime::jit::layout::Arg;
use mad_runtime::jit::tensor::TensorOp;
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
        let results = match &op.kind {
            OpKind::If => {
                let operands = frame.get_all(&op.operands)?;
                self.eval_if(func, frame, op, operands)?
            }
            OpKind::For => {
                let operands = self.for_operands(frame, id, op)?;
                self.eval_for(func, frame, op, operands)?
            }
            OpKind::While => {
                let operands = frame.get_all(&op.operands)?;
                self.eval_while(func, frame, op, operands)?
            }
            OpKind::Call(f) => {
                let operands = frame.get_all(&op.operands)?;
                vec![self.call_function(*f, operands).inspect_err(|_| self.note_site(func, id))?]
            }
            OpKind::Print => {
                let operands = frame.get_refs(&op.operands)?;
                let printed = self.print(&operands);
                vec![printed?]
            }
            OpKind::TapePush => {
                let operands = frame.get_all(&op.operands)?;
                self.tape_push(func, op, &operands)?;
                Vec::new()
            }
            OpKind::Insert if frame.inplace.inserts.contains(&id) => {
                vec![insert_in_place(frame, &op.operands).inspect_err(|_| self.note_site(func, id))?]
            }
            OpKind::TapePop => self.tape_pop(func, op)?,
            OpKind::PrintStr(s) => {
                writeln!(self.out, "{s}").map_err(|e| RtError::Other(format!("print: {e}")))?;
                vec![Value::UNIT]
            }
            kind => {
                let operands = frame.get_refs(&op.operands)?;
                let value = simple(kind, &operands);
                vec![value.inspect_err(|_| self.note_site(func, id))?]
            }
        };
        frame.set_all(&op.results, results)
    }

    /// The operands of `scf.for` `id`: the init of a carried slot that an enclosing loop
    /// updates in place is moved (it is dead after the loop), the others are copied.
    fn for_operands(&self, frame: &mut Frame, id: OpId, op: &crate::ir::Op) -> Result<Vec<Value>, RtError> {
        let inplace = frame.inplace.clone();
        op.operands
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                if i >= 2 && inplace.moved_inits.contains(&(id, i - 2)) {
                    frame.take(v)
                } else {
                    frame.get(v).cloned()
                }
            })
            .collect()
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

    fn print(&mut self, operands: &[&Value]) -> Result<Value, RtError> {
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

/// An insert the in-place analysis allows to write into its operand: the operand (dead
/// after it) is taken from the frame and written, with the copying insert's checks.
fn insert_in_place(frame: &mut Frame, operands: &[crate::ir::ValueId]) -> Result<Value, RtError> {
    let [t, value, idx @ ..] = operands else {
        return Err(arity("tensor.insert", 3, operands.len()));
    };
    let idx: Vec<i64> = idx
        .iter()
        .map(|&i| frame.get(i)?.as_i64().ok_or(RtError::BadOperand("tensor.insert")))
        .collect::<Result<_, _>>()?;
    let value = match frame.get(*value)? {
        Value::Tensor(v) => Arg::Tensor(std::borrow::Cow::Owned(v.clone())),
        v => Arg::Scalar(v.clone()),
    };
    let mut target = frame.take(*t)?;
    let written = match &mut target {
        Value::Tensor(tensor) => mad_runtime::jit::tensor::insert_into(tensor, &value, &idx),
        _ => Err(RtError::BadOperand("tensor.insert")),
    };
    written.map(|()| target)
}

/// Ops without regions, calls or effects.
fn simple(kind: &OpKind, xs: &[&Value]) -> Result<Value, RtError> {
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
            ew::unary(*u, xs[0])
        }
        OpKind::Binary(b) => {
            need(2)?;
            ew::binary(*b, xs[0], xs[1])
        }
        OpKind::Select => {
            need(3)?;
            ew::select(xs[0], xs[1], xs[2])
        }
        OpKind::Cast(k) => {
            need(1)?;
            ew::cast(xs[0], *k)
        }
        OpKind::Pack => shared(TensorOp::Pack, xs),
        OpKind::Full => {
            at_least(1)?;
            shared(TensorOp::Full, xs)
        }
        OpKind::Extract(i) => {
            need(1)?;
            shared(TensorOp::Extract(*i), xs)
        }
        OpKind::Index => {
            at_least(2)?;
            shared(TensorOp::Index, xs)
        }
        OpKind::Insert => {
            at_least(3)?;
            shared(TensorOp::Insert, xs)
        }
        OpKind::DimOf(axis) => {
            need(1)?;
            shared(TensorOp::DimOf(*axis), xs)
        }
        OpKind::MatMul => {
            need(2)?;
            shared(TensorOp::MatMul, xs)
        }
        OpKind::Transpose => {
            need(1)?;
            shared(TensorOp::Transpose, xs)
        }
        OpKind::Sum => {
            need(1)?;
            shared(TensorOp::Sum, xs)
        }
        OpKind::Slice => {
            need(3)?;
            shared(TensorOp::Slice, xs)
        }
        OpKind::Concat => {
            at_least(1)?;
            shared(TensorOp::Concat, xs)
        }
        OpKind::Reshape => {
            at_least(1)?;
            shared(TensorOp::Reshape, xs)
        }
        OpKind::Permute(perm) => {
            need(1)?;
            shared(TensorOp::Permute(perm.clone()), xs)
        }
        OpKind::Broadcast => {
            at_least(1)?;
            shared(TensorOp::Broadcast, xs)
        }
        OpKind::ReduceTo(r) => {
            at_least(1)?;
            shared(TensorOp::ReduceTo(*r), xs)
        }
        OpKind::Tuple => Ok(Value::Tuple(xs.iter().map(|&x| x.clone()).collect())),
        OpKind::TupleGet(i) => {
            need(1)?;
            match xs[0] {
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

/// A tensor op by the run time's semantics ([`mad_runtime::jit::tensor::apply`]), the one
/// compiled code calls for heap tensors: the reference and the JIT share it.
fn shared(op: TensorOp, xs: &[&Value]) -> Result<Value, RtError> {
    let args: Vec<Arg<'_>> = xs
        .iter()
        .map(|x| match x {
            Value::Tensor(t) => Arg::Tensor(std::borrow::Cow::Borrowed(t)),
            v => Arg::Scalar((*v).clone()),
        })
        .collect();
    mad_runtime::jit::tensor::apply(&op, &args)
}
