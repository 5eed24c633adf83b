//! `tape.push` / `tape.pop`: values on the run-time [`Tape`].
//!
//! A value is written leaf by leaf (tuples in field order): a scalar as one word,
//! a tensor as its elements then its extents; each leaf is followed by a tag word
//! (kind and rank) so that a pop with other types than the push is reported as a
//! run-time error instead of reinterpreting words. The machine's tape is taken
//! from a per-thread cache and handed back reset, so repeated evaluations on one
//! thread reuse its storage (the arena discipline of [`Tape::reset`]).

use std::cell::Cell;

use super::Machine;
use crate::ir::{Function, Op, Type};
use mad_runtime::tape::Tape;
use mad_runtime::{RtError, ScalarKind, Tensor, TensorData, Value};

thread_local! {
    static CACHED: Cell<Tape> = Cell::new(Tape::new());
    static LAST_USE: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

/// The tape use of the last run on the calling thread: the most words it held
/// at once, and the words still held when the run ended (0 when every push was
/// popped).
pub fn last_use() -> (usize, usize) {
    LAST_USE.with(Cell::get)
}

/// Records `used` as the calling thread's [`last_use`] (a run on a thread of its own hands
/// its use back to the thread that asked for it).
pub fn set_last_use(used: (usize, usize)) {
    LAST_USE.with(|c| c.set(used));
}

/// The calling thread's tape (empty, with the storage of earlier runs).
pub(super) fn take_cached() -> Tape {
    CACHED.with(Cell::take)
}

/// Resets `tape` and keeps it for the next run on this thread.
pub(super) fn give_back(mut tape: Tape) {
    let left = tape.len();
    tape.reset();
    LAST_USE.with(|c| c.set((tape.take_high_water(), left)));
    CACHED.with(|c| c.set(tape));
}

fn kind_code(k: ScalarKind) -> u64 {
    match k {
        ScalarKind::F64 => 0,
        ScalarKind::F32 => 1,
        ScalarKind::I64 => 2,
        ScalarKind::Bool => 3,
    }
}

fn tag(k: ScalarKind, rank: Option<usize>) -> u64 {
    kind_code(k) + 4 * rank.map_or(0, |r| r as u64 + 1)
}

fn scalar_word(v: &Value) -> Option<(ScalarKind, u64)> {
    Some(match v {
        Value::F64(x) => (ScalarKind::F64, x.to_bits()),
        Value::F32(x) => (ScalarKind::F32, u64::from(x.to_bits())),
        Value::I64(x) => (ScalarKind::I64, *x as u64),
        Value::Bool(b) => (ScalarKind::Bool, u64::from(*b)),
        _ => return None,
    })
}

fn word_scalar(k: ScalarKind, w: u64) -> Value {
    match k {
        ScalarKind::F64 => Value::F64(f64::from_bits(w)),
        ScalarKind::F32 => Value::F32(f32::from_bits(w as u32)),
        ScalarKind::I64 => Value::I64(w as i64),
        ScalarKind::Bool => Value::Bool(w != 0),
    }
}

fn push_value(tape: &mut Tape, v: &Value) {
    match v {
        Value::Tuple(items) => items.iter().for_each(|x| push_value(tape, x)),
        Value::Tensor(t) => {
            for i in 0..t.data.len() {
                if let Some((_, w)) = scalar_word(&t.data.get(i)) {
                    tape.push_word(w);
                }
            }
            for &n in &t.shape {
                tape.push_word(n as u64);
            }
            tape.push_word(tag(t.kind(), Some(t.shape.len())));
        }
        scalar => {
            if let Some((k, w)) = scalar_word(scalar) {
                tape.push_word(w);
                tape.push_word(tag(k, None));
            }
        }
    }
}

fn mismatch(ty: &Type) -> RtError {
    RtError::Other(format!("tape.pop: the tape does not hold a {ty} here"))
}

fn pop_value(tape: &mut Tape, ty: &Type) -> Result<Value, RtError> {
    match ty {
        Type::Tuple(items) => {
            let mut out = Vec::with_capacity(items.len());
            for t in items.iter().rev() {
                out.push(pop_value(tape, t)?);
            }
            out.reverse();
            Ok(Value::Tuple(out))
        }
        Type::Scalar(k) => {
            if tape.pop_word()? != tag(*k, None) {
                return Err(mismatch(ty));
            }
            Ok(word_scalar(*k, tape.pop_word()?))
        }
        Type::Tensor { elem, shape } => {
            if tape.pop_word()? != tag(*elem, Some(shape.len())) {
                return Err(mismatch(ty));
            }
            let mut dims = vec![0u64; shape.len()];
            tape.pop_block(&mut dims)?;
            let dims: Vec<usize> = dims.into_iter().map(|d| d as usize).collect();
            let numel = dims
                .iter()
                .try_fold(1usize, |a, &d| a.checked_mul(d))
                .ok_or_else(|| mismatch(ty))?;
            if numel > tape.len() {
                return Err(mismatch(ty));
            }
            let mut words = vec![0u64; numel];
            tape.pop_block(&mut words)?;
            let data = match elem {
                ScalarKind::F64 => {
                    TensorData::F64(words.iter().map(|&w| f64::from_bits(w)).collect())
                }
                ScalarKind::F32 => {
                    TensorData::F32(words.iter().map(|&w| f32::from_bits(w as u32)).collect())
                }
                ScalarKind::I64 => TensorData::I64(words.iter().map(|&w| w as i64).collect()),
                ScalarKind::Bool => TensorData::Bool(words.iter().map(|&w| w != 0).collect()),
            };
            Tensor::new(dims, data)
                .map(Value::Tensor)
                .ok_or_else(|| mismatch(ty))
        }
    }
}

impl Machine<'_> {
    pub(super) fn tape_push(
        &mut self,
        _func: &Function,
        _op: &Op,
        operands: &[Value],
    ) -> Result<(), RtError> {
        for v in operands {
            push_value(&mut self.tape, v);
        }
        Ok(())
    }

    pub(super) fn tape_pop(&mut self, func: &Function, op: &Op) -> Result<Vec<Value>, RtError> {
        let mut out = Vec::with_capacity(op.results.len());
        for &r in op.results.iter().rev() {
            out.push(pop_value(&mut self.tape, func.ty(r))?);
        }
        out.reverse();
        Ok(out)
    }
}
