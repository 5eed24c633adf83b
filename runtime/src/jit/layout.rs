//! How a value of a compiled program is laid out as a flat list of 64-bit slots.
//!
//! Compiled code keeps every value as a list of machine values: a scalar is one
//! slot, a small static tensor is one slot per element (row-major), a heap tensor
//! is one slot holding a pointer to a [`Tensor`] in the context's arena, and a
//! tuple is the concatenation of its parts. When such a list crosses into the
//! host or a routine it is stored in a buffer of `u64` slots: `f64` and `i64`
//! as their bits, `f32` in the low 32 bits, `bool` in the low byte (0 or 1).

use std::borrow::Cow;

use super::context::JitContext;
use crate::value::{ScalarKind, Tensor, TensorData, Value};

/// The flat layout of one value type.
#[derive(Clone, Debug, PartialEq)]
pub enum FlatLayout {
    /// One slot.
    Scalar(ScalarKind),
    /// A static tensor kept as one slot per element.
    Small { elem: ScalarKind, shape: Vec<usize> },
    /// A tensor in the arena: one pointer slot. `None` extents are known only at run time.
    Heap {
        elem: ScalarKind,
        shape: Vec<Option<usize>>,
    },
    /// The concatenation of the parts' slots.
    Tuple(Vec<FlatLayout>),
}

/// The slot encoding of a scalar.
pub fn scalar_to_slot(v: &Value) -> u64 {
    match *v {
        Value::F64(x) => x.to_bits(),
        Value::F32(x) => x.to_bits() as u64,
        Value::I64(x) => x as u64,
        Value::Bool(b) => b as u64,
        Value::Tensor(_) | Value::Tuple(_) => 0,
    }
}

/// The scalar a slot holds.
pub fn slot_to_scalar(k: ScalarKind, s: u64) -> Value {
    match k {
        ScalarKind::F64 => Value::F64(f64::from_bits(s)),
        ScalarKind::F32 => Value::F32(f32::from_bits(s as u32)),
        ScalarKind::I64 => Value::I64(s as i64),
        ScalarKind::Bool => Value::Bool(s & 0xff != 0),
    }
}

/// Row-major tensor data from slots.
pub fn data_from_slots(k: ScalarKind, slots: &[u64]) -> TensorData {
    match k {
        ScalarKind::F64 => TensorData::F64(slots.iter().map(|&s| f64::from_bits(s)).collect()),
        ScalarKind::F32 => {
            TensorData::F32(slots.iter().map(|&s| f32::from_bits(s as u32)).collect())
        }
        ScalarKind::I64 => TensorData::I64(slots.iter().map(|&s| s as i64).collect()),
        ScalarKind::Bool => TensorData::Bool(slots.iter().map(|&s| s & 0xff != 0).collect()),
    }
}

/// The slots of tensor data.
pub fn data_to_slots(d: &TensorData, out: &mut Vec<u64>) {
    match d {
        TensorData::F64(v) => out.extend(v.iter().map(|x| x.to_bits())),
        TensorData::F32(v) => out.extend(v.iter().map(|x| x.to_bits() as u64)),
        TensorData::I64(v) => out.extend(v.iter().map(|&x| x as u64)),
        TensorData::Bool(v) => out.extend(v.iter().map(|&b| b as u64)),
    }
}

/// An empty tensor of a kind and rank (stands for a heap value that was never
/// computed because an error was recorded first).
pub fn empty_tensor(k: ScalarKind, rank: usize) -> Tensor {
    if rank == 0 {
        return Tensor {
            shape: Vec::new(),
            data: data_from_slots(k, &[0]),
        };
    }
    Tensor {
        shape: vec![0; rank],
        data: data_from_slots(k, &[]),
    }
}

/// One operand of a routine: a scalar, or a tensor (borrowed from the arena or
/// rebuilt from slots).
#[derive(Clone, Debug)]
pub enum Arg<'t> {
    Scalar(Value),
    Tensor(Cow<'t, Tensor>),
}

impl FlatLayout {
    /// How many slots a value of this layout takes.
    pub fn slots(&self) -> usize {
        match self {
            FlatLayout::Scalar(_) | FlatLayout::Heap { .. } => 1,
            FlatLayout::Small { shape, .. } => shape.iter().product(),
            FlatLayout::Tuple(items) => items.iter().map(FlatLayout::slots).sum(),
        }
    }

    /// Whether `v` is a value of this layout's type; `Err` says why not.
    pub fn check(&self, v: &Value) -> Result<(), String> {
        match (self, v) {
            (FlatLayout::Scalar(k), v) if super::scalar::kind_of(v) == Some(*k) => Ok(()),
            (FlatLayout::Small { elem, shape }, Value::Tensor(t)) => {
                if t.kind() == *elem && t.shape == *shape {
                    Ok(())
                } else {
                    Err(format!(
                        "expected a {} tensor of shape {shape:?}, got {} {:?}",
                        elem.name(),
                        t.kind().name(),
                        t.shape
                    ))
                }
            }
            (FlatLayout::Heap { elem, shape }, Value::Tensor(t)) => {
                let fits = t.kind() == *elem
                    && t.shape.len() == shape.len()
                    && t.shape
                        .iter()
                        .zip(shape)
                        .all(|(n, d)| d.is_none_or(|d| d == *n));
                if fits {
                    Ok(())
                } else {
                    Err(format!(
                        "expected a {} tensor of shape {shape:?}, got {} {:?}",
                        elem.name(),
                        t.kind().name(),
                        t.shape
                    ))
                }
            }
            (FlatLayout::Tuple(items), Value::Tuple(vs)) if items.len() == vs.len() => {
                items.iter().zip(vs).try_for_each(|(l, v)| l.check(v))
            }
            (l, v) => Err(format!("expected a value of layout {l:?}, got {v}")),
        }
    }

    /// Appends `v`'s slots (heap tensors are copied into the context's arena).
    /// `v` must pass [`FlatLayout::check`]; a mismatch writes zero slots.
    pub fn flatten(&self, v: &Value, ctx: &mut JitContext<'_>, out: &mut Vec<u64>) {
        match (self, v) {
            (FlatLayout::Scalar(_), v) => out.push(scalar_to_slot(v)),
            (FlatLayout::Small { .. }, Value::Tensor(t)) => data_to_slots(&t.data, out),
            (FlatLayout::Heap { .. }, Value::Tensor(t)) => out.push(ctx.alloc(t.clone()) as u64),
            (FlatLayout::Tuple(items), Value::Tuple(vs)) => {
                for (l, v) in items.iter().zip(vs) {
                    l.flatten(v, ctx, out);
                }
            }
            (l, _) => out.extend(std::iter::repeat_n(0, l.slots())),
        }
    }

    /// Rebuilds a value from its slots (heap tensors are copied out of the arena).
    ///
    /// # Safety
    /// Every heap slot must be null or point to a live tensor of the context's arena.
    pub unsafe fn rebuild(&self, slots: &[u64]) -> Value {
        let mut pos = 0;
        unsafe { self.rebuild_at(slots, &mut pos) }
    }

    unsafe fn rebuild_at(&self, slots: &[u64], pos: &mut usize) -> Value {
        match self {
            FlatLayout::Scalar(k) => {
                let s = slots.get(*pos).copied().unwrap_or(0);
                *pos += 1;
                slot_to_scalar(*k, s)
            }
            FlatLayout::Small { elem, shape } => {
                let n: usize = shape.iter().product();
                let end = (*pos + n).min(slots.len());
                let mut part = slots[(*pos).min(end)..end].to_vec();
                part.resize(n, 0);
                *pos += n;
                Value::Tensor(Tensor {
                    shape: shape.clone(),
                    data: data_from_slots(*elem, &part),
                })
            }
            FlatLayout::Heap { elem, shape } => {
                let s = slots.get(*pos).copied().unwrap_or(0);
                *pos += 1;
                let t = unsafe { heap_ref(s) };
                Value::Tensor(
                    t.cloned()
                        .unwrap_or_else(|| empty_tensor(*elem, shape.len())),
                )
            }
            FlatLayout::Tuple(items) => Value::Tuple(
                items
                    .iter()
                    .map(|l| unsafe { l.rebuild_at(slots, pos) })
                    .collect(),
            ),
        }
    }

    /// The operand a scalar or tensor layout's slots stand for (heap tensors borrowed).
    ///
    /// # Safety
    /// As [`FlatLayout::rebuild`]; the borrow lasts as long as the arena is not reset.
    pub unsafe fn arg<'t>(&self, slots: &[u64]) -> Arg<'t> {
        match self {
            FlatLayout::Scalar(k) => {
                Arg::Scalar(slot_to_scalar(*k, slots.first().copied().unwrap_or(0)))
            }
            FlatLayout::Heap { elem, shape } => {
                match unsafe { heap_ref(slots.first().copied().unwrap_or(0)) } {
                    Some(t) => Arg::Tensor(Cow::Borrowed(t)),
                    None => Arg::Tensor(Cow::Owned(empty_tensor(*elem, shape.len()))),
                }
            }
            FlatLayout::Small { .. } | FlatLayout::Tuple(_) => match unsafe { self.rebuild(slots) }
            {
                Value::Tensor(t) => Arg::Tensor(Cow::Owned(t)),
                other => Arg::Scalar(other),
            },
        }
    }
}

/// The tensor a heap slot points to (`None` for null).
///
/// # Safety
/// `s` must be 0 or a pointer returned by [`JitContext::alloc`] of a live arena.
pub unsafe fn heap_ref<'t>(s: u64) -> Option<&'t Tensor> {
    if s == 0 {
        None
    } else {
        Some(unsafe { &(*(s as *const super::context::HeapTensor)).tensor })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_slots() {
        let layout = FlatLayout::Tuple(vec![
            FlatLayout::Scalar(ScalarKind::F32),
            FlatLayout::Small {
                elem: ScalarKind::I64,
                shape: vec![2],
            },
            FlatLayout::Heap {
                elem: ScalarKind::F64,
                shape: vec![None],
            },
            FlatLayout::Scalar(ScalarKind::Bool),
        ]);
        let v = Value::Tuple(vec![
            Value::F32(-1.5),
            Value::Tensor(Tensor {
                shape: vec![2],
                data: TensorData::I64(vec![3, -4]),
            }),
            Value::Tensor(Tensor::vector(vec![1.0, 2.0, 3.0])),
            Value::Bool(true),
        ]);
        assert_eq!(layout.check(&v), Ok(()));
        assert_eq!(layout.slots(), 5);
        let mut ctx = JitContext::new(&[], &[], 0);
        let mut slots = Vec::new();
        layout.flatten(&v, &mut ctx, &mut slots);
        assert_eq!(slots.len(), 5);
        assert_eq!(unsafe { layout.rebuild(&slots) }, v);
    }

    #[test]
    fn check_rejects_wrong_shapes_and_kinds() {
        let l = FlatLayout::Heap {
            elem: ScalarKind::F64,
            shape: vec![None, Some(3)],
        };
        let ok = Value::Tensor(Tensor::from_f64(vec![1, 3], vec![0.0; 3]).unwrap());
        let bad = Value::Tensor(Tensor::from_f64(vec![3, 1], vec![0.0; 3]).unwrap());
        assert!(l.check(&ok).is_ok());
        assert!(l.check(&bad).is_err());
        assert!(
            FlatLayout::Scalar(ScalarKind::F64)
                .check(&Value::I64(1))
                .is_err()
        );
    }
}
