//! Inline lowering of ops on scalarized tensors (every operand and result a
//! scalar or a small static tensor): elementwise ops with scalar broadcast,
//! `full`, `extract`, `index`/`insert` at constant in-bounds indices (by picking
//! the element values), other `index`/`insert` (through a stack buffer, with
//! bounds checks that record an error and clamp to 0), `dim`, `matmul`,
//! `transpose` and `sum` (left to right from the first term, as the run time).

use mad_runtime::jit::broadcast::{broadcast_strides, matmul_shape};
use cranelift_codegen::ir::{
    InstBuilder, InstructionData, MemFlagsData, Opcode, Value, ValueDef, condcodes::IntCC, types,
};

use super::JitError;
use super::imports::Routine;
use super::layout::clif_kind;
use super::lower::{FnLower, unsupported};
use crate::codegen::layout::small_shape;
use crate::ir::{BinaryOp, Reduce, ScalarKind, Type, UnaryOp, ValueId};

impl FnLower<'_, '_> {
    fn kind(&self, v: ValueId) -> Result<ScalarKind, JitError> {
        self.ty(v)
            .scalar_kind()
            .ok_or_else(|| unsupported("expected a scalar or tensor operand"))
    }

    fn shape(&self, v: ValueId) -> Result<Vec<usize>, JitError> {
        small_shape(self.ty(v)).ok_or_else(|| unsupported("expected a small static tensor"))
    }

    pub fn elementwise_unary(
        &mut self,
        op: UnaryOp,
        x: ValueId,
        r: ValueId,
    ) -> Result<(), JitError> {
        let k = self.kind(x)?;
        let xs = self.get(x)?;
        let out = xs
            .iter()
            .map(|v| self.scalar_unary(op, k, *v))
            .collect::<Result<_, _>>()?;
        self.set(r, out);
        Ok(())
    }

    pub fn elementwise_binary(
        &mut self,
        op: BinaryOp,
        a: ValueId,
        b: ValueId,
        r: ValueId,
    ) -> Result<(), JitError> {
        let k = self.kind(a)?;
        if self.kind(b)? != k {
            return Err(unsupported(format!("`{}` on mixed kinds", op.name())));
        }
        let (xs, ys) = (self.get(a)?, self.get(b)?);
        let a_scalar = matches!(self.ty(a), Type::Scalar(_));
        let b_scalar = matches!(self.ty(b), Type::Scalar(_));
        let n = if a_scalar { ys.len() } else { xs.len() };
        if !a_scalar && !b_scalar && xs.len() != ys.len() {
            return Err(unsupported(format!(
                "`{}` on tensors of different shapes",
                op.name()
            )));
        }
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let x = if a_scalar { xs[0] } else { xs[i] };
            let y = if b_scalar { ys[0] } else { ys[i] };
            out.push(self.scalar_binary(op, k, x, y)?);
        }
        self.set(r, out);
        Ok(())
    }

    pub fn elementwise_cast(
        &mut self,
        to: ScalarKind,
        x: ValueId,
        r: ValueId,
    ) -> Result<(), JitError> {
        let from = self.kind(x)?;
        let xs = self.get(x)?;
        let out = xs
            .iter()
            .map(|v| self.scalar_cast(from, to, *v))
            .collect::<Result<_, _>>()?;
        self.set(r, out);
        Ok(())
    }

    pub fn small_full(&mut self, operands: &[ValueId], r: ValueId) -> Result<(), JitError> {
        let shape = self.shape(r)?;
        let (&v, extents) = operands
            .split_first()
            .ok_or_else(|| unsupported("tensor.full needs a value"))?;
        if extents.len() != shape.len() {
            return Err(unsupported("tensor.full needs one extent per axis"));
        }
        for (&e, &want) in extents.iter().zip(&shape) {
            let e = self.get1(e)?;
            let bad = self.b.ins().icmp_imm_s(IntCC::NotEqual, e, want as i64);
            let w = self.b.ins().iconst(types::I64, want as i64);
            self.error_if(bad, Routine::ErrorExtent, &[e, w])?;
        }
        let x = self.get1(v)?;
        self.set(r, vec![x; shape.iter().product()]);
        Ok(())
    }

    pub fn small_extract(&mut self, t: ValueId, i: u64, r: ValueId) -> Result<(), JitError> {
        let shape = self.shape(t)?;
        let len = *shape
            .first()
            .ok_or_else(|| unsupported("tensor.extract of a rank-0 tensor"))?;
        if i >= len as u64 {
            return Err(unsupported(format!(
                "tensor.extract index {i} out of bounds for length {len}"
            )));
        }
        let inner: usize = shape[1..].iter().product();
        let start = i as usize * inner;
        let slots = self.get(t)?[start..start + inner].to_vec();
        self.set(r, slots);
        Ok(())
    }

    /// The element offset of `t[idx..]` (each index checked, clamped to 0 when out of bounds).
    fn element_offset(&mut self, shape: &[usize], idx: &[ValueId]) -> Result<Value, JitError> {
        if idx.len() > shape.len() {
            return Err(unsupported("more indices than axes"));
        }
        let mut off = self.b.ins().iconst(types::I64, 0);
        for (axis, &iv) in idx.iter().enumerate() {
            let i = self.get1(iv)?;
            let len = shape[axis] as i64;
            let oob = self
                .b
                .ins()
                .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, i, len);
            let lenv = self.b.ins().iconst(types::I64, len);
            self.error_if(oob, Routine::ErrorIndex, &[i, lenv])?;
            let zero = self.b.ins().iconst(types::I64, 0);
            let ci = self.b.ins().select(oob, zero, i);
            let scaled = self.b.ins().imul_imm_s(off, len);
            off = self.b.ins().iadd(scaled, ci);
        }
        let inner: usize = shape[idx.len()..].iter().product();
        Ok(self.b.ins().imul_imm_s(off, inner as i64))
    }

    /// The element offset of `t[idx..]` when every index is a compile-time
    /// constant within its axis (no check, no stack buffer needed).
    fn constant_offset(
        &mut self,
        shape: &[usize],
        idx: &[ValueId],
    ) -> Result<Option<usize>, JitError> {
        if idx.len() > shape.len() {
            return Ok(None);
        }
        let mut off = 0usize;
        for (axis, &iv) in idx.iter().enumerate() {
            let i = self.get1(iv)?;
            let dfg = &self.b.func.dfg;
            let ValueDef::Result(inst, 0) = dfg.value_def(i) else {
                return Ok(None);
            };
            let InstructionData::UnaryImm {
                opcode: Opcode::Iconst,
                imm,
            } = dfg.insts[inst]
            else {
                return Ok(None);
            };
            let c = imm.bits();
            if c < 0 || c as u64 >= shape[axis] as u64 {
                return Ok(None);
            }
            off = off * shape[axis] + c as usize;
        }
        Ok(Some(off * shape[idx.len()..].iter().product::<usize>()))
    }

    pub fn small_index(&mut self, t: ValueId, idx: &[ValueId], r: ValueId) -> Result<(), JitError> {
        let shape = self.shape(t)?;
        if let Some(off) = self.constant_offset(&shape, idx)? {
            let inner: usize = shape[idx.len()..].iter().product();
            let slots = self.get(t)?[off..off + inner].to_vec();
            self.set(r, slots);
            return Ok(());
        }
        let elem = clif_kind(self.kind(t)?);
        let inner: usize = shape
            .get(idx.len()..)
            .map(|s| s.iter().product())
            .unwrap_or(1);
        let off = self.element_offset(&shape, idx)?;
        let base = match self.homes.get(&t) {
            Some(&home) => home,
            None => {
                let slots = self.get(t)?;
                self.spill(&slots, inner)
            }
        };
        let bytes = self.b.ins().imul_imm_s(off, 8);
        let addr = self.b.ins().iadd(base, bytes);
        let out = (0..inner)
            .map(|j| {
                self.b
                    .ins()
                    .load(elem, MemFlagsData::trusted(), addr, 8 * j as i32)
            })
            .collect();
        self.set(r, out);
        Ok(())
    }

    pub fn small_insert(
        &mut self,
        t: ValueId,
        v: ValueId,
        idx: &[ValueId],
        r: ValueId,
    ) -> Result<(), JitError> {
        let shape = self.shape(t)?;
        let elem = clif_kind(self.kind(t)?);
        let inner: usize = shape
            .get(idx.len()..)
            .map(|s| s.iter().product())
            .unwrap_or(1);
        let vs = self.get(v)?;
        if vs.len() != inner {
            return Err(unsupported(
                "tensor.insert value does not match the indexed part",
            ));
        }
        if let Some(off) = self.constant_offset(&shape, idx)? {
            let mut slots = self.get(t)?;
            slots[off..off + inner].copy_from_slice(&vs);
            self.set(r, slots);
            return Ok(());
        }
        let off = self.element_offset(&shape, idx)?;
        let slots = self.get(t)?;
        let base = self.spill(&slots, inner);
        let bytes = self.b.ins().imul_imm_s(off, 8);
        let addr = self.b.ins().iadd(base, bytes);
        for (j, x) in vs.iter().enumerate() {
            self.b
                .ins()
                .store(MemFlagsData::trusted(), *x, addr, 8 * j as i32);
        }
        let out = self.load_slots(base, &vec![elem; slots.len()]);
        self.set(r, out);
        Ok(())
    }

    pub fn small_dim(&mut self, t: ValueId, axis: u32, r: ValueId) -> Result<(), JitError> {
        let shape = self.shape(t)?;
        let n = *shape
            .get(axis as usize)
            .ok_or_else(|| unsupported("tensor.dim axis out of range"))?;
        let v = self.b.ins().iconst(types::I64, n as i64);
        self.set(r, vec![v]);
        Ok(())
    }

    /// Left-to-right sum from the first term: `((t0 + t1) + t2) + …`; 0 when empty.
    fn sum_terms(&mut self, k: ScalarKind, terms: &[Value]) -> Result<Value, JitError> {
        let Some((&first, rest)) = terms.split_first() else {
            return Ok(self.zero(clif_kind(k)));
        };
        let mut acc = first;
        for &t in rest {
            acc = self.scalar_binary(BinaryOp::Add, k, acc, t)?;
        }
        Ok(acc)
    }

    pub fn small_matmul(&mut self, a: ValueId, b: ValueId, r: ValueId) -> Result<(), JitError> {
        let (sa, sb) = (self.shape(a)?, self.shape(b)?);
        let k = self.kind(a)?;
        let layout = matmul_shape(&sa, &sb).ok_or_else(|| unsupported("matmul of mismatched shapes"))?;
        let (m, kk, n) = (layout.m, layout.k, layout.n);
        let (xs, ys) = (self.get(a)?, self.get(b)?);
        let mut out = Vec::with_capacity(layout.a_offsets.len() * m * n);
        for (&ao, &bo) in layout.a_offsets.iter().zip(&layout.b_offsets) {
            for i in 0..m {
                for j in 0..n {
                    let mut terms = Vec::with_capacity(kk);
                    for p in 0..kk {
                        terms.push(self.scalar_binary(BinaryOp::Mul, k, xs[ao + i * kk + p], ys[bo + p * n + j])?);
                    }
                    out.push(self.sum_terms(k, &terms)?);
                }
            }
        }
        self.set(r, out);
        Ok(())
    }

    pub fn small_transpose(&mut self, t: ValueId, r: ValueId) -> Result<(), JitError> {
        let shape = self.shape(t)?;
        let [m, n] = shape[..] else {
            return Err(unsupported("transpose needs a matrix"));
        };
        let xs = self.get(t)?;
        let out = (0..n)
            .flat_map(|j| (0..m).map(move |i| (i, j)))
            .map(|(i, j)| xs[i * n + j])
            .collect();
        self.set(r, out);
        Ok(())
    }

    pub fn small_sum(&mut self, t: ValueId, r: ValueId) -> Result<(), JitError> {
        let k = self.kind(t)?;
        if k == ScalarKind::Bool {
            return Err(unsupported("sum of bool"));
        }
        let xs = self.get(t)?;
        let s = self.sum_terms(k, &xs)?;
        self.set(r, vec![s]);
        Ok(())
    }

    /// `tensor.broadcast` of a small tensor: each result element is a copy of the slot it
    /// is stretched from.
    pub fn small_broadcast(&mut self, t: ValueId, r: ValueId) -> Result<(), JitError> {
        let (from, to) = (self.shape(t)?, self.shape(r)?);
        let strides = broadcast_strides(&from, &to).ok_or_else(|| unsupported("broadcast of mismatched shapes"))?;
        let xs = self.get(t)?;
        let out = row_major_sources(&strides, &to).into_iter().map(|i| xs[i]).collect();
        self.set(r, out);
        Ok(())
    }

    /// `tensor.permute` of a small tensor: the slots reordered.
    pub fn small_permute(&mut self, t: ValueId, perm: &[u32], r: ValueId) -> Result<(), JitError> {
        let from = self.shape(t)?;
        let to = self.shape(r)?;
        let mut strides = vec![0usize; from.len()];
        let mut s = 1;
        for axis in (0..from.len()).rev() {
            strides[axis] = s;
            s *= from[axis];
        }
        let moved: Vec<usize> = perm.iter().map(|&p| strides[p as usize]).collect();
        let xs = self.get(t)?;
        let out = row_major_sources(&moved, &to).into_iter().map(|i| xs[i]).collect();
        self.set(r, out);
        Ok(())
    }

    /// `tensor.sum_to`/`max_to`/`min_to` of a small tensor: each result slot folds, in
    /// row-major order, the elements broadcast from it.
    pub fn small_reduce_to(&mut self, t: ValueId, how: Reduce, r: ValueId) -> Result<(), JitError> {
        let (from, to) = (self.shape(t)?, self.shape(r)?);
        let strides = broadcast_strides(&to, &from).ok_or_else(|| unsupported("sum_to of mismatched shapes"))?;
        let k = self.kind(t)?;
        let xs = self.get(t)?;
        let mut terms = vec![Vec::new(); to.iter().product()];
        for (x, i) in xs.into_iter().zip(row_major_sources(&strides, &from)) {
            terms[i].push(x);
        }
        let mut out = Vec::with_capacity(terms.len());
        for ts in terms {
            out.push(match how {
                Reduce::Sum => self.sum_terms(k, &ts)?,
                Reduce::Max | Reduce::Min => {
                    let op = if how == Reduce::Max { BinaryOp::Max } else { BinaryOp::Min };
                    let (&first, rest) = ts.split_first().ok_or_else(|| unsupported("max_to/min_to of an empty tensor"))?;
                    let mut acc = first;
                    for &x in rest {
                        acc = self.scalar_binary(op, k, acc, x)?;
                    }
                    acc
                }
            });
        }
        self.set(r, out);
        Ok(())
    }
}

/// For every element of a tensor of shape `big`, in row-major order, the position it
/// reads in the tensor that `strides` describe (0 along broadcast axes).
fn row_major_sources(strides: &[usize], big: &[usize]) -> Vec<usize> {
    let count: usize = big.iter().product();
    (0..count)
        .map(|mut flat| {
            let mut at = 0;
            for axis in (0..big.len()).rev() {
                at += (flat % big[axis]) * strides[axis];
                flat /= big[axis];
            }
            at
        })
        .collect()
}
