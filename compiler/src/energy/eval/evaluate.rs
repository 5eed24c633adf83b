//! Evaluation over the whole mesh: element loops that gather each element's
//! local dofs, data and params into flat slots, call a JIT-compiled kernel
//! directly ([`crate::back::native::RawCaller`], one per worker), and add the
//! results into the global energy, gradient, Hessian values or HVP.
//!
//! Schedule: the fixed one of [`mad_runtime::sparse::Coloring`] (contiguous
//! chunks, colours in order, chunks of one colour in parallel, elements of a
//! chunk in order; energies summed per chunk, then chunk sums in schedule order),
//! so every entry receives its contributions in the same order on every thread
//! count: results are bit-identical. Terms run one after another in declaration
//! order.

use mad_runtime::linalg::sym_eigen::PsdWork;
use mad_runtime::solve::HessianEntries;
use mad_runtime::sparse::{Coloring, ElementList};
use rayon::prelude::*;

use super::batched::Outputs;
use super::bind::{BoundTerm, MeshEnergy};
use super::parallel::{Work, run_colours};
use super::ring::{RING_CHUNK, RingKind};
use crate::back::native::RawCaller;
use crate::codegen::element_loop::BatchKind;
use crate::energy::EnergyError;
use crate::energy::kernels::{Source, TermKernels};
use crate::ir::FuncRef;

/// Which kernel an element loop runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Value,
    Grad,
    Hess {
        project: bool,
        /// Only the upper triangle of the values is read ([`HessianEntries::Upper`]).
        upper: bool,
    },
    Hvp,
    /// ∂²E/∂z∂θ (the term's mixed kernel for one param).
    Mixed,
}

/// A mutable output shared by the workers of one colour.
#[derive(Clone, Copy)]
struct Out(*mut f64, usize);
// SAFETY: workers write only entries that the colouring makes disjoint between
// concurrently running chunks (see the module docs).
unsafe impl Send for Out {}
unsafe impl Sync for Out {}

impl Out {
    fn new(s: Option<&mut [f64]>) -> Option<Out> {
        s.map(|s| Out(s.as_mut_ptr(), s.len()))
    }
    /// # Safety
    /// No other thread accesses entry `i` concurrently.
    #[inline]
    unsafe fn add(self, i: usize, v: f64) {
        assert!(i < self.1);
        unsafe { *self.0.add(i) += v };
    }
}

/// A sparse matrix in CSR form (rows × cols).
#[derive(Clone, Debug, PartialEq)]
pub struct SparseMatrix {
    pub nrows: usize,
    pub ncols: usize,
    pub row_ptr: Vec<usize>,
    pub col_idx: Vec<u32>,
    pub values: Vec<f64>,
}

/// Wall-clock statistics of repeated evaluations (`madc bench`).
#[derive(Clone, Debug, PartialEq)]
pub struct Timing {
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub runs: usize,
}

/// The inputs of one element loop.
struct Job<'a> {
    t: &'a TermKernels,
    b: &'a BoundTerm,
    dofs: &'a ElementList,
    coloring: &'a Coloring,
    func: FuncRef,
    kind: Kind,
    weight: f64,
    x: &'a [f64],
    v: Option<&'a [f64]>,
    grad: Option<Out>,
    hess: Option<Out>,
    hv: Option<Out>,
    slots: Option<&'a ElementList>,
}

struct Worker<'m> {
    call: RawCaller<'m>,
    args: Vec<f64>,
    res: Vec<f64>,
    block: Vec<f64>,
}

impl MeshEnergy<'_> {
    /// Writes element `e`'s data and params (a term's inputs other than its
    /// dofs) into `args` from position `at`, and returns the next free
    /// position. Per-element data is read at `e`, vertex data at the element's
    /// stencil vertices `verts`.
    pub(super) fn gather_others(
        &self,
        others: &[Source],
        e: usize,
        verts: &[u32],
        args: &mut [f64],
        mut at: usize,
    ) -> usize {
        for s in others {
            match *s {
                Source::Data {
                    field,
                    vertex,
                    slots,
                } => {
                    let ent = match vertex {
                        None => e,
                        Some(v) => verts[v as usize] as usize,
                    };
                    let vals = self.data[field].as_deref().unwrap_or(&[]);
                    args[at..at + slots].copy_from_slice(&vals[ent * slots..ent * slots + slots]);
                    at += slots;
                }
                Source::Param { param, int } => {
                    let p = self.params[param];
                    args[at] = if int {
                        f64::from_bits(p as i64 as u64)
                    } else {
                        p
                    };
                    at += 1;
                }
                Source::Dof { .. } => {}
            }
        }
        at
    }

    fn gather(&self, job: &Job, e: usize, args: &mut [f64]) {
        let dofs = job.dofs.get(e);
        for (a, &d) in dofs.iter().enumerate() {
            args[a] = job.x[d as usize];
        }
        let mut at = job.t.k.max(1);
        if job.t.k == 0 {
            args[0] = 0.0;
        }
        at = self.gather_others(&job.t.others, job.b.element_id(e), job.b.verts.get(e), args, at);
        if let (Kind::Hvp, Some(v)) = (job.kind, job.v) {
            for (a, &d) in dofs.iter().enumerate() {
                args[at + a] = v[d as usize];
            }
        }
    }

    fn run_chunk(&self, job: &Job, w: &mut Worker, chunk: u32) -> Result<f64, EnergyError> {
        let k = job.t.k;
        let psd = super::psd::PsdProjector::of(job.t, &self.prog.decls.dofs).for_weight(job.weight);
        let mut work = PsdWork::new();
        let mut sum = 0.0;
        for e in job.coloring.chunk_elements(chunk) {
            self.gather(job, e, &mut w.args);
            if let Err(err) = w.call.call_f64(&w.args, &mut w.res) {
                let at = self.element_label(job.b, e);
                let message = format!("term `{}`, {at}: {err}", job.t.name);
                return Err(self.prog.runtime_error(message, w.call.error_site()));
            }
            let dofs = job.dofs.get(e);
            // SAFETY (of every `add`): chunks of one colour share no dof, hence no
            // gradient/HVP entry and no CSR row; colours run one after another.
            match job.kind {
                Kind::Value => sum += job.weight * w.res[0],
                Kind::Grad | Kind::Hess { .. } => {
                    sum += job.weight * w.res[0];
                    if let Some(g) = job.grad {
                        for (a, &d) in dofs.iter().enumerate() {
                            unsafe { g.add(d as usize, job.weight * w.res[1 + a]) };
                        }
                    }
                    if let (Kind::Hess { project, .. }, Some(h), Some(slots)) =
                        (job.kind, job.hess, job.slots)
                    {
                        // The kernel returns the block by columns.
                        let cols = &w.res[1 + k..1 + k + k * k];
                        let block = &mut w.block[..k * k];
                        for a in 0..k {
                            for b in 0..k {
                                block[a * k + b] = cols[b * k + a];
                            }
                        }
                        if project {
                            psd.one(block, &mut work);
                        }
                        for (&s, &v) in slots.get(e).iter().zip(block.iter()) {
                            unsafe { h.add(s as usize, job.weight * v) };
                        }
                    }
                }
                Kind::Hvp | Kind::Mixed => {
                    if let Some(o) = job.hv {
                        for (a, &d) in dofs.iter().enumerate() {
                            unsafe { o.add(d as usize, job.weight * w.res[a]) };
                        }
                    }
                }
            }
        }
        Ok(sum)
    }

    fn run(&self, job: &Job) -> Result<f64, EnergyError> {
        let prog: &crate::energy::EnergyProgram = self.prog;
        let nargs =
            job.t.k.max(1) + job.t.other_slots + if job.kind == Kind::Hvp { job.t.k } else { 0 };
        let nres = match job.kind {
            Kind::Value => 1,
            Kind::Grad => 1 + job.t.k,
            Kind::Hess { .. } => 1 + job.t.k + job.t.k * job.t.k,
            Kind::Hvp | Kind::Mixed => job.t.k,
        };
        let new_worker = || -> Result<Worker<'_>, EnergyError> {
            let call = prog
                .raw_caller(job.func)
                .map_err(|e| EnergyError::Backend(e.to_string()))?;
            if call.arg_slots() != nargs || call.result_slots() != nres {
                return Err(EnergyError::Kernel {
                    term: job.t.name.clone(),
                    message: format!(
                        "kernel has {} argument and {} result slots; expected {nargs} and {nres}",
                        call.arg_slots(),
                        call.result_slots()
                    ),
                });
            }
            Ok(Worker {
                call,
                args: vec![0.0; nargs],
                res: vec![0.0; nres],
                block: vec![0.0; nres],
            })
        };
        let work = match job.kind {
            Kind::Value => Work::Value,
            Kind::Grad => Work::Grad,
            Kind::Hvp | Kind::Mixed => Work::Hvp,
            Kind::Hess { project: false, .. } => Work::Hess,
            Kind::Hess { project: true, .. } => Work::ProjectedHess,
        };
        let run = |w: &mut Worker, ch: u32| self.run_chunk(job, w, ch);
        run_colours(self.pool.as_ref(), job.coloring, work, self.min_parallel_work, &new_worker, &run)
    }

    /// Sets `buf` to zeros, on the worker threads when there are several.
    pub(crate) fn zero_fill(&self, buf: &mut [f64]) {
        match &self.pool {
            // One contiguous piece per thread: large fills take the C
            // library's streaming stores, small pieces would read every line
            // they write and halve the bandwidth.
            Some(pool) if buf.len() >= 1 << 16 => {
                let piece = buf.len().div_ceil(pool.current_num_threads().max(1));
                pool.install(|| buf.par_chunks_mut(piece).for_each(|c| c.fill(0.0)))
            }
            _ => buf.fill(0.0),
        }
    }

    fn check_x(&self, what: &str, x: &[f64]) -> Result<(), EnergyError> {
        if x.len() != self.ndofs {
            return Err(EnergyError::Host(format!(
                "{what}: expected {} values, found {}",
                self.ndofs,
                x.len()
            )));
        }
        Ok(())
    }

    fn energies_loop(
        &self,
        kind: Kind,
        x: &[f64],
        v: Option<&[f64]>,
        grad: Option<&mut [f64]>,
        hess: Option<&mut [f64]>,
        hv: Option<&mut [f64]>,
    ) -> Result<f64, EnergyError> {
        self.check_x("x", x)?;
        self.check_data()?;
        let weights = self.weights()?;
        let grad = Out::new(grad);
        let hess = Out::new(hess);
        let hv = Out::new(hv);
        // The outputs start from zero: when the first term that writes runs a
        // batched loop, that run clears them (`MeshEnergy::clear_outputs`:
        // first-store marks for the Hessian values, clearing where chunks
        // first touch on several threads, one pass on one); otherwise one
        // pass clears them before that term.
        let mut pending_clear = grad.is_some() || hess.is_some() || hv.is_some();
        let clear_all = |pending: &mut bool| {
            if std::mem::take(pending) {
                for o in [grad, hess, hv].into_iter().flatten() {
                    // SAFETY: `o` is the caller's exclusive output slice.
                    self.zero_fill(unsafe { std::slice::from_raw_parts_mut(o.0, o.1) });
                }
            }
        };
        let mut total = 0.0;
        for (i, t) in self.prog.energies.iter().enumerate() {
            let writes = kind != Kind::Value && !(t.k == 0 && !self.is_pair(i) && t.ring.is_none());
            if self.is_pair(i) {
                clear_all(&mut pending_clear);
                let func = match kind {
                    Kind::Value => Some(t.local),
                    Kind::Grad => t.grad,
                    Kind::Hess { .. } => t.hess,
                    Kind::Hvp => t.hvp,
                    Kind::Mixed => None,
                };
                if t.k == 0 && kind != Kind::Hvp {
                    total +=
                        self.pair_loop(i, Kind::Value, t.local, weights[i], x, None, None, None)?;
                } else if let Some(f) = func {
                    let target = if kind == Kind::Hvp { hv } else { grad };
                    total += self.pair_loop(i, kind, f, weights[i], x, v, target, hess)?;
                }
                continue;
            }
            if t.ring.is_some() {
                clear_all(&mut pending_clear);
                let rk = match (kind, v) {
                    (Kind::Value, _) => RingKind::Value,
                    (Kind::Grad, _) => RingKind::Grad,
                    (Kind::Hess { project, .. }, _) => RingKind::Hess {
                        project,
                        negative: weights[i] < 0.0,
                    },
                    (Kind::Hvp, Some(v)) => RingKind::Hvp(v),
                    _ => continue,
                };
                let target = if kind == Kind::Hvp { hv } else { grad };
                total += self.ring_loop(i, rk, weights[i], x, target, hess)?;
                continue;
            }
            // A term linear in its dofs has zero Hessian blocks: its gradient kernel gives
            // what a Hessian evaluation needs of it (the energy and the gradient).
            let kind = match kind {
                Kind::Hess { .. } if t.hess_zero && t.grad.is_some() => Kind::Grad,
                // Nor does it add to a Hessian-vector product.
                Kind::Hvp if t.hess_zero => continue,
                k => k,
            };
            let func = match kind {
                Kind::Value => Some(t.local),
                Kind::Grad => t.grad,
                Kind::Hess { .. } => t.hess,
                Kind::Hvp => t.hvp,
                Kind::Mixed => continue,
            };
            let slots = &self.pattern.terms[i];
            let Some(func) = func.or(if t.k == 0 { Some(t.local) } else { None }) else {
                continue;
            };
            if t.k == 0 && kind == Kind::Hvp {
                continue;
            }
            let kind = if t.k == 0 { Kind::Value } else { kind };
            let mut batched_error = None;
            if self.batched_enabled() {
                let bk = match kind {
                    Kind::Value => Some(BatchKind::Value),
                    Kind::Grad => Some(BatchKind::Grad),
                    Kind::Hess { project: false, .. } => Some(BatchKind::Hess),
                    Kind::Hvp => Some(BatchKind::Hvp),
                    Kind::Hess { project: true, .. } => Some(BatchKind::HessBlock),
                    Kind::Mixed => None,
                };
                if let Some((bk, bi)) =
                    bk.and_then(|bk| self.prog.batches.get(i)?.get(bk).map(|bi| (bk, bi)))
                {
                    let null = std::ptr::null_mut();
                    let outs = Outputs {
                        grad: grad.map_or(null, |o| o.0),
                        hess: hess.map_or(null, |o| o.0),
                        out: hv.map_or(null, |o| o.0),
                        upper: matches!(kind, Kind::Hess { upper: true, .. }),
                    };
                    let clear = pending_clear && writes;
                    if writes && !clear {
                        clear_all(&mut pending_clear);
                    }
                    match self.run_batched(i, bi, bk, weights[i], x, v, outs, clear) {
                        Some(Ok(r)) => {
                            pending_clear &= !clear;
                            total += r;
                            continue;
                        }
                        // A batched loop names only its chunk: the element-by-element
                        // loop below runs the term again to name the element (the
                        // outputs are not used after an error).
                        Some(Err(e)) => batched_error = Some(e),
                        None => {}
                    }
                }
            }
            if writes {
                clear_all(&mut pending_clear);
            }
            let job = Job {
                t,
                b: &self.energies[i],
                dofs: slots.dofs(),
                coloring: slots.coloring(),
                func,
                kind,
                weight: weights[i],
                x,
                v,
                grad,
                hess,
                hv,
                slots: Some(slots.slots()),
            };
            total += self.run(&job)?;
            if let Some(e) = batched_error {
                return Err(e);
            }
        }
        clear_all(&mut pending_clear);
        Ok(total)
    }

    fn is_pair(&self, term: usize) -> bool {
        self.prog.decls.energies[term].stencil == crate::front::StencilKind::Pair
    }

    /// Adds pair term `term`'s results over the live pairs, in id order.
    #[allow(clippy::too_many_arguments)]
    fn pair_loop(
        &self,
        term: usize,
        kind: Kind,
        func: FuncRef,
        w: f64,
        x: &[f64],
        v: Option<&[f64]>,
        vec: Option<Out>,
        hess: Option<Out>,
    ) -> Result<f64, EnergyError> {
        let Some(ps) = &self.pairs else {
            return Ok(0.0);
        };
        let Some((_, map)) = ps.terms.iter().find(|t| t.0 == term) else {
            return Ok(0.0);
        };
        let t = &self.prog.energies[term];
        let k = t.k;
        let psd = super::psd::PsdProjector::of(t, &self.prog.decls.dofs).for_weight(w);
        let mut work = PsdWork::new();
        let nargs = k.max(1) + t.other_slots + if kind == Kind::Hvp { k } else { 0 };
        let nres = match kind {
            Kind::Value => 1,
            Kind::Grad => 1 + k,
            Kind::Hess { .. } => 1 + k + k * k,
            Kind::Hvp | Kind::Mixed => k,
        };
        let mut call = self
            .prog
            .raw_caller(func)
            .map_err(|e| EnergyError::Backend(e.to_string()))?;
        if call.arg_slots() != nargs || call.result_slots() != nres {
            return Err(EnergyError::Kernel {
                term: t.name.clone(),
                message: "unexpected pair kernel slots".into(),
            });
        }
        let (mut args, mut res, mut block) = (vec![0.0; nargs], vec![0.0; nres], vec![0.0; k * k]);
        let mut sum = 0.0;
        for id in ps.pattern.pair_ids() {
            let Some((verts, pdofs, pslots)) = ps.pattern.pair(id) else {
                continue;
            };
            let kp = pdofs.len();
            for (a, &pa) in map.iter().enumerate() {
                args[a] = x[pdofs[pa] as usize];
            }
            if k == 0 {
                args[0] = 0.0;
            }
            let mut at = k.max(1);
            for s in &t.others {
                match *s {
                    Source::Data {
                        field,
                        vertex,
                        slots,
                    } => {
                        let ent = verts[vertex.unwrap_or(0) as usize] as usize;
                        let vals = self.data[field].as_deref().unwrap_or(&[]);
                        args[at..at + slots]
                            .copy_from_slice(&vals[ent * slots..ent * slots + slots]);
                        at += slots;
                    }
                    Source::Param { param, int } => {
                        let p = self.params[param];
                        args[at] = if int {
                            f64::from_bits(p as i64 as u64)
                        } else {
                            p
                        };
                        at += 1;
                    }
                    Source::Dof { .. } => {}
                }
            }
            if let (Kind::Hvp, Some(v)) = (kind, v) {
                for (a, &pa) in map.iter().enumerate() {
                    args[at + a] = v[pdofs[pa] as usize];
                }
            }
            if let Err(err) = call.call_f64(&args, &mut res) {
                let message = format!("term `{}`, pair ({}): {err}", t.name, self.vertex_list(verts));
                return Err(self.prog.runtime_error(message, call.error_site()));
            }
            // SAFETY (of every `add`): this loop is the only writer.
            match kind {
                Kind::Value => sum += w * res[0],
                Kind::Grad | Kind::Hess { .. } => {
                    sum += w * res[0];
                    if let Some(g) = vec {
                        for (a, &pa) in map.iter().enumerate() {
                            unsafe { g.add(pdofs[pa] as usize, w * res[1 + a]) };
                        }
                    }
                    if let (Kind::Hess { project, .. }, Some(h)) = (kind, hess) {
                        let cols = &res[1 + k..1 + k + k * k];
                        for a in 0..k {
                            for b in 0..k {
                                block[a * k + b] = cols[b * k + a];
                            }
                        }
                        if project {
                            psd.one(&mut block, &mut work);
                        }
                        for a in 0..k {
                            for b in 0..k {
                                unsafe {
                                    h.add(
                                        pslots[map[a] * kp + map[b]] as usize,
                                        w * block[a * k + b],
                                    )
                                };
                            }
                        }
                    }
                }
                Kind::Hvp | Kind::Mixed => {
                    if let Some(o) = vec {
                        for (a, &pa) in map.iter().enumerate() {
                            unsafe { o.add(pdofs[pa] as usize, w * res[a]) };
                        }
                    }
                }
            }
        }
        Ok(sum)
    }

    /// Adds ring term `term`'s results, element by element in order.
    fn ring_loop(
        &self,
        term: usize,
        kind: RingKind<'_>,
        w: f64,
        x: &[f64],
        vec: Option<Out>,
        hess: Option<Out>,
    ) -> Result<f64, EnergyError> {
        let ts = &self.pattern.terms[term];
        let n = ts.len();
        let mut sum = 0.0;
        let mut start = 0;
        while start < n {
            let end = (start + RING_CHUNK).min(n);
            let outs = self.ring_chunk(term, kind, x, start..end)?;
            for (j, o) in outs.iter().enumerate() {
                let e = start + j;
                sum += w * o.value;
                // SAFETY (of every `add`): this loop is the only writer.
                if let Some(g) = vec {
                    for (&d, &val) in ts.dofs().get(e).iter().zip(&o.vec) {
                        unsafe { g.add(d as usize, w * val) };
                    }
                }
                if let Some(h) = hess {
                    for (&s, &val) in ts.slots().get(e).iter().zip(&o.block) {
                        unsafe { h.add(s as usize, w * val) };
                    }
                }
            }
            start = end;
        }
        Ok(sum)
    }

    /// The states that `update`s compute from the param `param` (states are constant to
    /// differentiation, so [`MeshEnergy::mixed`] leaves out θ's effect through them).
    pub fn states_reading_param(&self, param: &str) -> Vec<String> {
        let decls = &self.prog.decls;
        let Some(p) = decls.params.iter().position(|q| q.name == param) else {
            return Vec::new();
        };
        decls
            .updates
            .iter()
            .zip(&self.prog.updates)
            .filter(|(_, t)| t.others.iter().any(|s| matches!(*s, Source::Param { param, .. } if param == p)))
            .filter_map(|(u, _)| match u.target {
                crate::front::state::UpdateTarget::State(i) => Some(decls.data[i].name.clone()),
                _ => None,
            })
            .collect()
    }

    /// The mixed second derivative ∂²E/∂x∂θ of the objective with respect to the
    /// unknowns and the `f64` param `param` (the derivative of the gradient along
    /// θ), into `out` (length ndofs): forward mode over the gradient kernels, one
    /// seed on θ. Objective weights that depend on θ contribute their derivative
    /// times the term's gradient. States are constant to differentiation: θ's effect
    /// through a state an `update` computes from it is not included
    /// ([`MeshEnergy::states_reading_param`]; `madc eval` warns).
    pub fn mixed(&self, x: &[f64], param: &str, out: &mut [f64]) -> Result<(), EnergyError> {
        self.check_x("x", x)?;
        self.check_x("output", out)?;
        self.check_data()?;
        let p = self
            .prog
            .decls
            .params
            .iter()
            .position(|q| q.name == param)
            .ok_or_else(|| EnergyError::Host(format!("no param named `{param}`")))?;
        if self.prog.decls.params[p].ty != crate::front::SurfaceType::F64 {
            return Err(EnergyError::Host(format!(
                "param `{param}` is not an f64: no derivative with respect to it"
            )));
        }
        let (weights, slopes) = self.weights_and_slopes(Some(p))?;
        out.fill(0.0);
        let o = Out::new(Some(out));
        for (i, t) in self.prog.energies.iter().enumerate() {
            let slots = &self.pattern.terms[i];
            if self.is_pair(i) {
                if let Some(&(_, f)) = t.mixed.iter().find(|m| m.0 == p) {
                    self.pair_loop(i, Kind::Mixed, f, weights[i], x, None, o, None)?;
                }
                if slopes[i] != 0.0
                    && let Some(f) = t.grad
                {
                    self.pair_loop(i, Kind::Grad, f, slopes[i], x, None, o, None)?;
                }
                continue;
            }
            if t.ring.is_some() {
                self.ring_loop(i, RingKind::Mixed(p), weights[i], x, o, None)?;
                if slopes[i] != 0.0 {
                    self.ring_loop(i, RingKind::Grad, slopes[i], x, o, None)?;
                }
                continue;
            }
            let mut jobs = Vec::new();
            if let Some(&(_, f)) = t.mixed.iter().find(|m| m.0 == p) {
                jobs.push((Kind::Mixed, f, weights[i], None, o));
            }
            if slopes[i] != 0.0
                && let Some(f) = t.grad
            {
                jobs.push((Kind::Grad, f, slopes[i], o, None));
            }
            for (kind, func, weight, grad, hv) in jobs {
                let job = Job {
                    t,
                    b: &self.energies[i],
                    dofs: slots.dofs(),
                    coloring: slots.coloring(),
                    func,
                    kind,
                    weight,
                    x,
                    v: None,
                    grad,
                    hess: None,
                    hv,
                    slots: None,
                };
                self.run(&job)?;
            }
        }
        Ok(())
    }

    /// The objective at `x` (length [`MeshEnergy::ndofs`]): the weighted sum of the `energy`
    /// terms. `residual` terms are not in it (their ½‖r‖² is what [`MeshObjective`] minimizes
    /// with them; their values and Jacobian come from [`MeshEnergy::jacobian`]); so are the
    /// gradient, Hessian and HVP of the energy terms.
    ///
    /// [`MeshObjective`]: super::MeshObjective
    pub fn energy(&self, x: &[f64]) -> Result<f64, EnergyError> {
        self.energies_loop(Kind::Value, x, None, None, None, None)
    }

    /// The objective and its gradient (written to `grad`, length ndofs).
    pub fn gradient(&self, x: &[f64], grad: &mut [f64]) -> Result<f64, EnergyError> {
        self.check_x("gradient", grad)?;
        self.energies_loop(Kind::Grad, x, None, Some(grad), None, None)
    }

    /// The objective, gradient and Hessian values (length [`MeshEnergy::nnz`],
    /// in the order of [`MeshEnergy::pattern`]). `project` projects every
    /// element block to positive semi-definite first (eigenvalues clamped at 0).
    pub fn hessian(
        &self,
        x: &[f64],
        grad: &mut [f64],
        values: &mut [f64],
        project: bool,
    ) -> Result<f64, EnergyError> {
        self.hessian_of(x, grad, values, project, HessianEntries::All)
    }

    /// [`hessian`](Self::hessian) for a caller that reads only `entries` of the values: with
    /// [`HessianEntries::Upper`] the batched loops of projected element blocks add each
    /// block's upper triangle (in the global numbering) and leave the entries below the
    /// diagonal they would mirror it into; every entry read gets the bits `hessian` gives it.
    pub fn hessian_of(
        &self,
        x: &[f64],
        grad: &mut [f64],
        values: &mut [f64],
        project: bool,
        entries: HessianEntries,
    ) -> Result<f64, EnergyError> {
        self.check_x("gradient", grad)?;
        if values.len() != self.nnz() {
            return Err(EnergyError::Host(format!(
                "Hessian values: expected {}, found {}",
                self.nnz(),
                values.len()
            )));
        }
        let upper = entries == HessianEntries::Upper;
        self.energies_loop(
            Kind::Hess { project, upper },
            x,
            None,
            Some(grad),
            Some(values),
            None,
        )
    }

    /// The Hessian-vector product H(x)·v into `out`, matrix-free (no element
    /// Hessian is formed).
    pub fn hvp(&self, x: &[f64], v: &[f64], out: &mut [f64]) -> Result<(), EnergyError> {
        self.check_x("v", v)?;
        self.check_x("output", out)?;
        self.energies_loop(Kind::Hvp, x, Some(v), None, None, Some(out))?;
        Ok(())
    }

    /// The number of residual rows: per residual term, elements × components.
    pub fn num_residuals(&self) -> usize {
        self.prog
            .residuals
            .iter()
            .zip(&self.residuals)
            .map(|(t, b)| t.m * b.dofs.len())
            .sum()
    }

    /// The residuals and their sparse Jacobian (rows: residual terms in
    /// declaration order, then elements, then components; columns: dofs).
    /// Entries of a repeated dof within an element are added.
    pub fn jacobian(&self, x: &[f64]) -> Result<(Vec<f64>, SparseMatrix), EnergyError> {
        self.check_x("x", x)?;
        self.check_data()?;
        let nrows = self.num_residuals();
        let mut r = Vec::with_capacity(nrows);
        let mut row_ptr = vec![0usize];
        let mut col_idx = Vec::new();
        let mut values = Vec::new();
        for (t, b) in self.prog.residuals.iter().zip(&self.residuals) {
            let (m, k) = (t.m, t.k);
            let func = t.jac.unwrap_or(t.local);
            let nres = if t.jac.is_some() { m + m * k } else { m };
            let per = |w: &mut Worker, e: usize| -> Result<Vec<f64>, EnergyError> {
                let job = Job {
                    t,
                    b,
                    dofs: &b.dofs,
                    coloring: &Coloring {
                        num_elements: 0,
                        chunk_size: 1,
                        chunks: vec![],
                        colour_offsets: vec![0],
                    },
                    func,
                    kind: Kind::Value,
                    weight: 1.0,
                    x,
                    v: None,
                    grad: None,
                    hess: None,
                    hv: None,
                    slots: None,
                };
                self.gather(&job, e, &mut w.args);
                if let Err(err) = w.call.call_f64(&w.args, &mut w.res) {
                    let at = self.element_label(b, e);
                    let message = format!("term `{}`, {at}: {err}", t.name);
                    return Err(self.prog.runtime_error(message, w.call.error_site()));
                }
                Ok(w.res[..nres].to_vec())
            };
            let prog: &crate::energy::EnergyProgram = self.prog;
            let nargs = k.max(1) + t.other_slots;
            let new_worker = || -> Result<Worker<'_>, EnergyError> {
                let call = prog
                    .raw_caller(func)
                    .map_err(|e| EnergyError::Backend(e.to_string()))?;
                if call.arg_slots() != nargs || call.result_slots() != nres {
                    return Err(EnergyError::Kernel {
                        term: t.name.clone(),
                        message: "unexpected kernel slots".into(),
                    });
                }
                Ok(Worker {
                    call,
                    args: vec![0.0; nargs],
                    res: vec![0.0; nres],
                    block: vec![0.0; nres],
                })
            };
            let n = b.dofs.len();
            let outs: Vec<Result<Vec<f64>, EnergyError>> = match &self.pool {
                Some(pool) => pool.install(|| {
                    (0..n)
                        .into_par_iter()
                        .map_init(new_worker, |w, e| match w {
                            Ok(w) => per(w, e),
                            Err(err) => Err(err.clone()),
                        })
                        .collect()
                }),
                None => {
                    let mut w = new_worker()?;
                    (0..n).map(|e| per(&mut w, e)).collect()
                }
            };
            for (e, o) in outs.into_iter().enumerate() {
                let o = o?;
                let dofs = b.dofs.get(e);
                for row in 0..m {
                    r.push(o[row]);
                    let mut entries: Vec<(u32, f64)> = if k > 0 {
                        dofs.iter()
                            .enumerate()
                            .map(|(c, &d)| (d, o[m + c * m + row]))
                            .collect()
                    } else {
                        vec![]
                    };
                    entries.sort_by_key(|p| p.0);
                    let mut last: Option<u32> = None;
                    for (d, v) in entries {
                        if last == Some(d) {
                            if let Some(x) = values.last_mut() {
                                *x += v;
                            }
                        } else {
                            col_idx.push(d);
                            values.push(v);
                            last = Some(d);
                        }
                    }
                    row_ptr.push(col_idx.len());
                }
            }
        }
        Ok((
            r,
            SparseMatrix {
                nrows,
                ncols: self.ndofs,
                row_ptr,
                col_idx,
                values,
            },
        ))
    }

    /// Times `what` (`energy`, `grad`, `hessian` = energy + gradient + Hessian
    /// values, `hessian-psd` = the same with every element block projected to
    /// positive semi-definite as projected Newton asks (the upper triangle of the
    /// values, [`HessianEntries::Upper`], which is what its Cholesky reads), `hvp`, `spmv` = one
    /// product with the Hessian assembled before timing) at `x` after `warmup`
    /// evaluations: `runs` timed evaluations.
    pub fn bench(
        &self,
        what: &str,
        x: &[f64],
        warmup: usize,
        runs: usize,
    ) -> Result<Timing, EnergyError> {
        let n = self.ndofs;
        let mut g = vec![0.0; n];
        let mut h = vec![0.0; self.nnz()];
        let v: Vec<f64> = (0..n)
            .map(|i| ((i * 7919) % 1000) as f64 / 1000.0 - 0.5)
            .collect();
        let mut out = vec![0.0; n];
        if what == "spmv" {
            self.hessian(x, &mut g, &mut h, false)?;
        }
        let mut once = |me: &Self| -> Result<(), EnergyError> {
            match what {
                "energy" => me.energy(x).map(|_| ()),
                "grad" => me.gradient(x, &mut g).map(|_| ()),
                "hessian" => me.hessian(x, &mut g, &mut h, false).map(|_| ()),
                "hessian-psd" => me.hessian_of(x, &mut g, &mut h, true, HessianEntries::Upper).map(|_| ()),
                "hvp" => me.hvp(x, &v, &mut out),
                "spmv" => match &me.pairs {
                    Some(p) => {
                        let (pat, vals) = p
                            .pattern
                            .merge_values(&h)
                            .map_err(|e| EnergyError::Host(e.to_string()))?;
                        pat.spmv(&vals, &v, &mut out);
                        Ok(())
                    }
                    None => {
                        me.pattern.csr.spmv(&h, &v, &mut out);
                        Ok(())
                    }
                },
                _ => Err(EnergyError::Host(format!(
                    "unknown benchmark `{what}` (energy, grad, hessian, hessian-psd, hvp, spmv)"
                ))),
            }
        };
        for _ in 0..warmup {
            once(self)?;
        }
        let mut times = Vec::with_capacity(runs.max(1));
        for _ in 0..runs.max(1) {
            let t0 = std::time::Instant::now();
            once(self)?;
            times.push(t0.elapsed().as_secs_f64() * 1e3);
        }
        times.sort_by(f64::total_cmp);
        let median = if times.len() % 2 == 1 {
            times[times.len() / 2]
        } else {
            0.5 * (times[times.len() / 2 - 1] + times[times.len() / 2])
        };
        Ok(Timing {
            median_ms: median,
            min_ms: times[0],
            max_ms: times[times.len() - 1],
            runs: times.len(),
        })
    }
}
