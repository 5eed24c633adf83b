//! Op lowering: the per-function state, the helpers every lowering uses
//! (routine calls, error branches, stack buffers), and the dispatch over
//! [`OpKind`]. Scalar instruction selection is in [`super::scalar`], inline
//! small-tensor ops in [`super::tensor`], control flow and calls in
//! [`super::control`]; ops that touch heap tensors go to the run time through
//! one op-site descriptor each ([`Tables::descs`]).

use std::collections::HashMap;

use cranelift_codegen::ir::{
    BlockArg, FuncRef, InstBuilder, MemFlagsData, StackSlotData, StackSlotKind, Value,
    condcodes::IntCC, types,
};
use cranelift_frontend::FunctionBuilder;
use cranelift_jit::JITModule;
use cranelift_module::FuncId;
use mad_runtime::jit::{ApplyDesc, FlatLayout, TensorOp};

use super::JitError;
use super::imports::{Imports, Routine};
use super::layout::{clif_types, slot_types};
use crate::codegen::layout::{flat_layout, has_heap, same_repr};
use crate::ir::{self, OpId, OpKind, Type, ValueId};

/// Tables compiled code refers to by index at run time.
#[derive(Default)]
pub struct Tables {
    /// Value layouts (for `print`), by id.
    pub layouts: Vec<FlatLayout>,
    layout_ids: HashMap<Type, u32>,
    /// Heap-op sites, by id.
    pub descs: Vec<ApplyDesc>,
    /// Source sites of ops that may fail, by id (what `JitContext::site` indexes).
    pub sites: Vec<crate::back::ErrorSite>,
    /// Texts of `print.str` ops; compiled code holds their addresses, so the
    /// module keeps them alive (a boxed `str` never moves).
    pub strings: Vec<Box<str>>,
}

impl Tables {
    pub fn layout_id(&mut self, ty: &Type) -> u32 {
        if let Some(id) = self.layout_ids.get(ty) {
            return *id;
        }
        let id = self.layouts.len() as u32;
        self.layouts.push(flat_layout(ty));
        self.layout_ids.insert(ty.clone(), id);
        id
    }
}

/// The state of lowering one IR function.
pub struct FnLower<'a, 'b> {
    pub b: FunctionBuilder<'b>,
    pub module: &'a mut JITModule,
    pub imports: &'a mut Imports,
    pub routines: HashMap<Routine, FuncRef>,
    pub user_ids: &'a [FuncId],
    /// The module's functions (callee signatures).
    pub module_funcs: &'a ir::Arena<ir::Function>,
    pub user_refs: HashMap<usize, FuncRef>,
    pub f: &'a ir::Function,
    pub tables: &'a mut Tables,
    /// The Cranelift values of each IR value (its flattened slots).
    pub vals: Vec<Option<Vec<Value>>>,
    /// The run-time context pointer.
    pub ctx: Value,
    /// The op being lowered (for the source site of its run-time errors).
    pub cur_op: Option<OpId>,
    /// What the codegen layer knows of `f` (in-place inserts, released and polled
    /// loops, loop versions, `sin`/`cos` pairs).
    pub info: &'a crate::codegen::FunctionInfo,
    /// Whether loops in [`crate::codegen::FunctionInfo::release`] free their trips'
    /// temporaries (not inside an element loop, whose kernel allocates nothing).
    pub releases: bool,
    /// Header values of heap tensors read inside the loops being lowered,
    /// computed in front of the loop ([`super::invariant`]).
    pub heap_views: HashMap<ValueId, super::heap::HeapView>,
    /// Element reads whose bounds are proved in front of the loop copy being
    /// lowered ([`super::version`]).
    pub unchecked: std::collections::HashSet<OpId>,
    /// Lowering for two elements at once (the paired batched loop, [`super::batch`]): every
    /// `f64` is a 2×f64 vector, one element per lane, and a comparison of them a per-lane
    /// mask (`i64x2`); integers and `bool`s of integer comparisons stay scalars, the same
    /// in both lanes. An `if` on a mask runs both branches and selects per lane (only
    /// without run-time errors inside: [`FnLower::converting`]). What has no lane-wise form
    /// here (calls of math routines, loops, casts of per-lane values, per-lane errors) is
    /// reported as unsupported, and the caller builds the one-element loop alone.
    pub wide: bool,
    /// The depth of `if`s being lowered as per-lane selects: their branches run for every
    /// lane, so no run-time error may be raised inside them.
    pub converting: usize,
    /// The scalarized tensors read at run-time indices ([`super::homes`]).
    pub indexed: std::collections::HashSet<ValueId>,
    /// The stack homes of those defined so far: each one's entries, stored where it is
    /// defined.
    pub homes: HashMap<ValueId, Value>,
}

impl FnLower<'_, '_> {
    /// The tensor a `tensor.pack` of scalar constants (of one kind) builds, if it is one.
    fn constant_pack(&self, op: &ir::Op) -> Option<mad_runtime::Tensor> {
        if op.operands.len() < 2 {
            return None;
        }
        let wanted: std::collections::HashSet<ValueId> = op.operands.iter().copied().collect();
        let mut lits: HashMap<ValueId, ir::Literal> = HashMap::new();
        for (_, o) in self.f.ops.iter() {
            if let (OpKind::Const(lit), [v]) = (&o.kind, o.results.as_slice())
                && wanted.contains(v)
            {
                lits.insert(*v, *lit);
            }
        }
        let values: Vec<mad_runtime::Value> = op
            .operands
            .iter()
            .map(|v| {
                lits.get(v).map(|lit| match *lit {
                    ir::Literal::F64(x) => mad_runtime::Value::F64(x),
                    ir::Literal::F32(x) => mad_runtime::Value::F32(x),
                    ir::Literal::I64(x) => mad_runtime::Value::I64(x),
                    ir::Literal::Bool(x) => mad_runtime::Value::Bool(x),
                })
            })
            .collect::<Option<_>>()?;
        match mad_runtime::jit::tensor::apply(&TensorOp::Pack, &values.into_iter().map(mad_runtime::jit::layout::Arg::Scalar).collect::<Vec<_>>()) {
            Ok(mad_runtime::Value::Tensor(t)) => Some(t),
            _ => None,
        }
    }
}

pub(super) fn unsupported(what: impl Into<String>) -> JitError {
    JitError::Unsupported(what.into())
}

impl<'a, 'b> FnLower<'a, 'b> {
    pub fn ty(&self, v: ValueId) -> &'a Type {
        &self.f.values[v].ty
    }

    pub fn get(&self, v: ValueId) -> Result<Vec<Value>, JitError> {
        self.vals
            .get(v.index())
            .and_then(|x| x.clone())
            .ok_or_else(|| {
                unsupported(format!(
                    "value {v:?} used before it is defined in `{}`",
                    self.f.name
                ))
            })
    }

    /// The single slot of a scalar value.
    pub fn get1(&self, v: ValueId) -> Result<Value, JitError> {
        self.get(v)?
            .first()
            .copied()
            .ok_or_else(|| unsupported(format!("value {v:?} is not a scalar")))
    }

    /// Operand `i` of `op`.
    pub fn operand(&self, op: &ir::Op, i: usize) -> Result<ValueId, JitError> {
        op.operands
            .get(i)
            .copied()
            .ok_or_else(|| unsupported(format!("`{}` is missing operand {i}", op.kind.name())))
    }

    pub fn set(&mut self, v: ValueId, slots: Vec<Value>) {
        self.make_home(v, &slots);
        if self.vals.len() <= v.index() {
            self.vals.resize(v.index() + 1, None);
        }
        self.vals[v.index()] = Some(slots);
    }

    /// Defines `results` from the concatenation of their slots.
    pub fn set_many(&mut self, results: &[ValueId], slots: &[Value]) -> Result<(), JitError> {
        let mut pos = 0;
        for &r in results {
            let n = clif_types(self.ty(r)).len();
            let part = slots
                .get(pos..pos + n)
                .ok_or_else(|| unsupported("result slot count mismatch"))?;
            self.set(r, part.to_vec());
            pos += n;
        }
        Ok(())
    }

    /// The concatenated slots of several values.
    pub fn get_many(&self, vs: &[ValueId]) -> Result<Vec<Value>, JitError> {
        let mut out = Vec::new();
        for &v in vs {
            out.extend(self.get(v)?);
        }
        Ok(out)
    }

    pub fn routine(&mut self, r: Routine) -> Result<FuncRef, JitError> {
        self.imports
            .func_ref(self.module, self.b.func, &mut self.routines, r)
            .map_err(JitError::Module)
    }

    pub fn call_routine(&mut self, r: Routine, args: &[Value]) -> Result<Vec<Value>, JitError> {
        let fr = self.routine(r)?;
        let inst = self.b.ins().call(fr, args);
        Ok(self.b.inst_results(inst).to_vec())
    }

    /// If `cond` is nonzero, calls the error routine `r` with `ctx` and `args`; continues either way.
    /// Stores the current op's source site into the context, so that an error a
    /// routine records next can name its place in the source.
    pub fn store_site(&mut self) {
        let site = self.site_id();
        let v = self.b.ins().iconst(types::I64, site);
        self.b.ins().store(
            MemFlagsData::trusted(),
            v,
            self.ctx,
            mad_runtime::jit::context::OFFSET_SITE,
        );
    }

    /// The site-table index of the current op's source position (or `NO_SITE`).
    fn site_id(&mut self) -> i64 {
        match (self.f.source_file, self.cur_op) {
            (Some(file), Some(op)) if self.f.span(op) != Default::default() => {
                self.tables.sites.push(crate::back::ErrorSite {
                    file,
                    span: self.f.span(op),
                });
                (self.tables.sites.len() - 1) as i64
            }
            _ => mad_runtime::jit::context::NO_SITE as i64,
        }
    }

    pub fn error_if(&mut self, cond: Value, r: Routine, args: &[Value]) -> Result<(), JitError> {
        if self.wide && self.known_false(cond) {
            // A check of constants that passes (the extents of a `full`): nothing can fail.
            return Ok(());
        }
        if self.wide && (self.converting > 0 || self.b.func.dfg.value_type(cond).is_vector()) {
            return Err(unsupported("a run-time error check on two lanes"));
        }
        let err = self.b.create_block();
        let cont = self.b.create_block();
        self.b.set_cold_block(err);
        self.b.ins().brif(cond, err, &[], cont, &[]);
        self.b.switch_to_block(err);
        if let (Routine::ErrorIndex, &[index, len]) = (r, args) {
            // Recorded inline (no call, so values live across the check stay in
            // registers): the first error wins, as in `JitContext::set_error`.
            use mad_runtime::jit::context::{
                INLINE_INDEX_ERROR, OFFSET_HAS_ERROR, OFFSET_PENDING_INDEX,
            };
            let record = self.b.create_block();
            self.b.set_cold_block(record);
            let flag = self.b.ins().load(
                types::I64,
                MemFlagsData::trusted(),
                self.ctx,
                OFFSET_HAS_ERROR,
            );
            self.b.ins().brif(flag, cont, &[], record, &[]);
            self.b.switch_to_block(record);
            let site = self.site_id();
            let site = self.b.ins().iconst(types::I64, site);
            let code = self.b.ins().iconst(types::I64, INLINE_INDEX_ERROR as i64);
            for (k, v) in [index, len, site].into_iter().enumerate() {
                self.b.ins().store(
                    MemFlagsData::trusted(),
                    v,
                    self.ctx,
                    OFFSET_PENDING_INDEX + 8 * k as i32,
                );
            }
            self.b
                .ins()
                .store(MemFlagsData::trusted(), code, self.ctx, OFFSET_HAS_ERROR);
            self.b.ins().jump(cont, &[]);
            self.b.switch_to_block(cont);
            return Ok(());
        }
        self.store_site();
        let mut all = vec![self.ctx];
        all.extend_from_slice(args);
        self.call_routine(r, &all)?;
        self.b.ins().jump(cont, &[]);
        self.b.switch_to_block(cont);
        Ok(())
    }

    /// Whether `cond` is a comparison of two integer constants that is false (the form
    /// the tensor checks take for constant extents and indices).
    fn known_false(&self, cond: Value) -> bool {
        use cranelift_codegen::ir::{InstructionData, Opcode, ValueDef};
        let dfg = &self.b.func.dfg;
        let ValueDef::Result(inst, 0) = dfg.value_def(cond) else {
            return false;
        };
        let InstructionData::IntCompare { cond: cc, args, .. } = dfg.insts[inst] else {
            return false;
        };
        let constant = |v: Value| match dfg.value_def(v) {
            ValueDef::Result(def, 0) => match dfg.insts[def] {
                InstructionData::UnaryImm { opcode: Opcode::Iconst, imm } => Some(imm.bits()),
                _ => None,
            },
            _ => None,
        };
        let (Some(a), Some(b)) = (constant(args[0]), constant(args[1])) else {
            return false;
        };
        match cc {
            IntCC::NotEqual => a == b,
            IntCC::Equal => a != b,
            IntCC::UnsignedGreaterThanOrEqual => (a as u64) < (b as u64),
            _ => false,
        }
    }

    /// 1 (`i8`) when no run-time error is recorded.
    pub fn no_error(&mut self) -> Value {
        let flag = self.b.ins().load(
            types::I64,
            MemFlagsData::trusted(),
            self.ctx,
            mad_runtime::jit::context::OFFSET_HAS_ERROR,
        );
        self.b.ins().icmp_imm_s(IntCC::Equal, flag, 0)
    }

    /// A stack buffer of `n` 8-byte slots (at least one); returns its address.
    pub fn buffer(&mut self, n: usize) -> Value {
        let size = 8 * n.max(1) as u32;
        let ss = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            size,
            3,
        ));
        self.b.ins().stack_addr(types::I64, ss, 0)
    }

    /// Stores `vals` into a fresh buffer, one per 8-byte slot; returns its address.
    pub fn spill(&mut self, vals: &[Value], min_slots: usize) -> Value {
        let addr = self.buffer(vals.len().max(min_slots));
        for (i, v) in vals.iter().enumerate() {
            self.b
                .ins()
                .store(MemFlagsData::trusted(), *v, addr, 8 * i as i32);
        }
        addr
    }

    pub fn load_slots(&mut self, addr: Value, tys: &[types::Type]) -> Vec<Value> {
        tys.iter()
            .enumerate()
            .map(|(i, t)| {
                self.b
                    .ins()
                    .load(*t, MemFlagsData::trusted(), addr, 8 * i as i32)
            })
            .collect()
    }

    pub fn zero(&mut self, t: types::Type) -> Value {
        match t {
            types::F64 if self.wide => {
                let z = self.b.ins().f64const(0.0);
                self.b.ins().splat(types::F64X2, z)
            }
            types::F64 => self.b.ins().f64const(0.0),
            types::F32 => self.b.ins().f32const(0.0),
            t => self.b.ins().iconst(t, 0),
        }
    }

    pub fn block_args(vals: &[Value]) -> Vec<BlockArg> {
        vals.iter().map(|v| BlockArg::Value(*v)).collect()
    }

    /// Lowers every op of a region, in order.
    pub fn lower_ops(&mut self, ops: &[OpId]) -> Result<(), JitError> {
        let pairs = &self.info.sincos;
        let mut done = std::collections::HashSet::new();
        for &op in ops {
            if done.contains(&op) {
                continue;
            }
            match pairs.get(&op) {
                Some(_) if self.wide => return Err(unsupported("sin and cos on two lanes")),
                Some(&other) => {
                    self.lower_sincos(op, other)?;
                    done.insert(other);
                }
                None => self.lower_op(op)?,
            }
        }
        Ok(())
    }

    /// Hands an op site to the run time: operands and result go through stack buffers.
    pub fn apply(
        &mut self,
        op: TensorOp,
        operands: &[ValueId],
        result: ValueId,
    ) -> Result<(), JitError> {
        if self.try_direct(&op, operands, result)? {
            return Ok(());
        }
        let args = operands.iter().map(|&v| flat_layout(self.ty(v))).collect();
        let input = self.get_many(operands)?;
        let out = self.apply_slots(op, args, &input, flat_layout(self.ty(result)))?;
        self.set(result, out);
        Ok(())
    }

    /// Calls `mad_rt_apply` for a new op site; returns the result's slots.
    pub fn apply_slots(
        &mut self,
        op: TensorOp,
        args: Vec<FlatLayout>,
        input: &[Value],
        result: FlatLayout,
    ) -> Result<Vec<Value>, JitError> {
        let mut out_tys = Vec::new();
        slot_types(&result, &mut out_tys);
        let id = self.tables.descs.len() as i64;
        self.tables.descs.push(ApplyDesc { op, args, result });
        let in_addr = self.spill(input, 1);
        let out_addr = self.buffer(out_tys.len());
        let idv = self.b.ins().iconst(types::I32, id);
        self.store_site();
        self.call_routine(Routine::Apply, &[self.ctx, idv, in_addr, out_addr])?;
        Ok(self.load_slots(out_addr, &out_tys))
    }

    /// Converts slots of a value of type `from` to the layout of the compatible type `to`
    /// (a small tensor to a heap tensor or back, part by part in tuples).
    pub fn coerce(
        &mut self,
        slots: Vec<Value>,
        from: &Type,
        to: &Type,
    ) -> Result<Vec<Value>, JitError> {
        let (lf, lt) = (flat_layout(from), flat_layout(to));
        if same_repr(&lf, &lt) {
            return Ok(slots);
        }
        match (from, to) {
            (Type::Tuple(xs), Type::Tuple(ys)) if xs.len() == ys.len() => {
                let mut out = Vec::new();
                let mut pos = 0;
                for (x, y) in xs.iter().zip(ys) {
                    let n = clif_types(x).len();
                    let part = slots
                        .get(pos..pos + n)
                        .ok_or_else(|| unsupported("tuple slot count mismatch"))?
                        .to_vec();
                    out.extend(self.coerce(part, x, y)?);
                    pos += n;
                }
                Ok(out)
            }
            (Type::Tensor { elem, .. }, Type::Tensor { elem: e2, .. }) if elem == e2 => {
                self.apply_slots(TensorOp::Cast(*elem), vec![lf], &slots, lt)
            }
            _ => Err(unsupported(format!(
                "a value of type {from} where {to} is expected"
            ))),
        }
    }

    /// The slots of `v` in the layout of type `to`.
    pub fn get_as(&mut self, v: ValueId, to: &Type) -> Result<Vec<Value>, JitError> {
        let slots = self.get(v)?;
        let from = self.ty(v);
        self.coerce(slots, from, to)
    }

    /// The concatenated slots of `vs`, each in the layout of the matching type of `tys`.
    pub fn get_many_as(&mut self, vs: &[ValueId], tys: &[Type]) -> Result<Vec<Value>, JitError> {
        if vs.len() != tys.len() {
            return Err(unsupported("value count does not match the expected types"));
        }
        let mut out = Vec::new();
        for (&v, t) in vs.iter().zip(tys) {
            out.extend(self.get_as(v, t)?);
        }
        Ok(out)
    }

    /// Binds `vs` (of types `vs`' own) from slots laid out for `tys`.
    pub fn set_many_from(
        &mut self,
        vs: &[ValueId],
        tys: &[Type],
        slots: &[Value],
    ) -> Result<(), JitError> {
        if vs.len() != tys.len() {
            return Err(unsupported("value count does not match the expected types"));
        }
        let mut pos = 0;
        for (&v, t) in vs.iter().zip(tys) {
            let n = clif_types(t).len();
            let part = slots
                .get(pos..pos + n)
                .ok_or_else(|| unsupported("slot count mismatch"))?
                .to_vec();
            let to = self.ty(v);
            let conv = self.coerce(part, t, to)?;
            self.set(v, conv);
            pos += n;
        }
        Ok(())
    }

    fn touches_heap(&self, op: &ir::Op) -> bool {
        op.operands
            .iter()
            .chain(&op.results)
            .any(|&v| has_heap(&flat_layout(self.ty(v))))
    }

    fn one_result(&self, op: &ir::Op) -> Result<ValueId, JitError> {
        match op.results.as_slice() {
            [r] => Ok(*r),
            _ => Err(unsupported(format!(
                "`{}` must have one result",
                op.kind.name()
            ))),
        }
    }

    pub fn lower_op(&mut self, id: OpId) -> Result<(), JitError> {
        self.cur_op = Some(id);
        let f = self.f;
        let op = &f.ops[id];
        if self.wide
            && (op.kind.is_tape()
                || self.touches_heap(op)
                || matches!(
                    op.kind,
                    OpKind::Call(_)
                        | OpKind::Print
                        | OpKind::PrintStr(_)
                        | OpKind::For
                        | OpKind::While
                        | OpKind::TapePush
                        | OpKind::TapePop
                ))
        {
            return Err(unsupported("this op on two lanes"));
        }
        if op.kind.is_tape() {
            return self.lower_tape(op);
        }
        let heap = self.touches_heap(op);
        let tensor_op = match &op.kind {
            OpKind::Unary(u) => Some(TensorOp::Unary(*u)),
            OpKind::Binary(b) => Some(TensorOp::Binary(*b)),
            OpKind::Cast(k) => Some(TensorOp::Cast(*k)),
            OpKind::Pack => Some(TensorOp::Pack),
            OpKind::Full => Some(TensorOp::Full),
            OpKind::Extract(i) => Some(TensorOp::Extract(*i)),
            OpKind::Index => Some(TensorOp::Index),
            OpKind::Insert => Some(TensorOp::Insert),
            OpKind::DimOf(a) => Some(TensorOp::DimOf(*a)),
            OpKind::MatMul => Some(TensorOp::MatMul),
            OpKind::Transpose => Some(TensorOp::Transpose),
            OpKind::Sum => Some(TensorOp::Sum),
            OpKind::Slice => Some(TensorOp::Slice),
            OpKind::Concat => Some(TensorOp::Concat),
            OpKind::Reshape => Some(TensorOp::Reshape),
            OpKind::Permute(perm) => Some(TensorOp::Permute(perm.clone())),
            OpKind::Broadcast => Some(TensorOp::Broadcast),
            OpKind::ReduceTo(r) => Some(TensorOp::ReduceTo(*r)),
            // An elementwise select (a bool tensor condition) is a tensor op; a scalar
            // condition picks one of the operands' slots.
            OpKind::Select if matches!(self.ty(op.operands[0]), ir::Type::Tensor { .. }) => Some(TensorOp::Select),
            OpKind::Const(_)
            | OpKind::Select
            | OpKind::Tuple
            | OpKind::TupleGet(_)
            | OpKind::Call(_)
            | OpKind::Print
            | OpKind::PrintStr(_)
            | OpKind::If
            | OpKind::For
            | OpKind::While
            | OpKind::TapePush
            | OpKind::TapePop => None,
        };
        if heap {
            let inlined = match &op.kind {
                OpKind::Index => self.try_heap_index(op)?,
                OpKind::DimOf(axis) => self.try_heap_dim(op, *axis)?,
                OpKind::Insert if self.info.inplace.inserts.contains(&id) => {
                    self.lower_inplace_insert(op)?;
                    true
                }
                _ => false,
            };
            if inlined {
                return Ok(());
            }
        }
        if heap
            && op.kind == OpKind::Pack
            && let Some(t) = self.constant_pack(op)
        {
            // A literal of constants: its elements travel with the op site, not as one
            // instruction each.
            let r = self.one_result(op)?;
            let out = self.apply_slots(TensorOp::Literal(t), Vec::new(), &[], flat_layout(self.ty(r)))?;
            self.set(r, out);
            return Ok(());
        }
        if let (true, Some(t)) = (heap, tensor_op) {
            let r = self.one_result(op)?;
            return self.apply(t, &op.operands, r);
        }
        match &op.kind {
            OpKind::Const(lit) => {
                let v = self.constant(*lit);
                let r = self.one_result(op)?;
                self.set(r, vec![v]);
            }
            OpKind::Unary(u) => {
                let r = self.one_result(op)?;
                self.elementwise_unary(*u, self.operand(op, 0)?, r)?;
            }
            OpKind::Binary(bop) => {
                let r = self.one_result(op)?;
                let [a, b] = op.operands[..] else {
                    return Err(unsupported("binary op needs two operands"));
                };
                self.elementwise_binary(*bop, a, b, r)?;
            }
            OpKind::Cast(k) => {
                let r = self.one_result(op)?;
                self.elementwise_cast(*k, self.operand(op, 0)?, r)?;
            }
            OpKind::Select => {
                let r = self.one_result(op)?;
                let [c, a, b] = op.operands[..] else {
                    return Err(unsupported("select needs three operands"));
                };
                let rt = self.ty(r);
                let (a, b) = (self.get_as(a, rt)?, self.get_as(b, rt)?);
                let cs = if matches!(self.ty(c), ir::Type::Tensor { .. }) { self.get(c)? } else { vec![self.get1(c)?; a.len()] };
                let out = cs
                    .iter()
                    .zip(a.iter().zip(&b))
                    .map(|(c, (x, y))| self.select_slot(*c, *x, *y))
                    .collect();
                self.set(r, out);
            }
            OpKind::Pack => {
                let r = self.one_result(op)?;
                let slots = self.get_many(&op.operands)?;
                self.set(r, slots);
            }
            OpKind::Full => {
                let r = self.one_result(op)?;
                self.small_full(&op.operands, r)?;
            }
            OpKind::Extract(i) => {
                let r = self.one_result(op)?;
                self.small_extract(self.operand(op, 0)?, *i, r)?;
            }
            OpKind::Index => {
                let r = self.one_result(op)?;
                self.small_index(self.operand(op, 0)?, op.operands.get(1..).unwrap_or(&[]), r)?;
            }
            OpKind::Insert => {
                let r = self.one_result(op)?;
                if op.operands.len() < 2 {
                    return Err(unsupported("tensor.insert needs a tensor and a value"));
                }
                self.small_insert(self.operand(op, 0)?, op.operands[1], &op.operands[2..], r)?;
            }
            OpKind::DimOf(axis) => {
                let r = self.one_result(op)?;
                self.small_dim(self.operand(op, 0)?, *axis, r)?;
            }
            OpKind::MatMul => {
                let r = self.one_result(op)?;
                let [a, b] = op.operands[..] else {
                    return Err(unsupported("matmul needs two operands"));
                };
                self.small_matmul(a, b, r)?;
            }
            OpKind::Transpose => {
                let r = self.one_result(op)?;
                self.small_transpose(self.operand(op, 0)?, r)?;
            }
            OpKind::Sum => {
                let r = self.one_result(op)?;
                self.small_sum(self.operand(op, 0)?, r)?;
            }
            // Their results have a dynamic first extent: always heap tensors, lowered above.
            OpKind::Slice | OpKind::Concat => {
                return Err(unsupported("a slice or concat with a fixed-size result"));
            }
            // The same row-major slots under the declared shape.
            OpKind::Reshape => {
                let r = self.one_result(op)?;
                let xs = self.get(self.operand(op, 0)?)?;
                self.set(r, xs);
            }
            OpKind::Permute(perm) => {
                let r = self.one_result(op)?;
                self.small_permute(self.operand(op, 0)?, perm, r)?;
            }
            OpKind::Broadcast => {
                let r = self.one_result(op)?;
                self.small_broadcast(self.operand(op, 0)?, r)?;
            }
            OpKind::ReduceTo(how) => {
                let r = self.one_result(op)?;
                self.small_reduce_to(self.operand(op, 0)?, *how, r)?;
            }
            OpKind::Tuple => {
                let r = self.one_result(op)?;
                let Type::Tuple(items) = self.ty(r) else {
                    return Err(unsupported("tuple of a non-tuple type"));
                };
                let slots = self.get_many_as(&op.operands, items)?;
                self.set(r, slots);
            }
            OpKind::TupleGet(i) => {
                let r = self.one_result(op)?;
                let t = self.operand(op, 0)?;
                let Type::Tuple(items) = self.ty(t) else {
                    return Err(unsupported("tuple.get of a non-tuple"));
                };
                let i = *i as usize;
                if i >= items.len() {
                    return Err(unsupported("tuple.get index out of range"));
                }
                let start: usize = items[..i].iter().map(|t| clif_types(t).len()).sum();
                let n = clif_types(&items[i]).len();
                let slots = self.get(t)?[start..start + n].to_vec();
                self.set(r, slots);
            }
            OpKind::Call(callee) => self.lower_call(*callee, &op.operands, &op.results)?,
            OpKind::Print => self.lower_print(self.operand(op, 0)?, &op.results)?,
            OpKind::PrintStr(text) => self.lower_print_str(text, &op.results)?,
            OpKind::If => self.lower_if(op)?,
            OpKind::For => self.lower_for(op)?,
            OpKind::While => self.lower_while(op)?,
            OpKind::TapePush | OpKind::TapePop => self.lower_tape(op)?,
        }
        Ok(())
    }
}
