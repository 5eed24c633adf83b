//! `tape.push` / `tape.pop` on the context's tape, inline: the operands' slots
//! (scalars, small-tensor elements, heap-tensor pointers, which stay valid
//! until the context is reset) are stored straight into the tape's words and
//! loaded back from them in the layout of the pop's result types, one word per
//! slot, the context's `tape_len` moving by the block's size.
//!
//! The fast path needs no error recorded and, for a push, room for the block;
//! otherwise (growing the tape, an underflow, or after an error) a cold branch
//! calls `mad_rt_tape_push` / `mad_rt_tape_pop` through a stack buffer, which
//! grow the tape, record the underflow, or skip the push and pop zeros as
//! before.

use cranelift_codegen::ir::{InstBuilder, MemFlagsData, condcodes::IntCC, types};
use mad_runtime::jit::context::{OFFSET_HAS_ERROR, OFFSET_TAPE_CAP, OFFSET_TAPE_LEN, OFFSET_TAPE_WORDS};

use super::JitError;
use super::imports::Routine;
use super::layout::clif_types;
use super::lower::{FnLower, unsupported};
use crate::ir::{self, OpKind};

fn flags() -> MemFlagsData {
    MemFlagsData::trusted()
}

impl FnLower<'_, '_> {
    pub fn lower_tape(&mut self, op: &ir::Op) -> Result<(), JitError> {
        match op.kind {
            OpKind::TapePush => self.lower_tape_push(op),
            OpKind::TapePop => self.lower_tape_pop(op),
            _ => Err(unsupported(format!("`{}` is not a tape op", op.kind.name()))),
        }
    }

    fn lower_tape_push(&mut self, op: &ir::Op) -> Result<(), JitError> {
        let slots = self.get_many(&op.operands)?;
        let k = slots.len() as i64;
        let len = self.b.ins().load(types::I64, flags(), self.ctx, OFFSET_TAPE_LEN);
        let cap = self.b.ins().load(types::I64, flags(), self.ctx, OFFSET_TAPE_CAP);
        let end = self.b.ins().iadd_imm_s(len, k);
        let fits = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, end, cap);
        let ok = self.no_error();
        let go = self.b.ins().band(fits, ok);
        let (fast, slow, cont) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        self.b.set_cold_block(slow);
        self.b.ins().brif(go, fast, &[], slow, &[]);

        self.b.switch_to_block(fast);
        let words = self.b.ins().load(types::I64, flags(), self.ctx, OFFSET_TAPE_WORDS);
        let bytes = self.b.ins().ishl_imm_u(len, 3);
        let at = self.b.ins().iadd(words, bytes);
        for (i, s) in slots.iter().enumerate() {
            self.b.ins().store(flags(), *s, at, 8 * i as i32);
        }
        self.b.ins().store(flags(), end, self.ctx, OFFSET_TAPE_LEN);
        self.b.ins().jump(cont, &[]);

        self.b.switch_to_block(slow);
        let addr = self.spill(&slots, 1);
        let n = self.b.ins().iconst(types::I64, k);
        self.call_routine(Routine::TapePush, &[self.ctx, addr, n])?;
        self.b.ins().jump(cont, &[]);
        self.b.switch_to_block(cont);
        Ok(())
    }

    fn lower_tape_pop(&mut self, op: &ir::Op) -> Result<(), JitError> {
        let mut tys = Vec::new();
        for &r in &op.results {
            tys.extend(clif_types(self.ty(r)));
        }
        let k = tys.len() as i64;
        let len = self.b.ins().load(types::I64, flags(), self.ctx, OFFSET_TAPE_LEN);
        let held = self.b.ins().icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, len, k);
        let flag = self.b.ins().load(types::I64, flags(), self.ctx, OFFSET_HAS_ERROR);
        let ok = self.b.ins().icmp_imm_s(IntCC::Equal, flag, 0);
        let go = self.b.ins().band(held, ok);
        let (fast, slow, cont) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        for &t in &tys {
            self.b.append_block_param(cont, t);
        }
        self.b.set_cold_block(slow);
        self.b.ins().brif(go, fast, &[], slow, &[]);

        self.b.switch_to_block(fast);
        let start = self.b.ins().iadd_imm_s(len, -k);
        let words = self.b.ins().load(types::I64, flags(), self.ctx, OFFSET_TAPE_WORDS);
        let bytes = self.b.ins().ishl_imm_u(start, 3);
        let at = self.b.ins().iadd(words, bytes);
        let vals = self.load_slots(at, &tys);
        self.b.ins().store(flags(), start, self.ctx, OFFSET_TAPE_LEN);
        self.b.ins().jump(cont, &Self::block_args(&vals));

        self.b.switch_to_block(slow);
        let addr = self.buffer(tys.len());
        let n = self.b.ins().iconst(types::I64, k);
        self.call_routine(Routine::TapePop, &[self.ctx, addr, n])?;
        let vals = self.load_slots(addr, &tys);
        self.b.ins().jump(cont, &Self::block_args(&vals));

        self.b.switch_to_block(cont);
        let out = self.b.block_params(cont).to_vec();
        self.set_many(&op.results, &out)
    }
}
