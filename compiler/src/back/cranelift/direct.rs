//! Heap-tensor ops on `f64` (matrix product, transpose, sum, fill, elementwise
//! `+ - * /` of two heap tensors) lowered as calls of the typed routines of
//! [`mad_runtime::jit::direct`]: operands and result pass in registers, with
//! no stack buffers and no descriptor decoding. The op site's descriptor is
//! registered all the same, and the routine hands it to the general path for
//! every case its fast path declines, so results and errors (with the op's
//! source site) are those of `mad_rt_apply`.

use cranelift_codegen::ir::{InstBuilder, types};
use mad_runtime::jit::direct::binary_code;
use mad_runtime::jit::{ApplyDesc, FlatLayout, TensorOp};

use super::JitError;
use super::imports::Routine;
use super::lower::FnLower;
use crate::codegen::layout::flat_layout;
use crate::ir::{ScalarKind, ValueId};

/// A heap `f64` tensor whose extents are all known only at run time (so
/// every result shape fits the type, as the general path checks).
fn dyn_f64(l: &FlatLayout) -> bool {
    matches!(l, FlatLayout::Heap { elem: ScalarKind::F64, shape } if shape.iter().all(Option::is_none))
}

fn heap_f64(l: &FlatLayout) -> bool {
    matches!(
        l,
        FlatLayout::Heap {
            elem: ScalarKind::F64,
            ..
        }
    )
}

impl FnLower<'_, '_> {
    /// Lowers a heap op as a typed routine call when one computes it; returns
    /// `false` (emitting nothing) otherwise.
    pub fn try_direct(
        &mut self,
        op: &TensorOp,
        operands: &[ValueId],
        result: ValueId,
    ) -> Result<bool, JitError> {
        let args: Vec<FlatLayout> = operands.iter().map(|&v| flat_layout(self.ty(v))).collect();
        let res = flat_layout(self.ty(result));
        let routine = match (op, args.as_slice()) {
            (TensorOp::MatMul, [a, b]) if heap_f64(a) && heap_f64(b) && dyn_f64(&res) => {
                Routine::MatMulF64
            }
            (TensorOp::Transpose, [a]) if heap_f64(a) && dyn_f64(&res) => Routine::TransposeF64,
            (TensorOp::Sum, [a]) if heap_f64(a) && res == FlatLayout::Scalar(ScalarKind::F64) => {
                Routine::SumF64
            }
            (TensorOp::Full, [FlatLayout::Scalar(ScalarKind::F64), dims @ ..])
                if (1..=2).contains(&dims.len())
                    && dims
                        .iter()
                        .all(|d| *d == FlatLayout::Scalar(ScalarKind::I64))
                    && dyn_f64(&res) =>
            {
                Routine::FullF64
            }
            (TensorOp::Binary(b), [x, y])
                if binary_code(*b).is_some() && heap_f64(x) && heap_f64(y) && dyn_f64(&res) =>
            {
                Routine::BinaryF64
            }
            _ => return Ok(false),
        };
        let input = self.get_many(operands)?;
        let id = self.tables.descs.len() as i64;
        self.tables.descs.push(ApplyDesc {
            op: op.clone(),
            args,
            result: res,
        });
        let idv = self.b.ins().iconst(types::I32, id);
        let mut call = vec![self.ctx, idv];
        match (routine, op) {
            (Routine::FullF64, _) => {
                let zero = self.b.ins().iconst(types::I64, 0);
                let rank = self.b.ins().iconst(types::I64, input.len() as i64 - 1);
                call.push(input[0]);
                call.push(input[1]);
                call.push(input.get(2).copied().unwrap_or(zero));
                call.push(rank);
            }
            (Routine::BinaryF64, TensorOp::Binary(b)) => {
                let code = binary_code(*b).unwrap_or(0);
                call.push(self.b.ins().iconst(types::I32, code as i64));
                call.extend(input);
            }
            _ => call.extend(input),
        }
        self.store_site();
        let out = self.call_routine(routine, &call)?;
        self.set(result, out);
        Ok(true)
    }
}
