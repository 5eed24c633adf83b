//! Forward mode by source transformation.
//!
//! [`jvp`] turns `@f(p1, …, pn) -> R` into `@f$jvp{k}(p1, …, pn, t¹…, …, tᵏ…)
//! -> (R, T, …, T)`: after the primal parameters come, for each of the `k` seed
//! directions, one tangent per parameter that has a tangent type (floats, float
//! tensors, tuples containing them; see [`tangent_type`]). The result is the primal
//! result followed by its `k` tangents (the unit `()` where `R` has no tangent).
//!
//! One pass computes all `k` directions (vector mode). Tangents ride along through
//! `scf.if` (extra results), `scf.for` and `scf.while` (extra carried values, found
//! by a small fixed point: a carried value gets a tangent once its initial value or
//! the body gives it a non-zero one), and calls (the callee's own `$jvp{k}`;
//! recursion works because the derivative function is registered before its body is
//! built). Symbolic zeros ([`Tan::Zero`]) keep inactive values free of tangent IR.
//! `tape.push`/`tape.pop` (in a reverse-mode derivative, e.g. under `hessian`)
//! push and pop the tangents beside the values; a call of a function that touches
//! the tape is differentiated even when no tangent reaches it, so that the pushes
//! of one function (`f$rfwd` of a recursive `f`) and the pops of another
//! (`f$rbwd`) keep the same layout.

use std::collections::HashMap;

use super::emit::Emitter;
use super::rules::{self, Jvp};
use super::tangent::{Tan, materialize, tangent_type};
use super::{AdError, check};
use crate::ir::{Derivation, DerivedKey, FuncRef, Function, Module, Op, OpId, OpKind, Region, Type, ValueId};

/// Creates (or finds) `f$jvp{seeds}`; see the module docs for its signature.
pub fn jvp(module: &mut Module, f: FuncRef, seeds: usize) -> Result<FuncRef, AdError> {
    let mut created = Vec::new();
    let h = jvp_of(module, f, seeds, &mut created)?;
    for g in created {
        check(module, g)?;
    }
    Ok(h)
}

/// Like [`jvp`], but only the parameters marked in `active` carry tangents: the
/// derivative takes tangent parameters for those only (per seed, in parameter
/// order), and the others are constants (symbolic zero tangents, no tangent IR).
/// Callees are differentiated with every parameter active. Named
/// `f$jvp{seeds}@` followed by the mask (`1` active, `0` not).
pub fn jvp_active(
    module: &mut Module,
    f: FuncRef,
    seeds: usize,
    active: &[bool],
) -> Result<FuncRef, AdError> {
    let mut created = Vec::new();
    let h = jvp_masked(module, f, seeds, Some(active), &mut created)?;
    for g in created {
        check(module, g)?;
    }
    Ok(h)
}

fn jvp_of(
    module: &mut Module,
    f: FuncRef,
    k: usize,
    created: &mut Vec<FuncRef>,
) -> Result<FuncRef, AdError> {
    jvp_masked(module, f, k, None, created)
}

fn jvp_masked(
    module: &mut Module,
    f: FuncRef,
    k: usize,
    active: Option<&[bool]>,
    created: &mut Vec<FuncRef>,
) -> Result<FuncRef, AdError> {
    let src = module
        .functions
        .get(f)
        .cloned()
        .ok_or_else(|| AdError::Internal(format!("no function #{}", f.index())))?;
    let is_active = |i: usize| active.is_none_or(|a| a.get(i).copied().unwrap_or(false));
    let key = DerivedKey { of: f, derivation: Derivation::Jvp { seeds: k, active: active.map(<[bool]>::to_vec) } };
    if let Some(h) = module.derived(&key) {
        return Ok(h);
    }
    let name = key.derivation.name(&src.name);
    let ptypes = src.param_types();
    let mut params = ptypes.clone();
    for _ in 0..k {
        params.extend(
            ptypes
                .iter()
                .enumerate()
                .filter(|&(i, _)| is_active(i))
                .filter_map(|(_, t)| tangent_type(t)),
        );
    }
    let rt = tangent_type(&src.ret).unwrap_or_else(Type::unit);
    let mut rets = vec![src.ret.clone()];
    rets.extend((0..k).map(|_| rt.clone()));
    let func = Function::new(name, &params, Type::Tuple(rets));
    let h = module.add_derived(key, func.clone());
    created.push(h);

    let new_params = func.params().to_vec();
    // Derivatives a program asks for (`jvp`, `jacobian`, `hessian`, and everything they
    // call) treat a zero scalar tangent as a strong zero; the energy kernels
    // (`jvp_active`, whose seeds are unit vectors on fully inlined code) keep plain
    // products, as they are hot and their inputs finite.
    let mut e = Emitter::new(func);
    e.strong_zero = active.is_none();
    let mut fw = Fwd {
        module,
        created,
        e,
        src: &src,
        k,
        map: HashMap::new(),
        tan: HashMap::new(),
    };
    let mut next = src.params().len();
    for (i, &p) in src.params().iter().enumerate() {
        fw.map.insert(p, new_params[i]);
    }
    let mut per_seed: Vec<Vec<Tan>> = vec![Vec::new(); src.params().len()];
    for _ in 0..k {
        for (i, t) in ptypes.iter().enumerate() {
            if is_active(i) && tangent_type(t).is_some() {
                per_seed[i].push(Tan::Val(new_params[next]));
                next += 1;
            } else {
                per_seed[i].push(Tan::Zero);
            }
        }
    }
    for (i, &p) in src.params().iter().enumerate() {
        fw.tan.insert(p, std::mem::take(&mut per_seed[i]));
    }
    fw.ops(&src.body.ops)?;
    let ret = src
        .body
        .yields
        .first()
        .copied()
        .ok_or_else(|| AdError::Internal("body yields nothing".into()))?;
    let r = fw.v(ret);
    let mut parts = vec![r];
    for s in 0..k {
        let t = fw.t(ret, s);
        parts.push(match materialize(&mut fw.e, &t, r)? {
            Some(v) => v,
            None => fw.e.op(OpKind::Tuple, vec![])?,
        });
    }
    let out = fw.e.op(OpKind::Tuple, parts)?;
    let built = fw.e.finish(out);
    module.functions[h] = Function {
        ad_mode: src.ad_mode,
        source_file: src.source_file,
        ..built
    };
    Ok(h)
}

struct Fwd<'a> {
    module: &'a mut Module,
    created: &'a mut Vec<FuncRef>,
    e: Emitter,
    src: &'a Function,
    k: usize,
    map: HashMap<ValueId, ValueId>,
    tan: HashMap<ValueId, Vec<Tan>>,
}

impl Fwd<'_> {
    fn v(&self, old: ValueId) -> ValueId {
        self.map.get(&old).copied().unwrap_or(old)
    }

    fn t(&self, old: ValueId, s: usize) -> Tan {
        self.tan
            .get(&old)
            .and_then(|ts| ts.get(s).cloned())
            .unwrap_or(Tan::Zero)
    }

    fn has_tangent(&self, old: ValueId) -> bool {
        self.tan
            .get(&old)
            .is_some_and(|ts| ts.iter().any(|t| !t.is_zero()))
    }

    fn ops(&mut self, ops: &[OpId]) -> Result<(), AdError> {
        for &id in ops {
            self.op(id)?;
        }
        Ok(())
    }

    fn op(&mut self, id: OpId) -> Result<(), AdError> {
        let op: &Op = &self.src.ops[id];
        self.e.set_span(self.src.span(id));
        let xs: Vec<ValueId> = op.operands.iter().map(|&v| self.v(v)).collect();
        match &op.kind {
            OpKind::If => return self.fwd_if(op, xs),
            OpKind::For => return self.fwd_loop(op, xs, 2),
            OpKind::While => return self.fwd_loop(op, xs, 0),
            OpKind::Call(g) => return self.fwd_call(op, *g, xs),
            OpKind::TapePush | OpKind::TapePop => return self.fwd_tape(op, xs),
            _ => {}
        }
        let rtypes: Vec<Type> = op.results.iter().map(|&r| self.src.ty(r).clone()).collect();
        let nid = self.e.push(op.kind.clone(), xs.clone(), rtypes);
        let ys = self.e.results(nid);
        for (&o, &n) in op.results.iter().zip(&ys) {
            self.map.insert(o, n);
        }
        if !op.operands.iter().any(|&v| self.has_tangent(v)) {
            return Ok(());
        }
        let mut per_result: Vec<Vec<Tan>> = vec![Vec::new(); ys.len()];
        for s in 0..self.k {
            let dx: Vec<Tan> = op.operands.iter().map(|&v| self.t(v, s)).collect();
            match rules::jvp(&mut self.e, &op.kind, &xs, &ys, &dx)? {
                Jvp::Tangents(ts) => {
                    for (r, t) in per_result.iter_mut().zip(ts) {
                        r.push(t);
                    }
                }
                Jvp::Structural => {
                    return Err(AdError::Internal(format!(
                        "`{}` is structural",
                        op.kind.name()
                    )));
                }
            }
        }
        for (&o, ts) in op.results.iter().zip(per_result) {
            self.tan.insert(o, ts);
        }
        Ok(())
    }

    /// `tape.push`/`tape.pop` carry the tangents beside the values: a push adds,
    /// after its values, the `k` tangents of every operand with a tangent type
    /// (zeros materialized), and a pop of the same types pops them back. Both sides
    /// are built from one type list, so pushes and pops stay matched.
    fn fwd_tape(&mut self, op: &Op, xs: Vec<ValueId>) -> Result<(), AdError> {
        if op.kind == OpKind::TapePush {
            let mut operands = xs.clone();
            for s in 0..self.k {
                for (&o, &x) in op.operands.iter().zip(&xs) {
                    let t = self.t(o, s);
                    if let Some(v) = materialize(&mut self.e, &t, x)? {
                        operands.push(v);
                    }
                }
            }
            self.e.push(OpKind::TapePush, operands, vec![]);
            return Ok(());
        }
        let rtypes: Vec<Type> = op.results.iter().map(|&r| self.src.ty(r).clone()).collect();
        let mut all = rtypes.clone();
        for _ in 0..self.k {
            all.extend(rtypes.iter().filter_map(tangent_type));
        }
        let nid = self.e.push(OpKind::TapePop, vec![], all);
        let ys = self.e.results(nid);
        for (&o, &n) in op.results.iter().zip(&ys) {
            self.map.insert(o, n);
        }
        let mut next = op.results.len();
        let mut per_result: Vec<Vec<Tan>> = vec![Vec::new(); op.results.len()];
        for _ in 0..self.k {
            for (j, t) in rtypes.iter().enumerate() {
                if tangent_type(t).is_some() {
                    per_result[j].push(Tan::Val(ys[next]));
                    next += 1;
                } else {
                    per_result[j].push(Tan::Zero);
                }
            }
        }
        for (&o, ts) in op.results.iter().zip(per_result) {
            self.tan.insert(o, ts);
        }
        Ok(())
    }

    fn fwd_call(&mut self, op: &Op, g: FuncRef, xs: Vec<ValueId>) -> Result<(), AdError> {
        let rtypes: Vec<Type> = op.results.iter().map(|&r| self.src.ty(r).clone()).collect();
        // A callee that touches the tape is always differentiated, so that its
        // pushes and pops carry tangents like those of the calls it pairs with.
        if !op.operands.iter().any(|&v| self.has_tangent(v))
            && !super::recursion::uses_tape(self.module, g)
        {
            let nid = self.e.push(op.kind.clone(), xs, rtypes);
            let ys = self.e.results(nid);
            for (&o, &n) in op.results.iter().zip(&ys) {
                self.map.insert(o, n);
            }
            return Ok(());
        }
        let gj = jvp_of(self.module, g, self.k, self.created)?;
        let mut args = xs.clone();
        for s in 0..self.k {
            for (&o, &x) in op.operands.iter().zip(&xs) {
                let t = self.t(o, s);
                if let Some(v) = materialize(&mut self.e, &t, x)? {
                    args.push(v);
                }
            }
        }
        let ret = self.module.functions[gj].ret.clone();
        let nid = self.e.push(OpKind::Call(gj), args, vec![ret]);
        let out = self.e.results(nid)[0];
        let y = self.e.op(OpKind::TupleGet(0), vec![out])?;
        let old = op.results[0];
        self.map.insert(old, y);
        let has = tangent_type(self.src.ty(old)).is_some();
        let mut ts = Vec::new();
        for s in 0..self.k {
            ts.push(if has {
                Tan::Val(self.e.op(OpKind::TupleGet(s as u32 + 1), vec![out])?)
            } else {
                Tan::Zero
            });
        }
        self.tan.insert(old, ts);
        Ok(())
    }

    /// Builds a region of the source with the given primal argument values
    /// mapped and their tangents; returns the region (yielding the primal yields)
    /// and the tangents of its yields.
    fn region(
        &mut self,
        r: &Region,
        arg_types: &[Type],
        bind: impl FnOnce(&mut Self, &[ValueId]),
    ) -> Result<(Region, Vec<Vec<Tan>>), AdError> {
        let args = self.e.begin_region(arg_types);
        bind(self, &args);
        self.ops(&r.ops)?;
        let yields: Vec<ValueId> = r.yields.iter().map(|&y| self.v(y)).collect();
        let tans = r
            .yields
            .iter()
            .map(|&y| (0..self.k).map(|s| self.t(y, s)).collect())
            .collect();
        Ok((self.e.end_region(yields), tans))
    }

    /// Appends the materialized tangents `tans[j][s]` for the active `(j, s)` to
    /// region `r`'s yields.
    fn close_with_tangents(
        &mut self,
        r: Region,
        tans: &[Vec<Tan>],
        active: &[Vec<bool>],
    ) -> Result<Region, AdError> {
        let mut yields = r.yields.clone();
        self.e.reopen(r);
        for (j, row) in active.iter().enumerate() {
            for (s, &a) in row.iter().enumerate() {
                if a {
                    let p = yields[j];
                    let v = materialize(&mut self.e, &tans[j][s], p)?.ok_or_else(|| {
                        AdError::Internal("active value without a tangent type".into())
                    })?;
                    yields.push(v);
                }
            }
        }
        Ok(self.e.end_region(yields))
    }

    fn fwd_if(&mut self, op: &Op, xs: Vec<ValueId>) -> Result<(), AdError> {
        let (then_r, then_t) = self.region(&op.regions[0], &[], |_, _| {})?;
        let (else_r, else_t) = self.region(&op.regions[1], &[], |_, _| {})?;
        let rtypes: Vec<Type> = op.results.iter().map(|&r| self.src.ty(r).clone()).collect();
        let active: Vec<Vec<bool>> = (0..rtypes.len())
            .map(|j| {
                (0..self.k)
                    .map(|s| {
                        tangent_type(&rtypes[j]).is_some()
                            && !(then_t[j][s].is_zero() && else_t[j][s].is_zero())
                    })
                    .collect()
            })
            .collect();
        let then_r = self.close_with_tangents(then_r, &then_t, &active)?;
        let else_r = self.close_with_tangents(else_r, &else_t, &active)?;
        // Each active result's tangents have its tangent type (a tuple's `bool` parts are `()`).
        let mut all_types = rtypes.clone();
        for (j, row) in active.iter().enumerate() {
            for &a in row {
                if a {
                    all_types.push(tangent_type(&rtypes[j]).expect("active results have a tangent type"));
                }
            }
        }
        let nid = self
            .e
            .push_with_regions(OpKind::If, xs, all_types, vec![then_r, else_r]);
        let ys = self.e.results(nid);
        self.bind_results(op, &ys, &active);
        Ok(())
    }

    /// Maps `op`'s results to `ys` (primal results, then the active tangents).
    fn bind_results(&mut self, op: &Op, ys: &[ValueId], active: &[Vec<bool>]) {
        let n = op.results.len();
        let mut next = n;
        for (j, &o) in op.results.iter().enumerate() {
            self.map.insert(o, ys[j]);
            let mut ts = Vec::new();
            for &a in &active[j] {
                if a {
                    ts.push(Tan::Val(ys[next]));
                    next += 1;
                } else {
                    ts.push(Tan::Zero);
                }
            }
            self.tan.insert(o, ts);
        }
    }

    /// `scf.for` (`skip` = 2: lo, hi; the body's first argument is the index) and
    /// `scf.while` (`skip` = 0; a cond region before the body).
    fn fwd_loop(&mut self, op: &Op, xs: Vec<ValueId>, skip: usize) -> Result<(), AdError> {
        let is_for = skip == 2;
        let inits = &op.operands[skip..];
        let ctypes: Vec<Type> = op.results.iter().map(|&r| self.src.ty(r).clone()).collect();
        let mut active: Vec<Vec<bool>> = inits
            .iter()
            .zip(&ctypes)
            .map(|(&v, t)| {
                (0..self.k)
                    .map(|s| tangent_type(t).is_some() && !self.t(v, s).is_zero())
                    .collect()
            })
            .collect();
        let body_src = if is_for {
            &op.regions[0]
        } else {
            &op.regions[1]
        };
        let arg_types = |active: &[Vec<bool>]| {
            let mut ts = if is_for { vec![Type::I64] } else { vec![] };
            ts.extend(ctypes.iter().cloned());
            for (j, row) in active.iter().enumerate() {
                ts.extend(row.iter().filter(|&&a| a).map(|_| tangent_type(&ctypes[j]).expect("active values have a tangent type")));
            }
            ts
        };
        let first = usize::from(is_for);
        let bind_args = |fw: &mut Self, r: &Region, args: &[ValueId], active: &[Vec<bool>]| {
            let mut next = first + ctypes.len();
            for (i, &a) in r.args.iter().enumerate() {
                fw.map.insert(a, args[i]);
            }
            for (j, row) in active.iter().enumerate() {
                let mut ts = Vec::new();
                for &a in row {
                    if a {
                        ts.push(Tan::Val(args[next]));
                        next += 1;
                    } else {
                        ts.push(Tan::Zero);
                    }
                }
                fw.tan.insert(r.args[first + j], ts);
            }
        };
        let body = loop {
            let act = active.clone();
            let (r, tans) = self.region(body_src, &arg_types(&act), |fw, args| {
                bind_args(fw, body_src, args, &act)
            })?;
            let mut grew = false;
            for (j, row) in active.iter_mut().enumerate() {
                for (s, a) in row.iter_mut().enumerate() {
                    if !*a && tangent_type(&ctypes[j]).is_some() && !tans[j][s].is_zero() {
                        *a = true;
                        grew = true;
                    }
                }
            }
            if !grew {
                break self.close_with_tangents(r, &tans, &active)?;
            }
        };
        let mut regions = Vec::new();
        if !is_for {
            let act = active.clone();
            let cond_src = &op.regions[0];
            let (cond, _) = self.region(cond_src, &arg_types(&act), |fw, args| {
                bind_args(fw, cond_src, args, &act)
            })?;
            regions.push(cond);
        }
        regions.push(body);
        let mut operands = xs.clone();
        for (j, row) in active.iter().enumerate() {
            for (s, &a) in row.iter().enumerate() {
                if a {
                    let t = self.t(inits[j], s);
                    let v = materialize(&mut self.e, &t, xs[skip + j])?.ok_or_else(|| {
                        AdError::Internal("carried value without a tangent type".into())
                    })?;
                    operands.push(v);
                }
            }
        }
        let mut all_types = ctypes.clone();
        for (j, row) in active.iter().enumerate() {
            all_types.extend(row.iter().filter(|&&a| a).map(|_| tangent_type(&ctypes[j]).expect("active values have a tangent type")));
        }
        let kind = op.kind.clone();
        let nid = self.e.push_with_regions(kind, operands, all_types, regions);
        let ys = self.e.results(nid);
        self.bind_results(op, &ys, &active);
        Ok(())
    }
}
