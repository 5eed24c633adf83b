//! A `sin`/`cos` pair of one operand ([`crate::codegen::sincos`]) as one call of the C
//! library's `sincos`.

use cranelift_codegen::ir::{InstBuilder, MemFlagsData, types};

use super::JitError;
use super::imports::Routine;
use super::lower::FnLower;
use crate::codegen::sincos::sin_or_cos;
use crate::ir::OpId;

impl FnLower<'_, '_> {
    /// Lowers the `sin`/`cos` pair `(a, b)` (same operand) as one `sincos` call.
    pub fn lower_sincos(&mut self, a: OpId, b: OpId) -> Result<(), JitError> {
        let f = self.f;
        let (Some((x, a_is_sin)), Some(_)) = (sin_or_cos(f, a), sin_or_cos(f, b)) else {
            self.lower_op(a)?;
            return self.lower_op(b);
        };
        self.cur_op = Some(a);
        let xv = self.get1(x)?;
        let buf = self.buffer(2);
        let cos_addr = self.b.ins().iadd_imm_s(buf, 8);
        self.call_routine(Routine::SinCos, &[xv, buf, cos_addr])?;
        let s = self
            .b
            .ins()
            .load(types::F64, MemFlagsData::trusted(), buf, 0);
        let c = self
            .b
            .ins()
            .load(types::F64, MemFlagsData::trusted(), buf, 8);
        let (sin_op, cos_op) = if a_is_sin { (a, b) } else { (b, a) };
        self.set(f.ops[sin_op].results[0], vec![s]);
        self.set(f.ops[cos_op].results[0], vec![c]);
        Ok(())
    }
}
