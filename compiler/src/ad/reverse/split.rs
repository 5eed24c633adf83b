//! Split mode of recursive functions on the tape (see [`crate::ad::recursion`]
//! for which functions and calls).
//!
//! The body is cut into *segments* at its split points: split calls, and
//! `scf.if`s holding one (each branch is cut in turn). A segment's *live-ins*
//! are the values its ops (and, for the last segment of a region, the region's
//! yields) read but do not define, plus what the split point before it needs in
//! the reverse pass: a call's result and its operands with a derivative; an
//! `if`'s condition, its results and the outer values its branches read; for
//! the first segment of the body, every parameter with a derivative. A live-in
//! that the reverse pass already holds when it reaches the segment (popped for
//! a later segment of the same region, or of an enclosing one) is not pushed.
//!
//! - `f$rfwd(p…) -> R` runs the primal; at the start of every segment it pushes
//!   the segment's live-ins (`tape.push`), and at a split call it calls the
//!   callee's `$rfwd`, whose pushes land between the segments' own.
//! - `f$rbwd(r̄) -> (p̄…)` takes the segments last to first: it pops a segment's
//!   live-ins, recomputes the segment's primal values, sweeps its ops backwards
//!   (as `Rev` does a whole body), and then handles the split point
//!   before it: at a call it calls the callee's `$rbwd` with the result's adjoint
//!   and adds the returned adjoints to the operands; at an `if` it branches on the
//!   popped condition and runs the taken branch's segments the same way. Popping
//!   last to first mirrors the pushes exactly (LIFO), on every path: the pops of
//!   an `if` branch are those of the branch the forward pass took.
//! - `f$vjp(p…, r̄)` is `f$rfwd` then `f$rbwd`: callers see the usual signature.
//!
//! Each level of the recursion runs its primal once forward and once backward,
//! so the work is linear in the recursion depth, and the tape holds the live-ins
//! of every segment of every level.

use std::collections::{BTreeSet, HashMap};

use super::{AdError, Rev, free_float_values, install, used_in};
use crate::ad::emit::Emitter;
use crate::ad::recursion::{is_split_call, is_split_point};
use crate::ad::rules::Ct;
use crate::ad::tangent::{Tan, materialize, tangent_type};
use crate::ir::{Derivation, DerivedKey, FuncRef, Function, Module, Op, OpId, OpKind, Region, Type, ValueId};


/// A segment of a region: the split point before it (none for the first), its
/// ops, the live-ins it pushes in a fixed order (the layout of its tape entry),
/// and the values the reverse pass holds when it reaches the split point.
struct Segment {
    point: Option<OpId>,
    ops: Vec<OpId>,
    live: Vec<ValueId>,
    after: BTreeSet<ValueId>,
}

/// Values defined by `ops` (results, and everything defined in their regions).
fn defined_by(src: &Function, ops: &[OpId]) -> BTreeSet<ValueId> {
    let mut out = BTreeSet::new();
    let r = Region {
        args: Vec::new(),
        ops: ops.to_vec(),
        yields: Vec::new(),
    };
    super::defined_in(src, &r, &mut out);
    out
}

/// The segments of region `r` of function `f` (`top`: `r` is the body), where
/// the reverse pass already holds the values `held` when it enters `r` (those
/// popped by the enclosing regions' later segments).
///
/// A live-in that a later segment of `r` (popped earlier by the reverse pass,
/// in an enclosing scope) or an enclosing region already provides is not pushed
/// again.
fn segments(
    module: &Module,
    f: FuncRef,
    src: &Function,
    r: &Region,
    top: bool,
    held: &BTreeSet<ValueId>,
) -> Vec<Segment> {
    let fresh = |point| Segment {
        point,
        ops: Vec::new(),
        live: Vec::new(),
        after: BTreeSet::new(),
    };
    let mut segs = vec![fresh(None)];
    for &id in &r.ops {
        if is_split_point(module, f, &src.ops[id]) {
            segs.push(fresh(Some(id)));
        } else if let Some(s) = segs.last_mut() {
            s.ops.push(id);
        }
    }
    let last = segs.len() - 1;
    for (i, s) in segs.iter_mut().enumerate() {
        let mut used = BTreeSet::new();
        let body = Region {
            args: Vec::new(),
            ops: s.ops.clone(),
            yields: if i == last {
                r.yields.clone()
            } else {
                Vec::new()
            },
        };
        used_in(src, &body, &mut used);
        let defined = defined_by(src, &s.ops);
        let mut live: BTreeSet<ValueId> = used.difference(&defined).copied().collect();
        let active = |v: &ValueId| tangent_type(src.ty(*v)).is_some();
        if let Some(p) = s.point {
            let op = &src.ops[p];
            live.extend(op.results.iter().copied());
            match op.kind {
                OpKind::If => {
                    live.insert(op.operands[0]);
                    live.extend(free_float_values(src, &op.regions));
                }
                _ => live.extend(op.operands.iter().copied().filter(active)),
            }
        }
        if top && i == 0 {
            live.extend(src.params().iter().copied().filter(active));
        }
        s.live = live.into_iter().collect();
    }
    let mut have = held.clone();
    for s in segs.iter_mut().rev() {
        let all = std::mem::take(&mut s.live);
        s.live = all.iter().copied().filter(|v| !have.contains(v)).collect();
        have.extend(all);
        s.after = have.clone();
    }
    segs
}

/// Creates (or finds) `f$rfwd`.
pub(super) fn rfwd_of(
    module: &mut Module,
    f: FuncRef,
    created: &mut Vec<FuncRef>,
) -> Result<FuncRef, AdError> {
    let src = module.functions[f].clone();
    let key = DerivedKey { of: f, derivation: Derivation::SplitForward };
    if let Some(h) = module.derived(&key) {
        return Ok(h);
    }
    let name = key.derivation.name(&src.name);
    let func = Function::new(name, &src.param_types(), src.ret.clone());
    let h = module.add_derived(key, func.clone());
    created.push(h);
    let params = func.params().to_vec();
    let mut rv = Rev::new(module, created, Emitter::new(func), &src);
    for (&p, &n) in src.params().iter().zip(&params) {
        rv.map.insert(p, n);
    }
    let ys = rv.rfwd_region(f, &src.body, true, &BTreeSet::new())?;
    let ret = ys
        .first()
        .copied()
        .ok_or_else(|| AdError::Internal("body yields nothing".into()))?;
    let built = rv.e.finish(ret);
    install(module, h, &src, built);
    Ok(h)
}

/// Creates (or finds) `f$rbwd`.
pub(super) fn rbwd_of(
    module: &mut Module,
    f: FuncRef,
    created: &mut Vec<FuncRef>,
) -> Result<FuncRef, AdError> {
    let src = module.functions[f].clone();
    let key = DerivedKey { of: f, derivation: Derivation::SplitBackward };
    if let Some(h) = module.derived(&key) {
        return Ok(h);
    }
    let name = key.derivation.name(&src.name);
    let ct = tangent_type(&src.ret).ok_or_else(|| AdError::Signature {
        function: src.name.clone(),
        message: format!("its result type {} has no derivative", src.ret),
    })?;
    let rets: Vec<Type> = src.param_types().iter().filter_map(tangent_type).collect();
    let func = Function::new(name, &[ct], Type::Tuple(rets));
    let h = module.add_derived(key, func.clone());
    created.push(h);
    let seed = func.params()[0];
    let mut rv = Rev::new(module, created, Emitter::new(func), &src);
    let ret = src
        .body
        .yields
        .first()
        .copied()
        .ok_or_else(|| AdError::Internal("body yields nothing".into()))?;
    rv.rbwd_region(
        f,
        &src.body,
        true,
        &BTreeSet::new(),
        vec![(ret, Tan::Val(seed))],
    )?;
    let built = rv.finish_with_param_adjoints(&src, Vec::new())?;
    install(module, h, &src, built);
    Ok(h)
}

/// Builds `f$vjp` (already registered as `h`, with its final signature) as
/// `f$rfwd` followed by `f$rbwd`.
pub(super) fn split_vjp(
    module: &mut Module,
    f: FuncRef,
    h: FuncRef,
    created: &mut Vec<FuncRef>,
) -> Result<(), AdError> {
    let fwd = rfwd_of(module, f, created)?;
    let bwd = rbwd_of(module, f, created)?;
    let func = module.functions[h].clone();
    let params = func.params().to_vec();
    let n = params.len() - 1;
    let rret = module.functions[fwd].ret.clone();
    let bret = module.functions[bwd].ret.clone();
    let k = match &bret {
        Type::Tuple(items) => items.len(),
        _ => 0,
    };
    let mut e = Emitter::new(func);
    let fid = e.push(OpKind::Call(fwd), params[..n].to_vec(), vec![rret]);
    let y = e.results(fid)[0];
    let bid = e.push(OpKind::Call(bwd), vec![params[n]], vec![bret]);
    let t = e.results(bid)[0];
    let mut parts = vec![y];
    for i in 0..k {
        parts.push(e.op(OpKind::TupleGet(i as u32), vec![t])?);
    }
    let out = e.op(OpKind::Tuple, parts)?;
    let src = &module.functions[f];
    let built = Function {
        ad_mode: src.ad_mode,
        source_file: src.source_file,
        ..e.finish(out)
    };
    module.functions[h] = built;
    Ok(())
}

impl Rev<'_> {
    /// Pushes the mapped values of `live` (nothing when empty).
    fn push_live(&mut self, live: &[ValueId]) {
        if live.is_empty() {
            return;
        }
        let vals: Vec<ValueId> = live.iter().map(|&v| self.v(v)).collect();
        self.e.push(OpKind::TapePush, vals, vec![]);
    }

    /// Pops `live` back (nothing when empty) and maps them to the popped values.
    fn pop_live(&mut self, live: &[ValueId]) {
        if live.is_empty() {
            return;
        }
        let types: Vec<Type> = live.iter().map(|&v| self.src.ty(v).clone()).collect();
        let pid = self.e.push(OpKind::TapePop, vec![], types);
        for (&o, n) in live.iter().zip(self.e.results(pid)) {
            self.map.insert(o, n);
        }
    }

    /// The forward pass of region `r` of `f`: returns its mapped yields.
    fn rfwd_region(
        &mut self,
        f: FuncRef,
        r: &Region,
        top: bool,
        held: &BTreeSet<ValueId>,
    ) -> Result<Vec<ValueId>, AdError> {
        let segs = segments(self.module, f, self.src, r, top, held);
        for s in &segs {
            if let Some(p) = s.point {
                self.e.set_span(self.src.span(p));
                self.rfwd_point(f, p, &s.after)?;
            }
            self.push_live(&s.live);
            for &id in &s.ops {
                self.e.set_span(self.src.span(id));
                self.clone_op(id)?;
            }
        }
        Ok(r.yields.iter().map(|&y| self.v(y)).collect())
    }

    fn rfwd_point(
        &mut self,
        f: FuncRef,
        id: OpId,
        held: &BTreeSet<ValueId>,
    ) -> Result<(), AdError> {
        let op: &Op = &self.src.ops[id];
        let rtypes: Vec<Type> = op.results.iter().map(|&r| self.src.ty(r).clone()).collect();
        let nid = match op.kind {
            OpKind::Call(g) => {
                let gf = rfwd_of(self.module, g, self.created)?;
                let xs: Vec<ValueId> = op.operands.iter().map(|&v| self.v(v)).collect();
                self.e.push(OpKind::Call(gf), xs, rtypes)
            }
            OpKind::If => {
                let mut regions = Vec::new();
                for r in &op.regions {
                    self.e.begin_region(&[]);
                    let ys = self.rfwd_region(f, r, false, held)?;
                    regions.push(self.e.end_region(ys));
                }
                let cond = self.v(op.operands[0]);
                self.e
                    .push_with_regions(OpKind::If, vec![cond], rtypes, regions)
            }
            _ => return Err(AdError::Internal("split point".into())),
        };
        for (&o, n) in op.results.iter().zip(self.e.results(nid)) {
            self.map.insert(o, n);
        }
        Ok(())
    }

    /// The reverse pass of region `r` of `f`, whose yields have the adjoints `seeds`.
    fn rbwd_region(
        &mut self,
        f: FuncRef,
        r: &Region,
        top: bool,
        held: &BTreeSet<ValueId>,
        seeds: Vec<(ValueId, Tan)>,
    ) -> Result<(), AdError> {
        let segs = segments(self.module, f, self.src, r, top, held);
        let last = segs.len() - 1;
        let mut seeds = Some(seeds);
        for (i, s) in segs.iter().enumerate().rev() {
            self.pop_live(&s.live);
            self.forward(&s.ops)?;
            if i == last {
                for (v, t) in seeds.take().unwrap_or_default() {
                    self.accumulate(v, Ct::Tan(t))?;
                }
            }
            self.backward(&s.ops)?;
            if let Some(p) = s.point {
                self.e.set_span(self.src.span(p));
                self.rbwd_point(f, p, &s.after)?;
            }
        }
        Ok(())
    }

    fn rbwd_point(
        &mut self,
        f: FuncRef,
        id: OpId,
        held: &BTreeSet<ValueId>,
    ) -> Result<(), AdError> {
        let op: &Op = &self.src.ops[id];
        let g: Vec<Tan> = op
            .results
            .iter()
            .map(|r| self.adj.get(r).cloned().unwrap_or(Tan::Zero))
            .collect();
        match op.kind {
            OpKind::Call(callee) => {
                if !is_split_call(self.module, f, op) {
                    return Err(AdError::Internal("split call".into()));
                }
                let gb = rbwd_of(self.module, callee, self.created)?;
                let y = self.v(op.results[0]);
                let yb = materialize(&mut self.e, &g[0], y)?
                    .ok_or_else(|| AdError::Internal("call cotangent".into()))?;
                let ret = self.module.functions[gb].ret.clone();
                let nid = self.e.push(OpKind::Call(gb), vec![yb], vec![ret]);
                let out = self.e.results(nid)[0];
                let mut next = 0;
                for &o in &op.operands {
                    if tangent_type(self.src.ty(o)).is_some() {
                        let a = self.e.op(OpKind::TupleGet(next), vec![out])?;
                        next += 1;
                        self.accumulate(o, Ct::Tan(Tan::Val(a)))?;
                    }
                }
                Ok(())
            }
            OpKind::If => {
                let outer = free_float_values(self.src, &op.regions);
                let saved_adj = std::mem::take(&mut self.adj);
                let saved_map: HashMap<ValueId, ValueId> = self.map.clone();
                let mut regions = Vec::new();
                for r in &op.regions {
                    self.adj = HashMap::new();
                    self.map = saved_map.clone();
                    self.e.begin_region(&[]);
                    let seeds = r.yields.iter().copied().zip(g.iter().cloned()).collect();
                    self.rbwd_region(f, r, false, held, seeds)?;
                    let mut ys = Vec::new();
                    for &o in &outer {
                        let t = self.adj.get(&o).cloned().unwrap_or(Tan::Zero);
                        let p = self.v(o);
                        ys.push(
                            materialize(&mut self.e, &t, p)?
                                .ok_or_else(|| AdError::Internal("if adjoint".into()))?,
                        );
                    }
                    regions.push(self.e.end_region(ys));
                }
                self.adj = saved_adj;
                self.map = saved_map;
                self.emit_if_adjoint(op.operands[0], &outer, regions)
            }
            _ => Err(AdError::Internal("split point".into())),
        }
    }
}
