//! Lowering of the in-place inserts [`crate::codegen::inplace`] finds: a store into the
//! tensor's buffer, with the bounds check and the row-shape check of the copying insert.

use cranelift_codegen::ir::{InstBuilder, MemFlagsData, condcodes::IntCC, types};
use mad_runtime::jit::context::HEAP_OFFSET_DATA;
use mad_runtime::jit::layout::FlatLayout;

use super::JitError;
use super::imports::Routine;
use super::lower::FnLower;
use crate::codegen::layout::flat_layout;
use crate::ir::Op;

impl FnLower<'_, '_> {
    /// Lowers insert `op` (one of [`crate::codegen::inplace::InPlace::inserts`]) as a store into its operand: one
    /// element, or a fixed-size row's elements at the row's offset.
    pub fn lower_inplace_insert(&mut self, op: &Op) -> Result<(), JitError> {
        let (t, v, r) = (op.operands[0], op.operands[1], op.results[0]);
        let FlatLayout::Heap { elem, shape } = flat_layout(self.ty(t)) else {
            return Err(super::lower::unsupported(
                "in-place insert of a non-heap tensor",
            ));
        };
        // The row's extents: fixed (a small tensor), read at run time (a heap one), or none
        // (a scalar).
        let (row_shape, heap_row): (Vec<Option<usize>>, bool) = match flat_layout(self.ty(v)) {
            FlatLayout::Small { shape, .. } => (shape.into_iter().map(Some).collect(), false),
            FlatLayout::Heap { shape, .. } => (vec![None; shape.len()], true),
            _ => (Vec::new(), false),
        };
        let slot = self.get1(t)?;
        let xs = self.get(v)?;
        let header = self.heap_header(slot);
        let mut off = self.b.ins().iconst(types::I64, 0);
        let mut bad = self.b.ins().iconst(types::I8, 0);
        for (axis, &iv) in op.operands[2..].iter().enumerate() {
            let i = self.get1(iv)?;
            let n = self.heap_extent(header, axis);
            let oob = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, i, n);
            self.error_if(oob, Routine::ErrorIndex, &[i, n])?;
            bad = self.b.ins().bor(bad, oob);
            let scaled = self.b.ins().imul(off, n);
            off = self.b.ins().iadd(scaled, i);
        }
        // A row: its extents against the trailing ones (those the types leave to run time),
        // and its element count.
        let lead = op.operands.len() - 2;
        let row_header = heap_row.then(|| self.heap_header(xs[0]));
        let mut mismatch = self.b.ins().iconst(types::I8, 0);
        let mut row_len = self.b.ins().iconst(types::I64, 1);
        for (j, &len) in row_shape.iter().enumerate() {
            let axis = lead + j;
            let have = match (len, row_header) {
                (Some(len), _) => self.b.ins().iconst(types::I64, len as i64),
                (None, Some(h)) => self.heap_extent(h, j),
                (None, None) => unreachable!("a row without extents"),
            };
            row_len = self.b.ins().imul(row_len, have);
            if len.is_some() && shape.get(axis).copied().flatten() == len {
                continue;
            }
            let want = self.heap_extent(header, axis);
            let differs = self.b.ins().icmp(IntCC::NotEqual, want, have);
            mismatch = self.b.ins().bor(mismatch, differs);
        }
        let store_b = self.b.create_block();
        let check_b = self.b.create_block();
        let cont = self.b.create_block();
        self.b.append_block_param(cont, types::I64);
        self.b.ins().brif(bad, cont, &[slot.into()], check_b, &[]);
        self.b.switch_to_block(check_b);
        if row_shape.is_empty() {
            self.b.ins().jump(store_b, &[]);
        } else {
            // A row of another shape: the copying insert reports the mismatch.
            let copy_b = self.b.create_block();
            self.b.set_cold_block(copy_b);
            self.b.ins().brif(mismatch, copy_b, &[], store_b, &[]);
            self.b.switch_to_block(copy_b);
            self.apply(mad_runtime::jit::TensorOp::Insert, &op.operands, r)?;
            let copied = self.get1(r)?;
            self.b.ins().jump(cont, &[copied.into()]);
        }
        self.b.switch_to_block(store_b);
        let flags = MemFlagsData::trusted().with_readonly().with_can_move();
        let data = self
            .b
            .ins()
            .load(types::I64, flags, header, HEAP_OFFSET_DATA);
        let size = super::heap::elem_size(elem);
        let start = self.b.ins().imul(off, row_len);
        let bytes = self.b.ins().imul_imm_s(start, size);
        let addr = self.b.ins().iadd(data, bytes);
        match row_header {
            None => {
                for (k, x) in xs.iter().enumerate() {
                    self.b.ins().store(MemFlagsData::trusted(), *x, addr, (k as i64 * size) as i32);
                }
                self.b.ins().jump(cont, &[slot.into()]);
            }
            Some(h) => {
                // Element by element from the row's data (`row_len` of them).
                let src = self.b.ins().load(types::I64, flags, h, HEAP_OFFSET_DATA);
                let ty = super::layout::clif_kind(elem);
                let head = self.b.create_block();
                let body = self.b.create_block();
                self.b.append_block_param(head, types::I64);
                let zero = self.b.ins().iconst(types::I64, 0);
                self.b.ins().jump(head, &[zero.into()]);
                self.b.switch_to_block(head);
                let k = self.b.block_params(head)[0];
                let more = self.b.ins().icmp(IntCC::SignedLessThan, k, row_len);
                self.b.ins().brif(more, body, &[], cont, &[slot.into()]);
                self.b.switch_to_block(body);
                let kb = self.b.ins().imul_imm_s(k, size);
                let from = self.b.ins().iadd(src, kb);
                let to = self.b.ins().iadd(addr, kb);
                let x = self.b.ins().load(ty, MemFlagsData::trusted(), from, 0);
                self.b.ins().store(MemFlagsData::trusted(), x, to, 0);
                let next = self.b.ins().iadd_imm_s(k, 1);
                self.b.ins().jump(head, &[next.into()]);
            }
        }
        self.b.switch_to_block(cont);
        let out = self.b.block_params(cont)[0];
        self.set(r, vec![out]);
        Ok(())
    }
}
