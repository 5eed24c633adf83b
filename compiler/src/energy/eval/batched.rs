//! Batched element loops for energy terms on fixed stencils
//! ([`crate::back::cranelift::batch`]): per term and workload (energy,
//! energy + gradient, energy + gradient + Hessian values, HVP) one compiled
//! function that runs a whole chunk of elements — gather, kernel, scatter —
//! inside JIT code.
//!
//! [`specs`](crate::energy::kernels::batches::specs) picks what can be batched when the program is compiled (terms on
//! `vertex`/`edge`/`face`/`diamond` stencils whose kernels are plain scalar
//! code); `MeshEnergy::run_batched` runs one in the schedule of
//! [`mad_runtime::sparse::Coloring`]: colours in order, the chunks of one colour
//! in parallel, one call per chunk, chunk energy sums added in schedule order.
//! Each gradient/HVP entry and CSR value receives its contributions in the same
//! order on every thread count, so results are bit-identical for any count.
//! PSD-projected Hessians use the `HessBlock` loop: it adds the energy and
//! gradient and stores each element's block into a per-worker buffer (one
//! chunk's worth, reused); each block is then projected
//! ([`mad_runtime::linalg::sym_eigen::project_psd_with`], allocation-free) and
//! scattered into the CSR values in element order, by the same worker, right
//! after its chunk: the same order on every thread count.
//! Rings and pairs stay on the element-by-element path of [`super::evaluate`].

use mad_runtime::linalg::sym_eigen::PsdWork;
use mad_runtime::sparse::Coloring;

use super::bind::MeshEnergy;
use super::first_touch::{FirstStore, FirstTouch};
use super::parallel::{Work, run_colours};
use super::slots::{UpperSlots, compact_slots};
use crate::codegen::element_loop::{BatchFrame, BatchKind};
use crate::energy::EnergyError;
use crate::energy::kernels::Source;
use crate::front::SurfaceType;

/// The outputs of one batched run (null where the kind does not write).
#[derive(Clone, Copy)]
pub(crate) struct Outputs {
    pub grad: *mut f64,
    pub hess: *mut f64,
    pub out: *mut f64,
    /// Only the upper triangle of the Hessian values is read
    /// ([`mad_runtime::solve::HessianEntries::Upper`]): the `HessBlock` schedule adds each
    /// projected block's upper triangle alone.
    pub upper: bool,
}

/// A frame shared by the workers of one colour (each copies it and sets its range).
#[derive(Clone, Copy)]
struct SharedFrame(BatchFrame);
// SAFETY: the frame's pointers are only dereferenced by the batched loop, and
// the chunks of one colour write disjoint entries (see the module docs).
unsafe impl Send for SharedFrame {}
unsafe impl Sync for SharedFrame {}

impl SharedFrame {
    fn with_range(&self, start: usize, end: usize) -> BatchFrame {
        BatchFrame {
            start: start as u64,
            end: end as u64,
            ..self.0
        }
    }
}

/// What the `HessBlock` schedule does with each stored block: project it and
/// add `weight` times it into `hess` through the element's k·k slots.
struct Project<'a> {
    k: usize,
    /// How the term's blocks are projected.
    psd: super::psd::PsdProjector,
    /// Where each block goes: every entry, or the upper triangle alone.
    scatter: Scatter<'a>,
    hess: *mut f64,
    weight: f64,
}

/// How a projected block is added into the CSR values.
enum Scatter<'a> {
    /// Entry by entry: the element's k² slots (row-major within the block).
    All(&'a mad_runtime::sparse::ElementList),
    /// The upper triangle alone ([`UpperSlots`]).
    Upper(&'a UpperSlots),
}

// SAFETY: `hess` is written only for the CSR rows of the running chunk's
// elements, disjoint between the chunks of one colour (see the module docs).
unsafe impl Send for Project<'_> {}
unsafe impl Sync for Project<'_> {}

/// Where the outputs of a run start from zero: each chunk clears what it
/// touches first ([`FirstTouch`]).
struct Clear<'a> {
    plan: &'a FirstTouch,
    row_ptr: &'a [usize],
    outs: Outputs,
}
// SAFETY: a chunk clears only dofs and CSR rows that no concurrently running
// chunk touches (see `super::first_touch`).
unsafe impl Send for Clear<'_> {}
unsafe impl Sync for Clear<'_> {}

impl Clear<'_> {
    /// Zeroes the gradient/HVP entries of dofs `lo..hi` and their CSR rows.
    ///
    /// # Safety
    /// The outputs hold every entry of these dofs and rows, and no other thread
    /// accesses them now.
    unsafe fn ranges(&self, (lo, hi): (u32, u32)) {
        let (lo, hi) = (lo as usize, hi as usize);
        unsafe {
            for p in [self.outs.grad, self.outs.out] {
                if !p.is_null() {
                    std::ptr::write_bytes(p.add(lo), 0, hi - lo);
                }
            }
            if !self.outs.hess.is_null() {
                let (a, b) = (self.row_ptr[lo], self.row_ptr[hi]);
                std::ptr::write_bytes(self.outs.hess.add(a), 0, b - a);
            }
        }
    }
}

/// One worker's batched caller and scratch space.
struct BatchWorker<'m> {
    caller: crate::back::native::BatchCaller<'m>,
    /// The chunk's k×k blocks (`HessBlock`): taken from [`BLOCK_BUFFER`] and given back
    /// when the worker is dropped, so evaluations do not allocate and clear it again.
    blocks: Vec<f64>,
    work: PsdWork,
}

impl Drop for BatchWorker<'_> {
    fn drop(&mut self) {
        let blocks = std::mem::take(&mut self.blocks);
        if blocks.capacity() > 0 {
            BLOCK_BUFFER.with_borrow_mut(|b| {
                if b.capacity() < blocks.capacity() {
                    *b = blocks;
                }
            });
        }
    }
}

thread_local! {
    /// Each thread's block buffer between batched `HessBlock` runs.
    static BLOCK_BUFFER: std::cell::RefCell<Vec<f64>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl MeshEnergy<'_> {
    /// Runs batched loop `batch` (of `kind`) for energy term `term` over all its
    /// elements; `None` when the term's tables do not fit a batched loop (the
    /// caller then uses the element-by-element path).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run_batched(
        &self,
        term: usize,
        batch: usize,
        kind: BatchKind,
        weight: f64,
        x: &[f64],
        v: Option<&[f64]>,
        outs: Outputs,
        clear: bool,
    ) -> Option<Result<f64, EnergyError>> {
        let t = &self.prog.energies[term];
        let b = &self.energies[term];
        let ts = &self.pattern.terms[term];
        let (dofs, slots, coloring) = (ts.dofs(), ts.slots(), ts.coloring());
        // The Hessian loop over compact slots where the term's table allows it.
        let mut batch = batch;
        let mut slot_table = slots.indices().as_ptr();
        let mut first_store: Option<&FirstStore> = None;
        if kind == BatchKind::Hess
            && let Some((bi, runs)) = self
                .prog
                .batches
                .get(term)
                .and_then(|b| b.hess_compact.as_ref())
        {
            let tables = self.compact.get_or_init(|| {
                (0..self.prog.energies.len())
                    .map(|i| {
                        let (t, ts) = (&self.prog.energies[i], &self.pattern.terms[i]);
                        match self
                            .prog
                            .batches
                            .get(i)
                            .and_then(|b| b.hess_compact.as_ref())
                        {
                            Some((_, runs)) if self.tables_ok(i) => {
                                compact_slots(ts.slots(), t.k, runs)
                            }
                            _ => None,
                        }
                    })
                    .collect()
            });
            if let Some(Some(c)) = tables.get(term)
                && c.len() == dofs.len() * t.k * runs.len()
            {
                batch = *bi;
                slot_table = c.as_ptr();
                if clear {
                    first_store = self.first_store[term]
                        .get_or_init(|| FirstStore::plan(c, runs, t.k, coloring, self.pattern.csr.nnz()))
                        .as_ref();
                    if let Some(fs) = first_store {
                        slot_table = fs.table.as_ptr();
                    }
                }
            }
        }
        let n = dofs.len();
        // The loop trusts its tables: every index bound it relies on is checked
        // (the element tables once, the arrays here).
        if !self.tables_ok(term) || x.len() != self.ndofs {
            return None;
        }
        let needs = |p: *mut f64| !p.is_null();
        match kind {
            BatchKind::Value => {}
            BatchKind::Grad => {
                if !needs(outs.grad) {
                    return None;
                }
            }
            BatchKind::Hess | BatchKind::HessBlock => {
                if !needs(outs.grad) || !needs(outs.hess) {
                    return None;
                }
            }
            BatchKind::Hvp => {
                if !needs(outs.out) || v.map(|v| v.len()) != Some(self.ndofs) {
                    return None;
                }
            }
        }
        for s in &t.others {
            if let Source::Data {
                field,
                vertex,
                slots,
            } = *s
            {
                let vals = self.data[field].as_deref()?;
                let count = if vertex.is_some() {
                    self.topo.num_vertices
                } else {
                    n
                };
                if vals.len() < count * slots {
                    return None;
                }
            }
        }
        let consts: Vec<u64> = self
            .params
            .iter()
            .zip(&self.prog.decls.params)
            .map(|(&p, d)| {
                if d.ty == SurfaceType::I64 {
                    p as i64 as u64
                } else {
                    p.to_bits()
                }
            })
            .collect();
        // Data stored per element is read at the loop's position: a term in a locality order
        // reads its copy in that order.
        let permuted = b.order.as_ref().map(|order| {
            self.permuted_data[term].get_or_init(|| {
                self.data
                    .iter()
                    .enumerate()
                    .map(|(field, d)| {
                        let d = d.as_deref()?;
                        let slots = t.others.iter().find_map(|s| match *s {
                            Source::Data { field: f, vertex: None, slots } if f == field => Some(slots),
                            _ => None,
                        })?;
                        Some(order.iter().flat_map(|&e| &d[e as usize * slots..(e as usize + 1) * slots]).copied().collect())
                    })
                    .collect()
            })
        });
        let data: Vec<*const f64> = self
            .data
            .iter()
            .enumerate()
            .map(|(field, d)| {
                let d = permuted.and_then(|p| p[field].as_deref()).or(d.as_deref());
                d.map_or(std::ptr::null(), |d| d.as_ptr())
            })
            .collect();
        let frame = SharedFrame(BatchFrame {
            start: 0,
            end: 0,
            x: x.as_ptr(),
            dofs: dofs.indices().as_ptr(),
            slots: slot_table,
            verts: b.verts.indices().as_ptr(),
            grad: outs.grad,
            hess: outs.hess,
            v: v.map_or(std::ptr::null(), |v| v.as_ptr()),
            out: outs.out,
            weight,
            consts: consts.as_ptr(),
            data: data.as_ptr(),
        });
        let project = (kind == BatchKind::HessBlock).then(|| Project {
            k: t.k,
            psd: super::psd::PsdProjector::of(t, &self.prog.decls.dofs).for_weight(weight),
            scatter: if outs.upper {
                Scatter::Upper(self.upper_slots[term].get_or_init(|| {
                    UpperSlots::build(dofs, slots, t.k, t.translation_nverts(&self.prog.decls.dofs))
                }))
            } else {
                Scatter::All(slots)
            },
            hess: outs.hess,
            weight,
        });
        let clear = if clear { self.clear_outputs(term, dofs, coloring, outs, first_store) } else { None };
        Some(self.batched_schedule(term, batch, coloring, Work::of_batch(kind), frame, project, clear))
    }

    /// Starts the outputs of a run of term `term` from zero. With `first_store`
    /// the Hessian loop stores where it first writes, so only the values no
    /// element writes are cleared; on several threads each chunk clears the
    /// gradient/HVP entries and CSR rows it touches first (the returned
    /// [`Clear`]); on one thread the rest is cleared here in one pass.
    fn clear_outputs<'s>(
        &'s self,
        term: usize,
        dofs: &mad_runtime::sparse::ElementList,
        coloring: &Coloring,
        outs: Outputs,
        first_store: Option<&FirstStore>,
    ) -> Option<Clear<'s>> {
        let static_nnz = self.pattern.csr.nnz();
        // SAFETY: the outputs hold ndofs (gradient, HVP) and nnz (Hessian)
        // values; `FirstStore::plan` keeps its ranges below the static nnz and
        // the row pointers index the static part.
        unsafe {
            if !outs.hess.is_null() {
                std::ptr::write_bytes(outs.hess.add(static_nnz), 0, self.nnz() - static_nnz);
                for &(a, b) in first_store.map_or(&[][..], |fs| &fs.uncovered) {
                    std::ptr::write_bytes(outs.hess.add(a), 0, b - a);
                }
            }
        }
        let rows = Outputs { hess: if first_store.is_some() { std::ptr::null_mut() } else { outs.hess }, ..outs };
        let threads = self.pool.as_ref().map_or(1, |p| p.current_num_threads());
        if threads > 1 {
            let plan = self.first_touch[term].get_or_init(|| FirstTouch::plan(dofs, coloring, self.ndofs));
            let c = Clear { plan, row_ptr: &self.pattern.csr.row_ptr, outs: rows };
            // SAFETY: as above; no loop runs yet.
            unsafe { plan.untouched().iter().for_each(|&r| c.ranges(r)) };
            return Some(c);
        }
        for (p, len) in [(rows.grad, self.ndofs), (rows.out, self.ndofs), (rows.hess, static_nnz)] {
            if !p.is_null() {
                // SAFETY: `p` holds at least `len` values, no loop runs yet.
                self.zero_fill(unsafe { std::slice::from_raw_parts_mut(p, len) });
            }
        }
        None
    }

    /// Whether term `term`'s element tables hold what a batched loop reads:
    /// k dofs per element below ndofs, k·k CSR slots below the static nnz,
    /// stencil vertices below the vertex count (checked once, then cached).
    fn tables_ok(&self, term: usize) -> bool {
        let ok = self.batch_tables.get_or_init(|| {
            (0..self.prog.energies.len())
                .map(|i| {
                    let t = &self.prog.energies[i];
                    let ts = &self.pattern.terms[i];
                    let (dofs, slots, verts) = (ts.dofs(), ts.slots(), &self.energies[i].verts);
                    let n = dofs.len();
                    t.k > 0
                        && dofs.arity() == Some(t.k)
                        && slots.arity() == Some(t.k * t.k)
                        && slots.len() == n
                        && verts.arity() == Some(t.nverts)
                        && verts.len() == n
                        && dofs.indices().iter().all(|&d| (d as usize) < self.ndofs)
                        && slots
                            .indices()
                            .iter()
                            .all(|&s| (s as usize) < self.pattern.csr.nnz())
                        && verts
                            .indices()
                            .iter()
                            .all(|&v| (v as usize) < self.topo.num_vertices)
                })
                .collect()
        });
        ok.get(term).copied().unwrap_or(false)
    }

    #[allow(clippy::too_many_arguments)]
    fn batched_schedule(
        &self,
        term: usize,
        batch: usize,
        coloring: &Coloring,
        work: Work,
        frame: SharedFrame,
        project: Option<Project<'_>>,
        clear: Option<Clear<'_>>,
    ) -> Result<f64, EnergyError> {
        let name = &self.prog.energies[term].name;
        let prog: &crate::energy::EnergyProgram = self.prog;
        let new_caller = || {
            prog.jit
                .batch_caller(batch)
                .map(|c| BatchWorker {
                    caller: c,
                    blocks: Vec::new(),
                    work: PsdWork::new(),
                })
                .ok_or_else(|| EnergyError::Backend(format!("no batched loop {batch}")))
        };
        let run = |w: &mut BatchWorker<'_>, chunk: u32| -> Result<f64, EnergyError> {
            let r = coloring.chunk_elements(chunk);
            if let Some(c) = &clear {
                // SAFETY: the chunk is the first in the schedule to touch these
                // dofs and rows, and no chunk running now touches them
                // (module docs of `first_touch`).
                unsafe { c.plan.chunk(chunk).iter().for_each(|&d| c.ranges(d)) };
            }
            let mut f = frame.with_range(r.start, r.end);
            if let Some(p) = &project {
                let need = r.len() * p.k * p.k;
                if w.blocks.len() < need {
                    // The thread's buffer from earlier evaluations, grown if needed (the
                    // kernel writes every value it reads back: no clearing).
                    let mut buf = BLOCK_BUFFER.with_borrow_mut(std::mem::take);
                    if buf.len() < need {
                        buf.resize(need, 0.0);
                    }
                    w.blocks = buf;
                }
                f.out = w.blocks.as_mut_ptr();
            }
            // SAFETY: `run_batched` checked every index the tables hold against
            // the arrays the frame points to; chunks of one colour share no dof
            // (so no gradient/HVP entry and no CSR row), colours run in turn;
            // the block buffer holds the range's k² values per element.
            let sum = unsafe { w.caller.run(&f) }.map_err(|e| EnergyError::Runtime {
                message: format!("term `{name}`, elements {}..{}: {e}", r.start, r.end),
                at: None,
            })?;
            if let Some(p) = &project {
                let kk = p.k * p.k;
                let blocks = &mut w.blocks[..r.len() * kk];
                let upper_only = matches!(p.scatter, Scatter::Upper(_));
                p.psd.many(blocks, upper_only, &mut w.work);
                let (hess, weight) = (p.hess, p.weight);
                for (e, block) in r.clone().zip(blocks.chunks_exact(kk)) {
                    // A zero block (±0 everywhere) adds nothing: a barrier or contact term
                    // away from contact. The test ORs the bits without the sign, without
                    // branches, and only when the first entry is ±0 (a block whose first
                    // entry is not, as in most terms with a Hessian, is not zero).
                    let zero = |v: &f64| v.to_bits() << 1 == 0;
                    if zero(&block[0])
                        && block.iter().fold(0u64, |acc, &v| acc | (v.to_bits() << 1)) == 0
                    {
                        continue;
                    }
                    match p.scatter {
                        Scatter::All(slots) => {
                            for (&s, &v) in slots.get(e).iter().zip(block.iter()) {
                                // SAFETY: `tables_ok` checked every slot against nnz (the
                                // length of the values `hess` points to); no other
                                // chunk running now writes this element's CSR rows.
                                unsafe { *hess.add(s as usize) += weight * v };
                            }
                        }
                        // SAFETY (both arms): as above (the slots are some of the element's
                        // checked slots), and every local index is below k² = `block.len()`.
                        Scatter::Upper(upper) => unsafe { upper.scatter(e, p.k, hess, block, weight) },
                    }
                }
            }
            Ok(sum)
        };
        run_colours(self.pool.as_ref(), coloring, work, self.min_parallel_work, &new_caller, &run)
    }
}
