//! Element loops ([`crate::codegen::element_loop`]) compiled by Cranelift: one function per
//! (kernel, workload) that runs a contiguous range of mesh elements by itself, with the
//! kernel's IR body inlined into the loop (no call, no argument or result buffers).
//!
//! The entry is `extern "C" fn(ctx, frame: *const BatchFrame) -> f64` and
//! returns the weighted energy sum of the range, accumulated in element order
//! from 0. Every output entry receives its contributions in element order, so
//! a range gives the same bits as the element-by-element path of the caller
//! for the energy, gradient and HVP.
//!
//! Hessians ([`crate::codegen::element_loop::BatchKind::Hess`]): the kernel returns the k×k block by columns
//! (column b = ∂(∇E)/∂z_b). Only the upper triangle (rows a ≤ b of column b) is
//! read; Cranelift then drops the code of the lower triangle as dead, and each
//! value is added to both the (a, b) and (b, a) slots. The two computed
//! halves of a symmetric block agree up to rounding, so entries can differ from
//! a full-block scatter in the last bits.
//!
//! **Pairs of elements.** Where the kernel has a lane-wise form and is large enough for it
//! to pay ([`worth_pairing`]), the loop runs two elements at a time: their inputs are gathered into the two lanes of 2×f64 vectors, the
//! kernel is lowered once on vectors ([`FnLower::wide`]: an `if` on a per-lane condition
//! runs both branches and selects, or the small branch alone when both lanes take it;
//! math routines are called per lane), and the two elements' results are added in
//! element order; a one-element loop takes the last element of an odd range. Each lane
//! computes the bits of the one-element code (IEEE operations on vectors round per lane,
//! and no fused multiply-add is formed), so results do not change. The vector units do
//! two elements' arithmetic per instruction, and the divisions and square roots of two
//! elements overlap. Kernels without a lane-wise form (loops, casts of per-element
//! values to integers, run-time checks that depend on the element) get the one-element
//! loop alone.
//!
//! Only kernels whose body is straight scalar code (small tensors, no heap
//! tensors, calls, prints or tape ops; `if`/loops are fine) are batched:
//! [`crate::codegen::element_loop::batchable`]. Run-time errors inside the kernel are recorded in the
//! context as usual; [`crate::back::native::BatchCaller::run`] returns the first one.

use cranelift_codegen::ir::{
    AbiParam, BlockArg, InstBuilder, MemFlagsData, Signature, Value, condcodes::FloatCC,
    condcodes::IntCC, types,
};
use cranelift_codegen::isa::CallConv;

use super::JitError;
use super::abi::PTR;
use super::layout::clif_types;
use super::lower::FnLower;
use crate::codegen::element_loop::{BatchFrame, BatchInput, BatchKind, BatchSpec};
use crate::ir;

const F_START: i32 = std::mem::offset_of!(BatchFrame, start) as i32;
const F_END: i32 = std::mem::offset_of!(BatchFrame, end) as i32;
const F_X: i32 = std::mem::offset_of!(BatchFrame, x) as i32;
const F_DOFS: i32 = std::mem::offset_of!(BatchFrame, dofs) as i32;
const F_SLOTS: i32 = std::mem::offset_of!(BatchFrame, slots) as i32;
const F_VERTS: i32 = std::mem::offset_of!(BatchFrame, verts) as i32;
const F_GRAD: i32 = std::mem::offset_of!(BatchFrame, grad) as i32;
const F_HESS: i32 = std::mem::offset_of!(BatchFrame, hess) as i32;
const F_V: i32 = std::mem::offset_of!(BatchFrame, v) as i32;
const F_OUT: i32 = std::mem::offset_of!(BatchFrame, out) as i32;
const F_WEIGHT: i32 = std::mem::offset_of!(BatchFrame, weight) as i32;
const F_CONSTS: i32 = std::mem::offset_of!(BatchFrame, consts) as i32;
const F_DATA: i32 = std::mem::offset_of!(BatchFrame, data) as i32;

/// The signature of a batched loop: `(ctx, frame) -> f64`.
pub fn batch_signature(cc: CallConv) -> Signature {
    let mut sig = Signature::new(cc);
    sig.params.extend([AbiParam::new(PTR), AbiParam::new(PTR)]);
    sig.returns.push(AbiParam::new(types::F64));
    sig
}

/// Whether the loop over pairs of elements is worth its gathers and extractions for
/// kernel `f`: its ops (nested regions included) number at least twice its input and
/// result slots. A spring's Hessian (97 ops for 6 dofs and 43 results) runs faster one
/// element at a time; a parameterization's (558 ops) 12 % faster in pairs.
pub fn worth_pairing(f: &ir::Function, spec: &BatchSpec) -> bool {
    let inputs: usize = f.param_types().iter().map(|t| clif_types(t).len()).sum();
    let slots = inputs + clif_types(&f.ret).len();
    spec.k > 0 && crate::analysis::op_count(f, &f.body) >= 2 * slots
}

impl FnLower<'_, '_> {
    /// Defines the body of a batched loop over the inlined function `self.f`.
    ///
    /// With `pairs`, the loop runs two elements at a time through the kernel lowered on
    /// 2×f64 vectors (see [`FnLower::wide`]); each lane computes what the one-element
    /// body computes, bit for bit, and the elements' results are added in element order.
    pub fn lower_batch(&mut self, spec: &BatchSpec, pairs: bool) -> Result<(), JitError> {
        let f = self.f;
        let t = MemFlagsData::trusted();
        let entry = self.b.create_block();
        self.b.append_block_params_for_function_params(entry);
        self.b.switch_to_block(entry);
        let p = self.b.block_params(entry).to_vec();
        self.ctx = p[0];
        let frame = p[1];
        let load_ptr = |me: &mut Self, off: i32| me.b.ins().load(PTR, t, frame, off);
        let start = load_ptr(self, F_START);
        let end = load_ptr(self, F_END);
        let x = load_ptr(self, F_X);
        let dofs = load_ptr(self, F_DOFS);
        let weight = self.b.ins().load(types::F64, t, frame, F_WEIGHT);
        let needs_verts = spec.inputs.iter().any(|i| {
            matches!(
                i,
                BatchInput::Data {
                    vertex: Some(_),
                    ..
                }
            )
        });
        let verts = if needs_verts {
            Some(load_ptr(self, F_VERTS))
        } else {
            None
        };
        let (grad, hess, v, out, slots) = match spec.kind {
            BatchKind::Value => (None, None, None, None, None),
            BatchKind::Grad => (Some(load_ptr(self, F_GRAD)), None, None, None, None),
            BatchKind::Hess => (
                Some(load_ptr(self, F_GRAD)),
                Some(load_ptr(self, F_HESS)),
                None,
                None,
                Some(load_ptr(self, F_SLOTS)),
            ),
            BatchKind::Hvp => (
                None,
                None,
                Some(load_ptr(self, F_V)),
                Some(load_ptr(self, F_OUT)),
                None,
            ),
            BatchKind::HessBlock => (Some(load_ptr(self, F_GRAD)), None, None, None, None),
        };
        let blocks = if spec.kind == BatchKind::HessBlock {
            Some(load_ptr(self, F_OUT))
        } else {
            None
        };
        // Loop invariants: params and data base pointers.
        let params = f.param_types();
        if params.len() < 1 + spec.inputs.len() {
            return Err(super::lower::unsupported(
                "batched kernel has too few parameters",
            ));
        }
        let consts = load_ptr(self, F_CONSTS);
        let data = load_ptr(self, F_DATA);
        let mut pre = Vec::new();
        for (i, input) in spec.inputs.iter().enumerate() {
            let tys = clif_types(&params[1 + i]);
            match *input {
                BatchInput::Data {
                    array,
                    vertex,
                    slots,
                } => {
                    if tys.len() != slots || tys.iter().any(|t| *t != types::F64) {
                        return Err(super::lower::unsupported(
                            "batched data input of the wrong layout",
                        ));
                    }
                    let base = self.b.ins().load(PTR, t, data, 8 * array as i32);
                    pre.push(Pre::Data {
                        base,
                        vertex,
                        slots,
                        tys,
                    });
                }
                BatchInput::Const { at } => {
                    let vals = tys
                        .iter()
                        .enumerate()
                        .map(|(j, ty)| self.b.ins().load(*ty, t, consts, 8 * (at + j) as i32))
                        .collect();
                    pre.push(Pre::Const(vals));
                }
            }
        }
        let env = Env {
            start,
            x,
            dofs,
            verts,
            grad,
            hess,
            v,
            out,
            slots,
            blocks,
            weight,
            pre,
        };
        // The contributions are added as they are for weight 1 (no multiplications; x·1
        // = x exactly) and scaled otherwise: a branch after the kernel, the same for every
        // element, so the kernel's code is there once per loop.
        let one = self.b.ins().f64const(1.0);
        let is_one = self.b.ins().fcmp(FloatCC::Equal, weight, one);
        let header = self.b.create_block();
        let body = self.b.create_block();
        let exit = self.b.create_block();
        self.b.append_block_param(header, types::I64);
        self.b.append_block_param(header, types::F64);
        self.b.append_block_param(exit, types::F64);
        let zero = self.b.ins().f64const(0.0);
        if pairs {
            // Two elements at a time, one per lane of 2×f64 vectors, while two are left;
            // the one-element loop below takes the last one.
            let pheader = self.b.create_block();
            let pbody = self.b.create_block();
            self.b.append_block_param(pheader, types::I64);
            self.b.append_block_param(pheader, types::F64);
            self.b
                .ins()
                .jump(pheader, &[BlockArg::Value(start), BlockArg::Value(zero)]);
            self.b.switch_to_block(pheader);
            let hp = self.b.block_params(pheader).to_vec();
            let (e, acc) = (hp[0], hp[1]);
            let e1 = self.b.ins().iadd_imm_s(e, 1);
            let more = self.b.ins().icmp(IntCC::UnsignedLessThan, e1, end);
            self.b.ins().brif(
                more,
                pbody,
                &[],
                header,
                &[BlockArg::Value(e), BlockArg::Value(acc)],
            );
            self.b.switch_to_block(pbody);
            let (args0, addr0) = self.gather_element(spec, &env, e)?;
            let (args1, addr1) = self.gather_element(spec, &env, e1)?;
            let mut args = Vec::with_capacity(args0.len());
            for (&a0, &a1) in args0.iter().zip(&args1) {
                let ty = self.b.func.dfg.value_type(a0);
                args.push(if ty != types::F64 {
                    // A uniform param (the same value in both lanes).
                    a0
                } else if a0 == a1 {
                    self.b.ins().splat(types::F64X2, a0)
                } else {
                    let lo = self.b.ins().scalar_to_vector(types::F64X2, a0);
                    self.b.ins().insertlane(lo, a1, 1)
                });
            }
            self.wide = true;
            let res = self.inline_kernel(&args);
            self.wide = false;
            let res = res?;
            let mut lanes = Vec::with_capacity(2);
            for lane in 0..2u8 {
                let lane_res: Vec<Value> = res
                    .iter()
                    .map(|&r| {
                        if self.b.func.dfg.value_type(r).is_vector() {
                            self.b.ins().extractlane(r, lane)
                        } else {
                            r
                        }
                    })
                    .collect();
                lanes.push(lane_res);
            }
            let next = self.b.ins().iadd_imm_s(e, 2);
            let elements = [(e, addr0.as_slice(), lanes[0].as_slice()), (e1, addr1.as_slice(), lanes[1].as_slice())];
            self.scatter_weighted(spec, &env, is_one, &elements, acc, pheader, next)?;
        } else {
            self.b
                .ins()
                .jump(header, &[BlockArg::Value(start), BlockArg::Value(zero)]);
        }

        self.b.switch_to_block(header);
        let hp = self.b.block_params(header).to_vec();
        let (e, acc) = (hp[0], hp[1]);
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, e, end);
        self.b
            .ins()
            .brif(more, body, &[], exit, &[BlockArg::Value(acc)]);

        self.b.switch_to_block(body);
        let (args, addr_of) = self.gather_element(spec, &env, e)?;
        let res = self.inline_kernel(&args)?;
        let next = self.b.ins().iadd_imm_s(e, 1);
        self.scatter_weighted(spec, &env, is_one, &[(e, &addr_of, &res)], acc, header, next)?;

        self.b.switch_to_block(exit);
        let sum = self.b.block_params(exit)[0];
        self.b.ins().return_(&[sum]);
        Ok(())
    }

    /// Adds the results of `elements` (in order) into the outputs, unscaled where `is_one`
    /// holds and scaled by the weight otherwise, then jumps to `header` with `next` and the
    /// energy sum.
    #[allow(clippy::too_many_arguments)]
    fn scatter_weighted(
        &mut self,
        spec: &BatchSpec,
        env: &Env,
        is_one: Value,
        elements: &[(Value, &[Value], &[Value])],
        acc: Value,
        header: cranelift_codegen::ir::Block,
        next: Value,
    ) -> Result<(), JitError> {
        self.store_blocks(spec, env, elements);
        let (unit_b, weighted_b) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(is_one, unit_b, &[], weighted_b, &[]);
        for (weighted, block) in [(false, unit_b), (true, weighted_b)] {
            self.b.switch_to_block(block);
            let mut acc = acc;
            for &(e, addr_of, res) in elements {
                acc = self.scatter_element(spec, env, weighted, e, addr_of, res, acc)?;
            }
            self.b
                .ins()
                .jump(header, &[BlockArg::Value(next), BlockArg::Value(acc)]);
        }
        Ok(())
    }

    /// Writes each element's unweighted k×k block, row-major, into its rows of the block
    /// buffer (`HessBlock`), before the weighted and unweighted paths split (it is the same
    /// in both). The elements' rows are disjoint and nothing in the loop reads them, so
    /// each entry is stored for every element at once: with two elements in the lanes of
    /// one vector, that vector is dead after its two stores instead of being kept for the
    /// second element's pass.
    fn store_blocks(&mut self, spec: &BatchSpec, env: &Env, elements: &[(Value, &[Value], &[Value])]) {
        let Some(buf) = env.blocks else { return };
        let (k, t) = (spec.k, MemFlagsData::trusted());
        let rows: Vec<Value> = elements
            .iter()
            .map(|&(e, _, _)| {
                let rel = self.b.ins().isub(e, env.start);
                let boff = self.b.ins().imul_imm_s(rel, 8 * (k * k) as i64);
                self.b.ins().iadd(buf, boff)
            })
            .collect();
        for b in 0..k {
            for a in 0..=b {
                for (&(_, _, res), &bp) in elements.iter().zip(&rows) {
                    let val = res[1 + k + b * k + a];
                    self.b.ins().store(t, val, bp, 8 * (a * k + b) as i32);
                    if a != b {
                        self.b.ins().store(t, val, bp, 8 * (b * k + a) as i32);
                    }
                }
            }
        }
    }

    /// The kernel's body inlined on `args`; returns its result slots. Its values are
    /// forgotten afterwards, so that the next copy of the body starts afresh.
    fn inline_kernel(&mut self, args: &[Value]) -> Result<Vec<Value>, JitError> {
        let f = self.f;
        self.vals = vec![None; f.values.len()];
        self.homes.clear();
        self.set_many(&f.body.args, args)?;
        self.lower_ops(&f.body.ops)?;
        let res = self.get_many_as(&f.body.yields, std::slice::from_ref(&f.ret));
        self.vals = vec![None; f.values.len()];
        self.homes.clear();
        res
    }

    /// The kernel arguments of element `e` (its dofs through the dof indices, its data,
    /// the params, the HVP direction) and the byte offset of each of its dofs.
    fn gather_element(
        &mut self,
        spec: &BatchSpec,
        env: &Env,
        e: Value,
    ) -> Result<(Vec<Value>, Vec<Value>), JitError> {
        let k = spec.k;
        let t = MemFlagsData::trusted();
        let row = self.b.ins().imul_imm_s(e, 4 * k as i64);
        let drow = self.b.ins().iadd(env.dofs, row);
        let mut addr_of = Vec::with_capacity(k);
        let mut args = Vec::new();
        for a in 0..k {
            let d = self.b.ins().uload32(t, drow, 4 * a as i32);
            let off = self.b.ins().ishl_imm_u(d, 3);
            addr_of.push(off);
            let xa = self.b.ins().iadd(env.x, off);
            args.push(self.b.ins().load(types::F64, t, xa, 0));
        }
        for p in &env.pre {
            match p {
                Pre::Const(vals) => args.extend(vals),
                Pre::Data {
                    base,
                    vertex,
                    slots,
                    tys,
                } => {
                    let ent = match vertex {
                        None => e,
                        Some(vx) => {
                            let vrow = self.b.ins().imul_imm_s(e, 4 * spec.nverts as i64);
                            let vp = env
                                .verts
                                .ok_or_else(|| super::lower::unsupported("vertex table missing"))?;
                            let vr = self.b.ins().iadd(vp, vrow);
                            self.b.ins().uload32(t, vr, 4 * *vx as i32)
                        }
                    };
                    let off = self.b.ins().imul_imm_s(ent, 8 * *slots as i64);
                    let at = self.b.ins().iadd(*base, off);
                    for (j, ty) in tys.iter().enumerate() {
                        args.push(self.b.ins().load(*ty, t, at, 8 * j as i32));
                    }
                }
            }
        }
        if let Some(vp) = env.v {
            for off in &addr_of {
                let va = self.b.ins().iadd(vp, *off);
                args.push(self.b.ins().load(types::F64, t, va, 0));
            }
        }
        Ok((args, addr_of))
    }

    /// Adds element `e`'s results `res` (scalars) into the outputs; returns the energy sum
    /// with its value added.
    #[allow(clippy::too_many_arguments)]
    fn scatter_element(
        &mut self,
        spec: &BatchSpec,
        env: &Env,
        weighted: bool,
        e: Value,
        addr_of: &[Value],
        res: &[Value],
        acc: Value,
    ) -> Result<Value, JitError> {
        let k = spec.k;
        let t = MemFlagsData::trusted();
        let weight = env.weight;
        let scale = |me: &mut Self, v: Value| {
            if weighted {
                me.b.ins().fmul(weight, v)
            } else {
                v
            }
        };
        let add_at = |me: &mut Self, base: Value, off: Value, val: Value| {
            let wv = scale(me, val);
            let a = me.b.ins().iadd(base, off);
            let old = me.b.ins().load(types::F64, t, a, 0);
            let new = me.b.ins().fadd(old, wv);
            me.b.ins().store(t, new, a, 0);
        };
        let acc = match spec.kind {
            BatchKind::Hvp => acc,
            _ => {
                let wv = scale(self, res[0]);
                self.b.ins().fadd(acc, wv)
            }
        };
        if let Some(g) = env.grad {
            for (a, off) in addr_of.iter().enumerate() {
                add_at(self, g, *off, res[1 + a]);
            }
        }
        if let (Some(h), Some(sl), false) = (env.hess, env.slots, spec.runs.is_empty()) {
            // Compact slots: one per (row, run of consecutive columns).
            let nr = spec.runs.len();
            let mut run_of = Vec::with_capacity(k);
            for (r, &len) in spec.runs.iter().enumerate() {
                run_of.extend((0..len).map(|c| (r, c)));
            }
            if run_of.len() != k {
                return Err(super::lower::unsupported(
                    "batched Hessian runs do not cover the local dofs",
                ));
            }
            let srow = self.b.ins().imul_imm_s(e, 4 * (k * nr) as i64);
            let srow = self.b.ins().iadd(sl, srow);
            // Bit 31 of a slot marks the first write of its run in the
            // schedule (`energy::eval::first_touch::FirstStore`): the old value
            // is then masked to +0.0 (it may be anything), else kept.
            let mut base = Vec::with_capacity(k * nr);
            let mut keep = Vec::with_capacity(k * nr);
            for i in 0..k * nr {
                let slot = self.b.ins().uload32(t, srow, 4 * i as i32);
                let first = self.b.ins().ushr_imm_u(slot, 31);
                let keep_bits = self.b.ins().iadd_imm_s(first, -1);
                keep.push(self.b.ins().bitcast(types::F64, MemFlagsData::new(), keep_bits));
                let slot = self.b.ins().band_imm_u(slot, 0x7fff_ffff);
                let off = self.b.ins().ishl_imm_u(slot, 3);
                base.push(self.b.ins().iadd(h, off));
            }
            for b in 0..k {
                for a in 0..=b {
                    let val = res[1 + k + b * k + a];
                    let wv = scale(self, val);
                    let (rb, cb) = run_of[b];
                    let (ra, ca) = run_of[a];
                    let mut at = vec![(a * nr + rb, cb)];
                    if a != b {
                        at.push((b * nr + ra, ca));
                    }
                    for (entry, c) in at {
                        let p = base[entry];
                        let old = self.b.ins().load(types::F64, t, p, 8 * c as i32);
                        let old = self.b.ins().band(old, keep[entry]);
                        let new = self.b.ins().fadd(old, wv);
                        self.b.ins().store(t, new, p, 8 * c as i32);
                    }
                }
            }
        } else if let (Some(h), Some(sl)) = (env.hess, env.slots) {
            let srow = self.b.ins().imul_imm_s(e, 4 * (k * k) as i64);
            let srow = self.b.ins().iadd(sl, srow);
            for b in 0..k {
                for a in 0..=b {
                    let val = res[1 + k + b * k + a];
                    let wv = scale(self, val);
                    let pairs: &[usize] = if a == b {
                        &[a * k + b]
                    } else {
                        &[a * k + b, b * k + a]
                    };
                    for &s in pairs {
                        let slot = self.b.ins().uload32(t, srow, 4 * s as i32);
                        let off = self.b.ins().ishl_imm_u(slot, 3);
                        let at = self.b.ins().iadd(h, off);
                        let old = self.b.ins().load(types::F64, t, at, 0);
                        let new = self.b.ins().fadd(old, wv);
                        self.b.ins().store(t, new, at, 0);
                    }
                }
            }
        }
        if let Some(o) = env.out {
            for (a, off) in addr_of.iter().enumerate() {
                add_at(self, o, *off, res[a]);
            }
        }
        Ok(acc)
    }
}

/// How a kernel parameter after `z` is filled in the loop.
enum Pre {
    Data {
        base: Value,
        vertex: Option<u8>,
        slots: usize,
        tys: Vec<types::Type>,
    },
    Const(Vec<Value>),
}

/// The loop-invariant values of a batched loop.
struct Env {
    start: Value,
    x: Value,
    dofs: Value,
    verts: Option<Value>,
    grad: Option<Value>,
    hess: Option<Value>,
    v: Option<Value>,
    out: Option<Value>,
    slots: Option<Value>,
    blocks: Option<Value>,
    weight: Value,
    pre: Vec<Pre>,
}
