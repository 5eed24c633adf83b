//! Reverse mode by source transformation.
//!
//! [`vjp`] turns `@f(p1, …, pn) -> R` into `@f$vjp(p1, …, pn, r̄: R) -> (R, p̄…)`:
//! the primal result followed by the adjoint of every parameter that has a tangent
//! type (in order; see [`tangent_type`]).
//!
//! Each region is differentiated as a *sweep*: its ops are emitted forward (the
//! primal values stay in SSA), then the adjoints are accumulated over its ops in
//! reverse order with the transpose rules of [`super::rules`]. Adjoints are
//! symbolic ([`Tan`]) until an op needs them, so unused ones cost nothing.
//!
//! - `scf.if`: the adjoint is an `scf.if` on the same condition; each branch
//!   recomputes its primal values, sweeps its ops, and yields the adjoints of the
//!   outer values it read (zeros where the other branch contributes and it does not).
//! - `scf.for`: the forward sweep stores the carried values at the start of every
//!   iteration into buffers (`tensor.full` of `[trip count, …]`, filled with
//!   `tensor.insert`); the adjoint is an `scf.for` running the iterations backwards,
//!   recomputing the body from the stored state and sweeping it. Outer
//!   (loop-invariant) values read in the body accumulate their adjoint in extra
//!   carried values, added to the outer adjoint once, after the loop.
//! - `call`: the callee's own `$vjp` (registered before its body is built); it
//!   recomputes the callee's primal.
//! - recursion: a function on a call-graph cycle is differentiated in **split
//!   mode** on the tape when [`recursion::split_mode`] allows it (no recursive
//!   call inside a loop, not `@ad(sct)`): `f$vjp` is `f$rfwd` (the primal,
//!   pushing each segment's live values) followed by `f$rbwd` (popping them,
//!   last segment first, sweeping each, and calling the callee's `$rbwd` at a
//!   recursive call), so the work is linear in the depth; see [`split`]. Reverse
//!   mode of such an `f$vjp` (`grad(grad(f))`) differentiates its
//!   source-transformed twin `f$vjp$st` instead, which recomputes.
//! - `scf.while` (trip count known only at run time), and `scf.for` in a function
//!   marked `@ad(tape)` or with tuple-valued carried values: **the tape**. The
//!   forward sweep pushes the carried values entering every iteration
//!   (`tape.push`) and counts the trips (an extra carried `i64`); the adjoint is
//!   an `scf.for` over the trip count that pops each state (`tape.pop`, last
//!   iteration first) and runs the body's source-transformed adjoint from it. So
//!   the statically structured body is one tape node whose reverse pass is its
//!   compiled adjoint (Stan-style mixing). A taped loop is always popped, even
//!   when no adjoint reaches it, so pushes and pops stay balanced.
//!
//! Forward mode differentiates every call of a function that touches the tape,
//! even without tangents, so that `f$rfwd` and `f$rbwd` under `hessian` push and
//! pop the same layout (values, then tangents).
//!
//! Refused: a function marked `@ad(sct)` whose derivative needs the tape
//! ([`AdError::SctImpossible`]), and reverse mode of a function that already uses
//! the tape (a reverse-mode derivative of a `while` differentiated again in
//! reverse mode; [`AdError::NeedsTape`]). Forward over reverse (`hessian`) works.

use std::collections::{BTreeMap, BTreeSet, HashMap};

mod routed;
pub mod split;
pub mod undo;

use super::emit::Emitter;
use super::recursion;
use super::rules::{self, Ct, Vjp};
use super::tangent::{self, Tan, materialize, tangent_type};
use super::{AdError, check};
use super::plan::{AdPlan, LoopMode};
use crate::analysis::{defined_in, used_in};
use crate::ir::{
    Derivation, DerivedKey, FuncRef, Function, Literal, Module, Op, OpId, OpKind, Region, ScalarKind, Type, ValueId,
};

/// Creates (or finds) `f$vjp`; see the module docs for its signature.
pub fn vjp(module: &mut Module, f: FuncRef) -> Result<FuncRef, AdError> {
    let mut created = Vec::new();
    let h = vjp_of(module, f, &mut created)?;
    for g in created {
        check(module, g)?;
    }
    Ok(h)
}

/// Like [`vjp`] (named `f$vjp@plain`), with the cotangents of `f`'s own products formed
/// plainly: `ḡ·b` is NaN where ḡ is 0 and b infinite, where [`vjp`] gives 0
/// ([`Emitter::strong_products`]). For the energy kernels, whose products then cost one
/// operation each instead of four (docs §11.1); callees take [`vjp`].
pub fn vjp_plain_products(module: &mut Module, f: FuncRef) -> Result<FuncRef, AdError> {
    let key = DerivedKey { of: f, derivation: Derivation::VjpPlainProducts };
    if let Some(h) = module.derived(&key) {
        return Ok(h);
    }
    if recursion::split_vjp_base(module, f).is_some() || recursion::split_mode(module, f).is_ok() {
        return vjp(module, f);
    }
    let mut created = Vec::new();
    let h = build_vjp(module, f, key, false, true, &mut created)?;
    for g in created {
        check(module, g)?;
    }
    Ok(h)
}

fn vjp_of(module: &mut Module, f: FuncRef, created: &mut Vec<FuncRef>) -> Result<FuncRef, AdError> {
    if module.functions.get(f).is_none() {
        return Err(AdError::Internal(format!("no function #{}", f.index())));
    }
    let key = DerivedKey { of: f, derivation: Derivation::Vjp };
    if let Some(h) = module.derived(&key) {
        return Ok(h);
    }
    // Reverse mode of a split-mode `g$vjp` (which calls the taped `g$rfwd` and
    // `g$rbwd`) differentiates its source-transformed twin instead.
    let source = match recursion::split_vjp_base(module, f) {
        Some(base) => {
            let twin = DerivedKey { of: base, derivation: Derivation::VjpTwin };
            match module.derived(&twin) {
                Some(t) => t,
                None => build_vjp(module, base, twin, false, false, created)?,
            }
        }
        None => f,
    };
    let split = recursion::split_mode(module, source).is_ok();
    build_vjp(module, source, key, split, false, created)
}

/// Builds the reverse-mode derivative of `f` registered as `key`: in split mode on the
/// tape (`split`, see [`split`]), else by source transformation (`plain_products`: see
/// [`vjp_plain_products`]).
fn build_vjp(
    module: &mut Module,
    f: FuncRef,
    key: DerivedKey,
    split: bool,
    plain_products: bool,
    created: &mut Vec<FuncRef>,
) -> Result<FuncRef, AdError> {
    let src = module
        .functions
        .get(f)
        .cloned()
        .ok_or_else(|| AdError::Internal(format!("no function #{}", f.index())))?;
    if let Some((id, _)) = src.ops.iter().find(|(_, op)| op.kind.is_tape()) {
        return Err(AdError::NeedsTape {
            function: src.name.clone(),
            op: "tape.pop",
            span: src.span(id),
        });
    }
    let plan = AdPlan::of_loops(&src);
    if let Some(id) = plan.sct_impossible(&src) {
        return Err(AdError::SctImpossible {
            function: src.name.clone(),
            op: src.ops[id].kind.name(),
            span: src.span(id),
        });
    }
    let Some(ct) = tangent_type(&src.ret) else {
        return Err(AdError::Signature {
            function: src.name.clone(),
            message: format!("its result type {} has no derivative", src.ret),
        });
    };
    let ptypes = src.param_types();
    let mut params = ptypes.clone();
    params.push(ct);
    let mut rets = vec![src.ret.clone()];
    rets.extend(ptypes.iter().filter_map(tangent_type));
    let name = key.derivation.name(&module.functions[key.of].name);
    let func = Function::new(name, &params, Type::Tuple(rets));
    let h = module.add_derived(key, func.clone());
    created.push(h);
    if split {
        split::split_vjp(module, f, h, created)?;
        return Ok(h);
    }
    let new_params = func.params().to_vec();
    let mut e = Emitter::new(func);
    e.strong_products = !plain_products;
    let mut rv = Rev::with_plan(module, created, e, &src, plan);
    for (i, &p) in src.params().iter().enumerate() {
        rv.map.insert(p, new_params[i]);
    }
    let ret = src
        .body
        .yields
        .first()
        .copied()
        .ok_or_else(|| AdError::Internal("body yields nothing".into()))?;
    rv.forward(&src.body.ops)?;
    let seed = new_params[ptypes.len()];
    rv.accumulate(ret, Ct::Tan(Tan::Val(seed)))?;
    rv.backward(&src.body.ops)?;
    let primal = rv.v(ret);
    let built = rv.finish_with_param_adjoints(&src, vec![primal])?;
    install(module, h, &src, built);
    Ok(h)
}

/// Puts the derivative function `built` of `src` in place of the signature registered as `h`,
/// keeping `src`'s AD mode and source file.
fn install(module: &mut Module, h: FuncRef, src: &Function, built: Function) {
    module.functions[h] = Function {
        ad_mode: src.ad_mode,
        source_file: src.source_file,
        ..built
    };
}

/// Where the adjoint of a loop finds each iteration's entering state.
enum State {
    Buffers(LoopTape),
    /// On the tape; the `scf.for` lower bound, if the loop is a `for`.
    Tape(Option<ValueId>),
}

/// What the forward sweep of an `scf.for` recorded for its adjoint.
struct LoopTape {
    lo: ValueId,
    n: ValueId,
    /// One buffer per carried value: `[n, …]`, row `j` = the value entering iteration `lo + j`;
    /// for a tensor kept as an undo log ([`undo`]), `[n, k]`: row `j` = the elements its `k`
    /// inserts overwrote in iteration `lo + j`.
    bufs: Vec<ValueId>,
    /// Per carried value, its undo plan (`None`: the buffer holds whole values).
    undo: Vec<Option<undo::UndoPlan>>,
    /// The loop's results (the final values the undo logs are replayed from).
    finals: Vec<ValueId>,
}

/// What the forward sweep of a taped loop recorded: the trip count, and for an
/// `scf.for` its lower bound (the induction variable is rebuilt from it).
struct Taped {
    n: ValueId,
    lo: Option<ValueId>,
}

struct Rev<'a> {
    module: &'a mut Module,
    created: &'a mut Vec<FuncRef>,
    e: Emitter,
    src: &'a Function,
    map: HashMap<ValueId, ValueId>,
    adj: HashMap<ValueId, Tan>,
    tapes: HashMap<OpId, LoopTape>,
    taped: HashMap<OpId, Taped>,
    /// The source values that may receive a routed zero adjoint ([`routed`]); empty when
    /// the emitter came without [`Emitter::strong_products`] (plain products throughout).
    routed: std::collections::HashSet<ValueId>,
    /// How each loop of `src` is differentiated ([`AdPlan`]): loops no derivative flows
    /// through are run as they are, and no adjoint enters them.
    plan: AdPlan,
}

/// The outer values with a tangent type that region(s) `rs` read.
fn free_float_values(f: &Function, rs: &[Region]) -> Vec<ValueId> {
    let mut used = BTreeSet::new();
    let mut defined = BTreeSet::new();
    for r in rs {
        used_in(f, r, &mut used);
        defined_in(f, r, &mut defined);
    }
    used.difference(&defined)
        .copied()
        .filter(|&v| tangent_type(f.ty(v)).is_some())
        .collect()
}

impl<'a> Rev<'a> {
    /// Appends to `parts` the adjoint of every parameter of `src` that has a tangent type (in
    /// order; zeros where none arrived) and finishes the function with their tuple as its
    /// result.
    fn finish_with_param_adjoints(mut self, src: &Function, mut parts: Vec<ValueId>) -> Result<Function, AdError> {
        for &p in src.params() {
            if tangent_type(src.ty(p)).is_some() {
                let a = self.adj.get(&p).cloned().unwrap_or(Tan::Zero);
                let np = self.v(p);
                parts.push(
                    materialize(&mut self.e, &a, np)?
                        .ok_or_else(|| AdError::Internal("parameter adjoint".into()))?,
                );
            }
        }
        let out = self.e.op(OpKind::Tuple, parts)?;
        Ok(self.e.finish(out))
    }

    fn new(
        module: &'a mut Module,
        created: &'a mut Vec<FuncRef>,
        e: Emitter,
        src: &'a Function,
    ) -> Rev<'a> {
        Rev::with_plan(module, created, e, src, AdPlan::of_loops(src))
    }

    /// [`Rev::new`] with `src`'s plan already made.
    fn with_plan(
        module: &'a mut Module,
        created: &'a mut Vec<FuncRef>,
        e: Emitter,
        src: &'a Function,
        plan: AdPlan,
    ) -> Rev<'a> {
        let routed = if e.strong_products {
            routed::routed_values(src)
        } else {
            Default::default()
        };
        Rev {
            module,
            created,
            e,
            src,
            map: HashMap::new(),
            adj: HashMap::new(),
            tapes: HashMap::new(),
            taped: HashMap::new(),
            routed,
            plan,
        }
    }

    fn v(&self, old: ValueId) -> ValueId {
        self.map.get(&old).copied().unwrap_or(old)
    }

    fn accumulate(&mut self, old: ValueId, ct: Ct) -> Result<(), AdError> {
        if tangent_type(self.src.ty(old)).is_none() {
            return Ok(());
        }
        let p = self.v(old);
        let cur = self.adj.remove(&old).unwrap_or(Tan::Zero);
        let new = match ct {
            Ct::Tan(t) => tangent::add(&mut self.e, cur, t, p)?,
            Ct::Scatter(g, idx) => {
                let base = if cur.is_zero() {
                    self.e.zero_like(p)?
                } else {
                    materialize(&mut self.e, &cur, p)?
                        .ok_or_else(|| AdError::Internal("scatter target".into()))?
                };
                let v = if cur.is_zero() {
                    g
                } else {
                    let mut ops = vec![base];
                    ops.extend_from_slice(&idx);
                    let old_part = self.e.op(OpKind::Index, ops)?;
                    self.e.add(old_part, g)?
                };
                let mut ops = vec![base, v];
                ops.extend_from_slice(&idx);
                Tan::Val(self.e.op(OpKind::Insert, ops)?)
            }
        };
        self.adj.insert(old, new);
        Ok(())
    }

    fn forward(&mut self, ops: &[OpId]) -> Result<(), AdError> {
        for &id in ops {
            self.e.set_span(self.src.span(id));
            match self.plan.loop_mode(id) {
                LoopMode::Tape(_) | LoopMode::SctImpossible(_) => self.forward_taped(id)?,
                LoopMode::Sct => self.forward_for(id)?,
                LoopMode::Inactive => self.clone_op(id)?,
            }
        }
        Ok(())
    }

    /// Emits a copy of `id` (regions included); `print` is dropped.
    fn clone_op(&mut self, id: OpId) -> Result<(), AdError> {
        // A copy of a primal op keeps its own source position (a run-time error in a
        // loop's body points at the failing op, not at the loop), and leaves the
        // emitter's position as it found it.
        let outer = self.e.span();
        let own = self.src.span(id);
        if own != Default::default() {
            self.e.set_span(own);
        }
        let r = self.clone_op_here(id);
        self.e.set_span(outer);
        r
    }

    fn clone_op_here(&mut self, id: OpId) -> Result<(), AdError> {
        let op = &self.src.ops[id];
        let here = self.e.span();
        if matches!(op.kind, OpKind::Print | OpKind::PrintStr(_)) {
            let u = self.e.op(OpKind::Tuple, vec![])?;
            self.map.insert(op.results[0], u);
            return Ok(());
        }
        let xs: Vec<ValueId> = op.operands.iter().map(|&v| self.v(v)).collect();
        let mut regions = Vec::new();
        for r in &op.regions {
            let types: Vec<Type> = r.args.iter().map(|&a| self.src.ty(a).clone()).collect();
            let args = self.e.begin_region(&types);
            for (&o, &n) in r.args.iter().zip(&args) {
                self.map.insert(o, n);
            }
            for &inner in &r.ops {
                self.clone_op(inner)?;
            }
            let ys = r.yields.iter().map(|&y| self.v(y)).collect();
            regions.push(self.e.end_region(ys));
        }
        let rtypes: Vec<Type> = op.results.iter().map(|&r| self.src.ty(r).clone()).collect();
        self.e.set_span(here);
        let nid = self
            .e
            .push_with_regions(op.kind.clone(), xs, rtypes, regions);
        for (&o, n) in op.results.iter().zip(self.e.results(nid)) {
            self.map.insert(o, n);
        }
        Ok(())
    }

    fn forward_for(&mut self, id: OpId) -> Result<(), AdError> {
        let op = &self.src.ops[id];
        let lo = self.v(op.operands[0]);
        let hi = self.v(op.operands[1]);
        let d = self.e.sub(hi, lo)?;
        let z = self.e.int(0);
        let n = self.e.binary(crate::ir::BinaryOp::Max, d, z)?;
        let mut bufs = Vec::new();
        let mut buf_types = Vec::new();
        let nslots = op.results.len();
        let undo: Vec<Option<undo::UndoPlan>> = (0..nslots).map(|c| undo::plan(self.src, op, c)).collect();
        for (c, &init) in op.operands[2..].iter().enumerate() {
            let x = self.v(init);
            let (kind, mut shape) = match self.e.ty(x) {
                Type::Scalar(k) => (k, vec![]),
                Type::Tensor { elem, shape } => (elem, shape),
                Type::Tuple(_) => {
                    return Err(AdError::NeedsTape {
                        function: self.src.name.clone(),
                        op: "scf.for",
                        span: self.src.span(id),
                    });
                }
            };
            let fill = match kind {
                ScalarKind::Bool => self.e.konst(Literal::Bool(false)),
                ScalarKind::I64 => self.e.int(0),
                k => self.e.float(k, 0.0),
            };
            let mut operands = vec![fill, n];
            if let Some(plan) = &undo[c] {
                // One row of overwritten elements per iteration.
                operands.push(self.e.int(plan.inserts.len() as i64));
                shape = vec![crate::ir::Dim::Fixed(plan.inserts.len() as u64)];
            } else if !shape.is_empty() {
                operands.extend(self.e.extents(x)?);
            }
            shape.insert(0, crate::ir::Dim::Dyn);
            let t = Type::Tensor { elem: kind, shape };
            let bid = self.e.push(OpKind::Full, operands, vec![t.clone()]);
            bufs.push(self.e.results(bid)[0]);
            buf_types.push(t);
        }
        let body = &op.regions[0];
        let mut types: Vec<Type> = body.args.iter().map(|&a| self.src.ty(a).clone()).collect();
        types.extend(buf_types.iter().cloned());
        let args = self.e.begin_region(&types);
        for (&o, &nv) in body.args.iter().zip(&args) {
            self.map.insert(o, nv);
        }
        let j = self.e.sub(args[0], lo)?;
        let nc = body.args.len() - 1;
        let mut new_bufs = Vec::new();
        for c in 0..nc {
            if undo[c].is_some() {
                new_bufs.push(args[1 + nc + c]);
                continue;
            }
            let b = self
                .e
                .op(OpKind::Insert, vec![args[1 + nc + c], args[1 + c], j])?;
            new_bufs.push(b);
        }
        // The element each undo-logged insert overwrites, read just before it.
        let mut overwritten: HashMap<OpId, ValueId> = HashMap::new();
        for &inner in &body.ops {
            if undo.iter().flatten().any(|p| p.inserts.contains(&inner)) {
                let ins = &self.src.ops[inner];
                let read: Vec<ValueId> = std::iter::once(ins.operands[0]).chain(ins.operands[2..].iter().copied()).map(|v| self.v(v)).collect();
                overwritten.insert(inner, self.e.op(OpKind::Index, read)?);
            }
            self.clone_op(inner)?;
        }
        for (c, plan) in undo.iter().enumerate() {
            let Some(plan) = plan else { continue };
            for (k, id) in plan.inserts.iter().enumerate() {
                let col = self.e.int(k as i64);
                new_bufs[c] = self.e.op(OpKind::Insert, vec![new_bufs[c], overwritten[id], j, col])?;
            }
        }
        let mut ys: Vec<ValueId> = body.yields.iter().map(|&y| self.v(y)).collect();
        ys.extend(new_bufs);
        let region = self.e.end_region(ys);
        let xs: Vec<ValueId> = op.operands.iter().map(|&v| self.v(v)).chain(bufs).collect();
        let mut rtypes: Vec<Type> = op.results.iter().map(|&r| self.src.ty(r).clone()).collect();
        rtypes.extend(buf_types);
        let nid = self
            .e
            .push_with_regions(OpKind::For, xs, rtypes, vec![region]);
        let res = self.e.results(nid);
        for (&o, &nv) in op.results.iter().zip(&res) {
            self.map.insert(o, nv);
        }
        self.tapes.insert(
            id,
            LoopTape {
                lo,
                n,
                bufs: res[op.results.len()..].to_vec(),
                undo,
                finals: res[..op.results.len()].to_vec(),
            },
        );
        Ok(())
    }

    /// The forward sweep of a taped loop: the original loop, plus a `tape.push` of
    /// the carried values at the start of every iteration and (for `scf.while`) a
    /// trip counter.
    fn forward_taped(&mut self, id: OpId) -> Result<(), AdError> {
        let op = &self.src.ops[id];
        let is_for = op.kind == OpKind::For;
        let nc = op.results.len();
        let ctypes: Vec<Type> = op.results.iter().map(|&r| self.src.ty(r).clone()).collect();
        let mut types = ctypes.clone();
        if !is_for {
            types.push(Type::I64);
        }
        let mut regions = Vec::new();
        for (ri, r) in op.regions.iter().enumerate() {
            let is_body = ri + 1 == op.regions.len();
            let mut rtypes: Vec<Type> = r.args.iter().map(|&a| self.src.ty(a).clone()).collect();
            if !is_for {
                rtypes.push(Type::I64);
            }
            let args = self.e.begin_region(&rtypes);
            for (&o, &n) in r.args.iter().zip(&args) {
                self.map.insert(o, n);
            }
            let first = if is_for { 1 } else { 0 };
            if is_body {
                self.e
                    .push(OpKind::TapePush, args[first..first + nc].to_vec(), vec![]);
            }
            for &inner in &r.ops {
                self.clone_op(inner)?;
            }
            let mut ys: Vec<ValueId> = r.yields.iter().map(|&y| self.v(y)).collect();
            if is_body && !is_for {
                let one = self.e.int(1);
                ys.push(self.e.add(args[nc], one)?);
            }
            regions.push(self.e.end_region(ys));
        }
        let mut xs: Vec<ValueId> = op.operands.iter().map(|&v| self.v(v)).collect();
        if !is_for {
            xs.push(self.e.int(0));
        }
        let nid = self
            .e
            .push_with_regions(op.kind.clone(), xs, types, regions);
        let res = self.e.results(nid);
        for (&o, &nv) in op.results.iter().zip(&res) {
            self.map.insert(o, nv);
        }
        let taped = if is_for {
            let lo = self.v(op.operands[0]);
            let hi = self.v(op.operands[1]);
            let d = self.e.sub(hi, lo)?;
            let z = self.e.int(0);
            Taped {
                n: self.e.binary(crate::ir::BinaryOp::Max, d, z)?,
                lo: Some(lo),
            }
        } else {
            Taped {
                n: res[nc],
                lo: None,
            }
        };
        self.taped.insert(id, taped);
        Ok(())
    }

    fn backward(&mut self, ops: &[OpId]) -> Result<(), AdError> {
        for &id in ops.iter().rev() {
            self.e.set_span(self.src.span(id));
            self.backward_op(id)?;
        }
        Ok(())
    }

    fn backward_op(&mut self, id: OpId) -> Result<(), AdError> {
        let op: &Op = &self.src.ops[id];
        let g: Vec<Tan> = op
            .results
            .iter()
            .map(|r| self.adj.get(r).cloned().unwrap_or(Tan::Zero))
            .collect();
        if let Some(t) = self.taped.remove(&id) {
            // Always run: the reverse sweep pops what the forward sweep pushed.
            return self.backward_loop(id, &g, t.n, State::Tape(t.lo));
        }
        if g.iter().all(Tan::is_zero) {
            return Ok(());
        }
        if matches!(op.kind, OpKind::For | OpKind::While) && self.plan.loop_mode(id) == LoopMode::Inactive {
            // A loop whose results do not vary: its adjoints reach nothing that does.
            return Ok(());
        }
        let xs: Vec<ValueId> = op.operands.iter().map(|&v| self.v(v)).collect();
        let ys: Vec<ValueId> = op.results.iter().map(|&v| self.v(v)).collect();
        match &op.kind {
            OpKind::If => return self.backward_if(op, &g),
            OpKind::For => return self.backward_for(id, &g),
            OpKind::While => {
                return Err(AdError::Internal(
                    "scf.while without a recorded forward sweep".into(),
                ));
            }
            OpKind::Call(h) => return self.backward_call(op, *h, &xs, &ys, &g),
            _ => {}
        }
        // Products take strong zeros only where a routed zero can reach them.
        let strong = self.e.strong_products;
        self.e.strong_products = strong && op.results.iter().any(|r| self.routed.contains(r));
        let rule = rules::vjp(&mut self.e, &op.kind, &xs, &ys, &g);
        self.e.strong_products = strong;
        match rule? {
            Vjp::Cotangents(cts) => {
                for (&o, ct) in op.operands.iter().zip(cts) {
                    self.accumulate(o, ct)?;
                }
                Ok(())
            }
            Vjp::Structural => Err(AdError::Internal(format!(
                "`{}` is structural",
                op.kind.name()
            ))),
        }
    }

    fn backward_call(
        &mut self,
        op: &Op,
        h: FuncRef,
        xs: &[ValueId],
        ys: &[ValueId],
        g: &[Tan],
    ) -> Result<(), AdError> {
        let hv = vjp_of(self.module, h, self.created)?;
        let mut args = xs.to_vec();
        args.push(
            materialize(&mut self.e, &g[0], ys[0])?
                .ok_or_else(|| AdError::Internal("call cotangent".into()))?,
        );
        let ret = self.module.functions[hv].ret.clone();
        let nid = self.e.push(OpKind::Call(hv), args, vec![ret]);
        let out = self.e.results(nid)[0];
        let mut next = 1;
        for &o in &op.operands {
            if tangent_type(self.src.ty(o)).is_some() {
                let a = self.e.op(OpKind::TupleGet(next), vec![out])?;
                next += 1;
                self.accumulate(o, Ct::Tan(Tan::Val(a)))?;
            }
        }
        Ok(())
    }

    /// Sweeps `ops` in a fresh adjoint scope seeded by `seed` and returns the
    /// adjoints of the values in `outer` it produced (the rest is discarded).
    fn scoped_sweep(
        &mut self,
        ops: &[OpId],
        seed: Vec<(ValueId, Tan)>,
        outer: &[ValueId],
    ) -> Result<BTreeMap<ValueId, Tan>, AdError> {
        let saved = std::mem::take(&mut self.adj);
        self.forward(ops)?;
        for (v, t) in seed {
            self.accumulate(v, Ct::Tan(t))?;
        }
        self.backward(ops)?;
        let mut out = BTreeMap::new();
        for &v in outer {
            if let Some(t) = self.adj.get(&v)
                && !t.is_zero()
            {
                out.insert(v, t.clone());
            }
        }
        self.adj = saved;
        Ok(out)
    }

    fn backward_if(&mut self, op: &Op, g: &[Tan]) -> Result<(), AdError> {
        let outer = free_float_values(self.src, &op.regions);
        let mut built = Vec::new();
        for r in &op.regions {
            self.e.begin_region(&[]);
            let seed = r.yields.iter().copied().zip(g.iter().cloned()).collect();
            let contrib = self.scoped_sweep(&r.ops, seed, &outer)?;
            built.push((self.e.end_region(vec![]), contrib));
        }
        let keys: BTreeSet<ValueId> = built.iter().flat_map(|(_, c)| c.keys().copied()).collect();
        let mut regions = Vec::new();
        for (region, contrib) in built {
            self.e.reopen(region);
            let mut ys = Vec::new();
            for &k in &keys {
                let t = contrib.get(&k).cloned().unwrap_or(Tan::Zero);
                let p = self.v(k);
                ys.push(
                    materialize(&mut self.e, &t, p)?
                        .ok_or_else(|| AdError::Internal("if adjoint".into()))?,
                );
            }
            regions.push(self.e.end_region(ys));
        }
        let keys: Vec<ValueId> = keys.into_iter().collect();
        self.emit_if_adjoint(op.operands[0], &keys, regions)
    }

    /// The adjoint `scf.if` on the (old) condition `cond`, whose branch `regions` yield the
    /// adjoints of the outer values `keys` (those with a tangent type); the results are added
    /// to those values' adjoints.
    fn emit_if_adjoint(&mut self, cond: ValueId, keys: &[ValueId], regions: Vec<Region>) -> Result<(), AdError> {
        let types: Vec<Type> = keys
            .iter()
            .filter_map(|&k| tangent_type(self.src.ty(k)))
            .collect();
        let cond = self.v(cond);
        let nid = self
            .e
            .push_with_regions(OpKind::If, vec![cond], types, regions);
        for (&k, r) in keys.iter().zip(self.e.results(nid)) {
            self.accumulate(k, Ct::Tan(Tan::Val(r)))?;
        }
        Ok(())
    }

    fn backward_for(&mut self, id: OpId, g: &[Tan]) -> Result<(), AdError> {
        let Some(tape) = self.tapes.remove(&id) else {
            return Err(AdError::Internal(
                "scf.for without a recorded forward sweep".into(),
            ));
        };
        let n = tape.n;
        self.backward_loop(id, g, n, State::Buffers(tape))
    }

    /// The adjoint of a loop: an `scf.for` over its `n` iterations, last first,
    /// that restores each iteration's entering state (from buffers or the tape),
    /// recomputes the body and sweeps it.
    fn backward_loop(
        &mut self,
        id: OpId,
        g: &[Tan],
        n: ValueId,
        state: State,
    ) -> Result<(), AdError> {
        let op: &Op = &self.src.ops[id];
        let is_for = op.kind == OpKind::For;
        let body = &op.regions[op.regions.len() - 1];
        let first = if is_for { 1 } else { 0 };
        let init_at = if is_for { 2 } else { 0 };
        let nc = op.results.len();
        // The carried values with adjoints, and the outer values read in the body.
        let active: Vec<usize> = (0..nc)
            .filter(|&j| tangent_type(self.src.ty(op.results[j])).is_some())
            .collect();
        let outer = free_float_values(self.src, &op.regions);
        let mut inits = Vec::new();
        let mut types = vec![Type::I64];
        for &j in &active {
            let y = self.v(op.results[j]);
            inits.push(
                materialize(&mut self.e, &g[j], y)?
                    .ok_or_else(|| AdError::Internal("carried adjoint".into()))?,
            );
            // The adjoint's type: a carried tuple's `bool` parts are `()`.
            types.push(tangent_type(&self.e.ty(y)).expect("active values have a tangent type"));
        }
        for &o in &outer {
            let p = self.v(o);
            inits.push(self.e.zero_like(p)?);
            types.push(tangent_type(self.src.ty(o)).unwrap_or_else(Type::unit));
        }
        // The undo-logged tensors, carried backwards from the loop's final values.
        let undone: Vec<usize> = match &state {
            State::Buffers(tape) => (0..tape.undo.len()).filter(|&c| tape.undo[c].is_some()).collect(),
            State::Tape(_) => Vec::new(),
        };
        if let State::Buffers(tape) = &state {
            for &c in &undone {
                inits.push(tape.finals[c]);
                types.push(self.e.ty(tape.finals[c]));
            }
        }
        let zero = self.e.int(0);
        let args = self.e.begin_region(&types);
        let one = self.e.int(1);
        let last = self.e.sub(n, one)?;
        let j = self.e.sub(last, args[0])?;
        match state {
            State::Buffers(tape) => {
                let i = self.e.add(tape.lo, j)?;
                self.map.insert(body.args[0], i);
                for (c, &b) in tape.bufs.iter().enumerate() {
                    if tape.undo[c].is_none() {
                        let v = self.e.op(OpKind::Index, vec![b, j])?;
                        self.map.insert(body.args[1 + c], v);
                    }
                }
                // Each undo-logged tensor: the indices recomputed, the overwritten elements
                // written back, last insert first.
                let first_undone = 1 + active.len() + outer.len();
                for (u, &c) in undone.iter().enumerate() {
                    let plan = tape.undo[c].clone().expect("an undo plan");
                    for &s in &plan.slice {
                        self.clone_op(s)?;
                    }
                    let mut x = args[first_undone + u];
                    for (k, &id) in plan.inserts.iter().enumerate().rev() {
                        let col = self.e.int(k as i64);
                        let old = self.e.op(OpKind::Index, vec![tape.bufs[c], j, col])?;
                        let mut ops = vec![x, old];
                        ops.extend(self.src.ops[id].operands[2..].iter().map(|&v| self.v(v)));
                        x = self.e.op(OpKind::Insert, ops)?;
                    }
                    self.map.insert(body.args[1 + c], x);
                }
            }
            State::Tape(lo) => {
                if let Some(lo) = lo {
                    let i = self.e.add(lo, j)?;
                    self.map.insert(body.args[0], i);
                }
                let carried = &body.args[first..];
                let ptypes: Vec<Type> = carried.iter().map(|&a| self.src.ty(a).clone()).collect();
                let pid = self.e.push(OpKind::TapePop, vec![], ptypes);
                for (&a, v) in carried.iter().zip(self.e.results(pid)) {
                    self.map.insert(a, v);
                }
            }
        }
        let seed = active
            .iter()
            .enumerate()
            .map(|(a, &jj)| (body.yields[jj], Tan::Val(args[1 + a])))
            .collect();
        let mut wanted: Vec<ValueId> = active.iter().map(|&jj| body.args[first + jj]).collect();
        wanted.extend(outer.iter().copied());
        let contrib = self.scoped_sweep(&body.ops, seed, &wanted)?;
        let mut ys = Vec::new();
        for &jj in &active {
            let a = body.args[first + jj];
            let t = contrib.get(&a).cloned().unwrap_or(Tan::Zero);
            let p = self.v(a);
            ys.push(
                materialize(&mut self.e, &t, p)?
                    .ok_or_else(|| AdError::Internal("carried adjoint".into()))?,
            );
        }
        for (q, &o) in outer.iter().enumerate() {
            let acc = args[1 + active.len() + q];
            let t = contrib.get(&o).cloned().unwrap_or(Tan::Zero);
            let p = self.v(o);
            let sum = tangent::add(&mut self.e, Tan::Val(acc), t, p)?;
            ys.push(
                materialize(&mut self.e, &sum, p)?
                    .ok_or_else(|| AdError::Internal("outer adjoint".into()))?,
            );
        }
        for &c in &undone {
            ys.push(self.v(body.args[1 + c]));
        }
        let region = self.e.end_region(ys);
        let mut operands = vec![zero, n];
        operands.extend(inits);
        let rtypes = types[1..].to_vec();
        let nid = self
            .e
            .push_with_regions(OpKind::For, operands, rtypes, vec![region]);
        let res = self.e.results(nid);
        for (a, &jj) in active.iter().enumerate() {
            self.accumulate(op.operands[init_at + jj], Ct::Tan(Tan::Val(res[a])))?;
        }
        for (q, &o) in outer.iter().enumerate() {
            self.accumulate(o, Ct::Tan(Tan::Val(res[active.len() + q])))?;
        }
        Ok(())
    }
}
