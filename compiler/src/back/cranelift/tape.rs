//! `tape.push` / `tape.pop`: the operands' slots (scalars, small-tensor elements,
//! heap-tensor pointers, which stay valid until the context is reset) go through
//! a stack buffer to `mad_rt_tape_push`, and come back from `mad_rt_tape_pop` in
//! the layout of the pop's result types.

use cranelift_codegen::ir::{InstBuilder, types};

use super::JitError;
use super::imports::Routine;
use super::layout::clif_types;
use super::lower::{FnLower, unsupported};
use crate::ir::{self, OpKind};

impl FnLower<'_, '_> {
    pub fn lower_tape(&mut self, op: &ir::Op) -> Result<(), JitError> {
        match op.kind {
            OpKind::TapePush => {
                let slots = self.get_many(&op.operands)?;
                let addr = self.spill(&slots, 1);
                let n = self.b.ins().iconst(types::I64, slots.len() as i64);
                self.call_routine(Routine::TapePush, &[self.ctx, addr, n])?;
                Ok(())
            }
            OpKind::TapePop => {
                let mut tys = Vec::new();
                for &r in &op.results {
                    tys.extend(clif_types(self.ty(r)));
                }
                let addr = self.buffer(tys.len());
                let n = self.b.ins().iconst(types::I64, tys.len() as i64);
                self.call_routine(Routine::TapePop, &[self.ctx, addr, n])?;
                let slots = self.load_slots(addr, &tys);
                self.set_many(&op.results, &slots)
            }
            _ => Err(unsupported(format!(
                "`{}` is not a tape op",
                op.kind.name()
            ))),
        }
    }
}
