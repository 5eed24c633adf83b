//! Inline reads of heap tensors: element loads and extents come straight from
//! the `repr(C)` [`HeapTensor`](mad_runtime::jit::context::HeapTensor) header,
//! without a run-time routine call, so a loop over a `[f64]` argument costs a
//! bounds check and a load per element.
//!
//! A null heap slot (left by an error path) and an empty tensor read the static
//! zero words [`mad_runtime::jit::context::HEAP_ZEROS`] instead, so
//! these loads never fault; the bounds check has already recorded the error.

use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value, condcodes::IntCC, types};
use mad_runtime::jit::context::{
    HEAP_INLINE_RANK, HEAP_OFFSET_DATA, HEAP_OFFSET_DIMS, HEAP_OFFSET_NUMEL, HEAP_ZEROS,
};
use mad_runtime::jit::layout::FlatLayout;

use super::JitError;
use super::imports::Routine;
use super::layout::clif_kind;
use super::lower::FnLower;
use crate::codegen::layout::flat_layout;
use crate::ir::{Op, ScalarKind, Type, ValueId};

/// What an inline element read of a heap tensor needs from its header.
#[derive(Clone, Debug)]
pub struct HeapView {
    /// The extents of the leading axes.
    pub extents: Vec<Value>,
    /// The address of element 0 (the zero words for an empty or null tensor).
    pub base: Value,
}

/// Heap tensors never change after allocation and every address these loads use
/// is valid (a header, an element in bounds, or the zero words), so the loads may
/// be hoisted out of loops and merged.
fn heap_flags() -> MemFlagsData {
    MemFlagsData::trusted().with_readonly().with_can_move()
}

/// Bytes per element of a heap tensor of this kind (`Vec<bool>` stores bytes).
pub(super) fn elem_size(k: ScalarKind) -> i64 {
    match k {
        ScalarKind::F64 | ScalarKind::I64 => 8,
        ScalarKind::F32 => 4,
        ScalarKind::Bool => 1,
    }
}

impl FnLower<'_, '_> {
    fn zeros_addr(&mut self) -> Value {
        self.b.ins().iconst(types::I64, HEAP_ZEROS.as_ptr() as i64)
    }

    /// The header address of a heap slot; null reads the zero words.
    pub(super) fn heap_header(&mut self, slot: Value) -> Value {
        let zeros = self.zeros_addr();
        let null = self.b.ins().icmp_imm_s(IntCC::Equal, slot, 0);
        self.b.ins().select(null, zeros, slot)
    }

    /// Extent of `axis` (< [`HEAP_INLINE_RANK`]) read from the header.
    pub(super) fn heap_extent(&mut self, header: Value, axis: usize) -> Value {
        self.b.ins().load(
            types::I64,
            heap_flags(),
            header,
            HEAP_OFFSET_DIMS + 8 * axis as i32,
        )
    }

    /// `tensor.index` of a heap tensor down to one element, inline. Returns
    /// `false` (emitting nothing) when the op is not of that form.
    pub fn try_heap_index(&mut self, op: &Op) -> Result<bool, JitError> {
        let (Some(&t), Some(&r)) = (op.operands.first(), op.results.first()) else {
            return Ok(false);
        };
        let FlatLayout::Heap { elem, shape } = flat_layout(self.ty(t)) else {
            return Ok(false);
        };
        let idx = &op.operands[1..];
        if shape.len() > HEAP_INLINE_RANK {
            return Ok(false);
        }
        if !matches!(self.ty(r), Type::Scalar(_)) {
            return self.try_heap_index_block(op, t, r, elem, &shape);
        }
        if idx.len() != shape.len() {
            return Ok(false);
        }
        let view = match self.heap_views.get(&t) {
            Some(v) => v.clone(),
            None => self.heap_view(t, shape.len())?,
        };
        let off = self.heap_linear_index(&view, idx)?;
        let bytes = self.b.ins().imul_imm_s(off, elem_size(elem));
        let addr = self.b.ins().iadd(view.base, bytes);
        // A tensor updated in place ([`super::inplace`]) is not read-only.
        let flags = if self.info.inplace.mutable.contains(&t) {
            MemFlagsData::trusted()
        } else {
            heap_flags()
        };
        let v = self.b.ins().load(clif_kind(elem), flags, addr, 0);
        self.set(r, vec![v]);
        Ok(true)
    }

    /// The linear index of `idx` (one index per leading axis of `view`) in row-major order,
    /// each index bounds-checked against its extent (an index error, then index 0) unless the
    /// current op was proved in bounds ([`super::version`]).
    fn heap_linear_index(&mut self, view: &HeapView, idx: &[ValueId]) -> Result<Value, JitError> {
        let mut off = self.b.ins().iconst(types::I64, 0);
        let proved = self.cur_op.is_some_and(|id| self.unchecked.contains(&id));
        for (axis, &iv) in idx.iter().enumerate() {
            let i = self.get1(iv)?;
            let n = view.extents[axis];
            if proved {
                // In bounds on every trip ([`super::version`]).
                let scaled = self.b.ins().imul(off, n);
                off = self.b.ins().iadd(scaled, i);
                continue;
            }
            let oob = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, i, n);
            self.error_if(oob, Routine::ErrorIndex, &[i, n])?;
            let zero = self.b.ins().iconst(types::I64, 0);
            let ci = self.b.ins().select(oob, zero, i);
            let scaled = self.b.ins().imul(off, n);
            off = self.b.ins().iadd(scaled, ci);
        }
        Ok(off)
    }

    /// `tensor.index` of a heap tensor down to a small static block (a row `X[i]` of a
    /// `[vec3]`, a `mat3` of a `[mat3]`), inline: the bounds checks of the given indices,
    /// a check that the trailing extents are the static ones (an index error otherwise,
    /// reading the zero words), and one load per element of the block. Only for `f64` and
    /// `i64` blocks of at most 16 elements (the zero words' length). Returns `false`
    /// (emitting nothing) when the op is not of that form.
    fn try_heap_index_block(
        &mut self,
        op: &Op,
        t: ValueId,
        r: ValueId,
        elem: ScalarKind,
        shape: &[Option<usize>],
    ) -> Result<bool, JitError> {
        let idx = &op.operands[1..];
        let FlatLayout::Small {
            elem: relem,
            shape: rshape,
        } = flat_layout(self.ty(r))
        else {
            return Ok(false);
        };
        let slots: usize = rshape.iter().product();
        let trailing = &shape[idx.len().min(shape.len())..];
        if relem != elem
            || !matches!(elem, ScalarKind::F64 | ScalarKind::I64)
            || idx.is_empty()
            || idx.len() >= shape.len()
            || trailing.len() != rshape.len()
            || trailing.iter().zip(&rshape).any(|(a, b)| *a != Some(*b))
            || slots == 0
            || slots > HEAP_ZEROS.len()
        {
            return Ok(false);
        }
        let view = match self.heap_views.get(&t) {
            Some(v) => v.clone(),
            None => self.heap_view(t, shape.len())?,
        };
        let off = self.heap_linear_index(&view, idx)?;
        // The trailing extents are the static ones for every well-typed value; a mismatch
        // is reported as an index error and reads the zero words.
        let mut bad = self.b.ins().iconst(types::I8, 0);
        for (k, &len) in rshape.iter().enumerate() {
            let n = view.extents[idx.len() + k];
            let ne = self.b.ins().icmp_imm_s(IntCC::NotEqual, n, len as i64);
            let last = self.b.ins().iconst(types::I64, len as i64 - 1);
            self.error_if(ne, Routine::ErrorIndex, &[last, n])?;
            bad = self.b.ins().bor(bad, ne);
        }
        let bytes = self.b.ins().imul_imm_s(off, slots as i64 * elem_size(elem));
        let addr = self.b.ins().iadd(view.base, bytes);
        let zeros = self.zeros_addr();
        let addr = self.b.ins().select(bad, zeros, addr);
        let flags = if self.info.inplace.mutable.contains(&t) {
            MemFlagsData::trusted()
        } else {
            heap_flags()
        };
        let vals = (0..slots)
            .map(|j| {
                self.b
                    .ins()
                    .load(clif_kind(elem), flags, addr, j as i32 * elem_size(elem) as i32)
            })
            .collect();
        self.set(r, vals);
        Ok(true)
    }

    /// The header values of heap tensor `t` that element reads use: its
    /// extents (`rank` axes, at most [`HEAP_INLINE_RANK`]) and the address of
    /// its first element (the zero words when it is empty or null).
    pub fn heap_view(&mut self, t: ValueId, rank: usize) -> Result<HeapView, JitError> {
        let slot = self.get1(t)?;
        let header = self.heap_header(slot);
        let extents = (0..rank.min(HEAP_INLINE_RANK))
            .map(|axis| self.heap_extent(header, axis))
            .collect();
        let data = self
            .b
            .ins()
            .load(types::I64, heap_flags(), header, HEAP_OFFSET_DATA);
        let numel = self
            .b
            .ins()
            .load(types::I64, heap_flags(), header, HEAP_OFFSET_NUMEL);
        let empty = self.b.ins().icmp_imm_s(IntCC::Equal, numel, 0);
        let zeros = self.zeros_addr();
        let base = self.b.ins().select(empty, zeros, data);
        Ok(HeapView { extents, base })
    }

    /// `tensor.dim` of a heap tensor, inline.
    pub fn try_heap_dim(&mut self, op: &Op, axis: u32) -> Result<bool, JitError> {
        let (Some(&t), Some(&r)) = (op.operands.first(), op.results.first()) else {
            return Ok(false);
        };
        let FlatLayout::Heap { shape, .. } = flat_layout(self.ty(t)) else {
            return Ok(false);
        };
        let axis = axis as usize;
        if axis >= shape.len() || axis >= HEAP_INLINE_RANK {
            return Ok(false);
        }
        let slot = self.get1(t)?;
        let header = self.heap_header(slot);
        let n = self.heap_extent(header, axis);
        self.set(r, vec![n]);
        Ok(true)
    }
}
