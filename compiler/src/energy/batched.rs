//! Batched element loops for energy terms on fixed stencils
//! ([`crate::back::cranelift::batch`]): per term and workload (energy,
//! energy + gradient, energy + gradient + Hessian values, HVP) one compiled
//! function that runs a whole chunk of elements — gather, kernel, scatter —
//! inside JIT code.
//!
//! [`specs`] picks what can be batched when the program is compiled (terms on
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
//! Rings and pairs stay on the element-by-element path of [`super::eval`].

use std::collections::HashMap;
use mad_runtime::linalg::sym_eigen::PsdWork;
use mad_runtime::sparse::Coloring;

use super::EnergyError;
use super::bind::MeshEnergy;
use super::first_touch::{FirstStore, FirstTouch};
use super::kernels::{Source, TermKernels};
use super::parallel::{Work, run_colours};
use crate::codegen::element_loop::batchable;
use crate::codegen::element_loop::{BatchFrame, BatchInput, BatchKind, BatchSpec};
use crate::front::{MeshDecls, StencilKind, SurfaceType};
use crate::ir::Module;

/// The batched loops of one energy term: an index into the compiled specs per
/// [`BatchKind`] (`Value`, `Grad`, `Hess`, `Hvp`, `HessBlock`), where one exists.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TermBatches {
    pub kinds: [Option<usize>; 5],
    /// The `Hess` loop over compact slots, and its runs ([`BatchSpec::runs`]).
    pub hess_compact: Option<(usize, Vec<usize>)>,
}

fn slot(kind: BatchKind) -> usize {
    match kind {
        BatchKind::Value => 0,
        BatchKind::Grad => 1,
        BatchKind::Hess => 2,
        BatchKind::Hvp => 3,
        BatchKind::HessBlock => 4,
    }
}

impl TermBatches {
    pub fn get(&self, kind: BatchKind) -> Option<usize> {
        self.kinds[slot(kind)]
    }
}

/// The batched loops to compile for `energies` (one [`TermBatches`] per term).
pub fn specs(
    module: &Module,
    energies: &[TermKernels],
    decls: &MeshDecls,
) -> (Vec<BatchSpec>, Vec<TermBatches>) {
    let mut out = Vec::new();
    let mut per_term = Vec::new();
    for (i, t) in energies.iter().enumerate() {
        let mut tb = TermBatches::default();
        let fixed = matches!(
            decls.energies.get(i).map(|d| d.stencil),
            Some(
                StencilKind::Vertex | StencilKind::Edge | StencilKind::Face | StencilKind::Diamond
            )
        );
        if fixed && t.ring.is_none() && t.k > 0 {
            let inputs: Vec<BatchInput> = t
                .others
                .iter()
                .map(|s| match *s {
                    Source::Data {
                        field,
                        vertex,
                        slots,
                    } => BatchInput::Data {
                        array: field,
                        vertex,
                        slots,
                    },
                    Source::Param { param, .. } => BatchInput::Const { at: param },
                    Source::Dof { .. } => BatchInput::Const { at: usize::MAX },
                })
                .collect();
            let ok_inputs = inputs
                .iter()
                .all(|i| !matches!(i, BatchInput::Const { at: usize::MAX }));
            for (kind, f) in [
                (BatchKind::Value, Some(t.local)),
                (BatchKind::Grad, t.grad),
                (BatchKind::Hess, t.hess),
                (BatchKind::Hvp, t.hvp),
                (BatchKind::HessBlock, t.hess),
            ] {
                let Some(f) = f else { continue };
                let Some(func) = module.functions.get(f) else {
                    continue;
                };
                if ok_inputs && batchable(func, kind, t.k, inputs.len()) {
                    tb.kinds[slot(kind)] = Some(out.len());
                    out.push(BatchSpec {
                        kernel: f,
                        kind,
                        k: t.k,
                        nverts: t.nverts,
                        inputs: inputs.clone(),
                        runs: Vec::new(),
                    });
                    let runs = dof_runs(t, decls);
                    if kind == BatchKind::Hess && runs.len() < t.k {
                        tb.hess_compact = Some((out.len(), runs.clone()));
                        out.push(BatchSpec {
                            kernel: f,
                            kind,
                            k: t.k,
                            nverts: t.nverts,
                            inputs: inputs.clone(),
                            runs,
                        });
                    }
                }
            }
        }
        per_term.push(tb);
    }
    (out, per_term)
}

/// The runs of consecutive global dof indices in a term's local dofs: per dof
/// field (declaration order), per dof vertex, the field's components.
fn dof_runs(t: &TermKernels, decls: &MeshDecls) -> Vec<usize> {
    let mut runs = Vec::new();
    for &f in &t.dof_fields {
        let dim = decls
            .dofs
            .get(f)
            .and_then(|d| super::bind::type_slots(&d.ty))
            .unwrap_or(1);
        runs.extend(std::iter::repeat_n(dim, t.dof_verts.len()));
    }
    if runs.iter().sum::<usize>() == t.k {
        runs
    } else {
        vec![1; t.k]
    }
}

/// The compact slot table of `slots` (k·k per element) for `runs`: per
/// element, row, run the slot of the run's first column; `None` unless every
/// run's columns sit in consecutive slots of every row.
pub(crate) fn compact_slots(
    slots: &mad_runtime::sparse::ElementList,
    k: usize,
    runs: &[usize],
) -> Option<Vec<u32>> {
    if slots.arity() != Some(k * k) || runs.iter().sum::<usize>() != k {
        return None;
    }
    let nr = runs.len();
    let mut out = Vec::with_capacity(slots.len() * k * nr);
    for e in 0..slots.len() {
        let s = slots.get(e);
        for a in 0..k {
            let mut start = 0;
            for &len in runs {
                let first = s[a * k + start];
                if (0..len).any(|c| {
                    s[a * k + start + c] != first.saturating_add(c as u32)
                }) {
                    return None;
                }
                out.push(first);
                start += len;
            }
        }
    }
    Some(out)
}

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

/// Per element, the CSR slots of a symmetric k×k block's upper triangle in the global
/// numbering: for the local pairs a ≤ b in row-major order, the slot of entry
/// (min(g_a, g_b), max(g_a, g_b)) of the global dofs g. A projected block is exactly
/// symmetric, so its entry (a, b) is the value of that slot; adding k(k+1)/2 values
/// instead of k² fills every entry a Cholesky factorization reads (column ≥ row), each with
/// the bits the full scatter gives it (the same contributions in the same order).
pub(crate) struct UpperSlots {
    /// k(k+1)/2 slots per element.
    slots: Vec<u32>,
    /// The local block index a·k + b of each of an element's k(k+1)/2 slots.
    local: Vec<u16>,
    /// For triangles of 2-vectors, the same entries as pairs of neighbouring slots
    /// ([`PairedSlots`]), where every element's slots allow it.
    paired: Option<PairedSlots>,
    /// Elements that repeat a dof (a face with a repeated vertex): there two local entries
    /// (a, b) and (b, a) meet in one diagonal slot, which must get both. Each such element's
    /// plan is what the entry-by-entry scatter adds to the upper triangle, in its order:
    /// every local (a, b), row-major, whose global entry is on or above the diagonal, with
    /// the value of the block's upper entry (min(a, b), max(a, b)).
    irregular: HashMap<usize, Box<[(u32, u16)]>>,
}

impl UpperSlots {
    /// `nverts`: the term's vertices when its k dofs are vertex-major (local index v·d + c),
    /// else 0 ([`super::kernels::TermKernels::translation_nverts`]).
    fn build(
        dofs: &mad_runtime::sparse::ElementList,
        slots: &mad_runtime::sparse::ElementList,
        k: usize,
        nverts: usize,
    ) -> UpperSlots {
        let local: Vec<u16> = (0..k).flat_map(|a| (a..k).map(move |b| (a * k + b) as u16)).collect();
        let mut out = Vec::with_capacity(dofs.len() * local.len());
        let mut irregular = HashMap::new();
        for e in 0..dofs.len() {
            let (g, s) = (dofs.get(e), slots.get(e));
            for a in 0..k {
                for b in a..k {
                    out.push(if g[a] <= g[b] { s[a * k + b] } else { s[b * k + a] });
                }
            }
            if (0..k).any(|a| g[a + 1..k].contains(&g[a])) {
                let plan: Box<[(u32, u16)]> = (0..k)
                    .flat_map(|a| (0..k).map(move |b| (a, b)))
                    .filter(|&(a, b)| g[a] <= g[b])
                    .map(|(a, b)| (s[a * k + b], (a.min(b) * k + a.max(b)) as u16))
                    .collect();
                irregular.insert(e, plan);
            }
        }
        let paired = (k == 6 && nverts == 3).then(|| PairedSlots::build(dofs, slots, &irregular)).flatten();
        UpperSlots { slots: out, local, paired, irregular }
    }
    fn get(&self, e: usize) -> &[u32] {
        let n = self.local.len();
        &self.slots[e * n..(e + 1) * n]
    }
    /// Element `e`'s plan when it repeats a dof.
    #[inline]
    fn irregular(&self, e: usize) -> Option<&[(u32, u16)]> {
        if self.irregular.is_empty() {
            return None;
        }
        self.irregular.get(&e).map(|p| &p[..])
    }

    /// Adds `weight` times the upper triangle of element `e`'s projected k×k `block` into
    /// `hess`: what the entry-by-entry scatter of the whole block adds to the slots on or
    /// above the diagonal, the same bits.
    ///
    /// # Safety
    /// Every slot of the element is an index into the values `hess` points to, which no
    /// other thread writes now; `block.len() == k²`.
    #[inline(always)]
    unsafe fn scatter(&self, e: usize, k: usize, hess: *mut f64, block: &[f64], weight: f64) {
        // SAFETY (every arm): the caller's contract; every local index is below k².
        if let Some(plan) = self.irregular(e) {
            for &(s, l) in plan {
                unsafe { *hess.add(s as usize) += weight * *block.get_unchecked(l as usize) };
            }
            return;
        }
        match (k, &self.paired) {
            (6, Some(paired)) => unsafe { paired.scatter(e, hess, block, weight) },
            // The shapes of faces and edges, with the local indices unrolled.
            (6, None) => unsafe { scatter_upper::<6>(hess, self.get(e), block, weight) },
            (9, _) => unsafe { scatter_upper::<9>(hess, self.get(e), block, weight) },
            _ => {
                for (&s, &l) in self.get(e).iter().zip(&self.local) {
                    unsafe { *hess.add(s as usize) += weight * *block.get_unchecked(l as usize) };
                }
            }
        }
    }
}
/// Adds `weight` times the upper triangle of the K×K `block` (row-major, local pairs a ≤ b in
/// row-major order, as [`UpperSlots`] lists them) into the CSR values at `slots`.
///
/// # Safety
/// Every slot is an index into the values `hess` points to, which no other thread writes now.
#[inline(always)]
unsafe fn scatter_upper<const K: usize>(hess: *mut f64, slots: &[u32], block: &[f64], weight: f64) {
    assert!(slots.len() == K * (K + 1) / 2 && block.len() == K * K);
    let mut n = 0;
    for a in 0..K {
        for b in a..K {
            // SAFETY: the caller's contract; `n` and `a·K + b` are within the lengths checked above.
            unsafe { *hess.add(*slots.get_unchecked(n) as usize) += weight * *block.get_unchecked(a * K + b) };
            n += 1;
        }
    }
}

/// The upper triangle of a triangle's 6×6 block over 2-vectors (local index 2v + c) as 9
/// pairs of neighbouring CSR slots and 3 single slots: the two components of a vertex are
/// neighbouring dofs, so the entries of a row of the global matrix against them are
/// neighbouring slots. Per element, in this order: for each vertex v, the pair
/// (2v, 2v), (2v, 2v + 1) and the single (2v + 1, 2v + 1); for each pair of vertices p < q
/// ((0, 1), (0, 2), (1, 2)) and t = 0, 1, the global row of component t of the vertex of
/// smaller dof against the two components of the other: block entries (2p + t, 2q),
/// (2p + t, 2q + 1) when p's dofs come first, else (2p, 2q + t), (2p + 1, 2q + t) — bit `q − 1 + p` of
/// the element's orientation. Each slot receives the value the entry-by-entry scatter adds
/// to it: the same bits.
pub(crate) struct PairedSlots {
    /// 12 slots per element: 3 vertex pairs, 3 singles, 6 cross pairs (the first slot of
    /// each pair).
    slots: Vec<[u32; 12]>,
    /// Per element, bit i set when the i-th vertex pair's second vertex has the smaller dofs.
    flipped: Vec<u8>,
}

/// The vertex pairs (p, q), p < q, of a triangle, in the order of [`PairedSlots`].
const TRIANGLE_PAIRS: [(usize, usize); 3] = [(0, 1), (0, 2), (1, 2)];

impl PairedSlots {
    /// `None` unless every element's dofs are two neighbouring ids per vertex and every
    /// pair's slots are neighbours. The `irregular` elements (a repeated vertex) get no plan
    /// here (an empty row: their scatter is [`UpperSlots`]' own).
    fn build(
        dofs: &mad_runtime::sparse::ElementList,
        slots: &mad_runtime::sparse::ElementList,
        irregular: &HashMap<usize, Box<[(u32, u16)]>>,
    ) -> Option<PairedSlots> {
        let mut out = Vec::with_capacity(dofs.len());
        let mut flipped = Vec::with_capacity(dofs.len());
        for e in 0..dofs.len() {
            if irregular.contains_key(&e) {
                out.push([0; 12]);
                flipped.push(0);
                continue;
            }
            let (g, s) = (dofs.get(e), slots.get(e));
            if g.len() != 6 || s.len() != 36 || (0..3).any(|v| g[2 * v + 1] != g[2 * v].wrapping_add(1)) {
                return None;
            }
            // The slot of local (a, b), checked to have its neighbour at local (a, b + 1).
            let pair = |a: usize, b: usize| (s[a * 6 + b + 1] == s[a * 6 + b].wrapping_add(1)).then_some(s[a * 6 + b]);
            let mut row = [0u32; 12];
            for v in 0..3 {
                row[v] = pair(2 * v, 2 * v)?;
                row[3 + v] = s[(2 * v + 1) * 6 + 2 * v + 1];
            }
            let mut bits = 0u8;
            for (i, &(p, q)) in TRIANGLE_PAIRS.iter().enumerate() {
                let flip = g[2 * p] > g[2 * q];
                bits |= u8::from(flip) << i;
                for t in 0..2 {
                    row[6 + 2 * i + t] = if flip { pair(2 * q + t, 2 * p)? } else { pair(2 * p + t, 2 * q)? };
                }
            }
            out.push(row);
            flipped.push(bits);
        }
        Some(PairedSlots { slots: out, flipped })
    }

    /// Adds `weight` times the upper triangle of element `e`'s projected 6×6 `block` into
    /// `hess`.
    ///
    /// # Safety
    /// Every slot (and its neighbour) is an index into the values `hess` points to, which no
    /// other thread writes now.
    #[inline(always)]
    unsafe fn scatter(&self, e: usize, hess: *mut f64, block: &[f64], weight: f64) {
        let (s, bits) = (&self.slots[e], self.flipped[e]);
        let block: &[f64; 36] = block.try_into().expect("a 6×6 block");
        let add2 = |slot: u32, a: f64, b: f64| {
            // SAFETY: the caller's contract (`build` checked that `slot + 1` is the
            // neighbouring entry of the same row).
            unsafe {
                let h = hess.add(slot as usize);
                *h += weight * a;
                *h.add(1) += weight * b;
            }
        };
        for v in 0..3 {
            let d = 2 * v * 6 + 2 * v;
            add2(s[v], block[d], block[d + 1]);
            // SAFETY: as above.
            unsafe { *hess.add(s[3 + v] as usize) += weight * block[d + 7] };
        }
        for (i, &(p, q)) in TRIANGLE_PAIRS.iter().enumerate() {
            let flip = bits >> i & 1 != 0;
            for t in 0..2 {
                // Row pair (2p + t, 2q..2q + 2), or column pair (2p..2p + 2, 2q + t).
                let first = if flip { 2 * p * 6 + 2 * q + t } else { (2 * p + t) * 6 + 2 * q };
                let step = if flip { 6 } else { 1 };
                add2(s[6 + 2 * i + t], block[first], block[first + step]);
            }
        }
    }
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
        let prog: &super::EnergyProgram = self.prog;
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

#[cfg(test)]
mod tests {
    use super::*;
    use mad_runtime::sparse::{ElementList, HessianPattern};

    /// The paired scatter against the entry-by-entry one on triangles of 2-vectors whose
    /// vertices come in every order (so each cross pair is taken both as rows and as
    /// columns): the same bits in every CSR value, from nonzero starting values.
    #[test]
    fn paired_slots_add_what_the_entries_add() {
        let faces: [[u32; 3]; 6] = [[0, 1, 2], [2, 1, 3], [3, 0, 2], [4, 3, 1], [1, 4, 0], [2, 4, 3]];
        let dofs: Vec<Vec<u32>> = faces.iter().map(|f| f.iter().flat_map(|&v| [2 * v, 2 * v + 1]).collect()).collect();
        let dofs = ElementList::from_slices(&dofs);
        let pattern = HessianPattern::build(10, std::slice::from_ref(&dofs)).unwrap();
        let slots = pattern.terms[0].slots();
        let upper = UpperSlots::build(&dofs, slots, 6, 3);
        let paired = upper.paired.as_ref().expect("triangles of 2-vectors pair up");
        assert!(paired.flipped.iter().any(|&b| b != 0) && paired.flipped.iter().any(|&b| b != 7));
        let nnz = pattern.csr.nnz();
        let start: Vec<f64> = (0..nnz).map(|i| 0.1 * i as f64 - 1.0).collect();
        let (mut by_entry, mut by_pair) = (start.clone(), start);
        for e in 0..faces.len() {
            // An upper triangle of distinct values (what the projection writes back), junk below.
            let block: Vec<f64> = (0..36)
                .map(|i| if i % 6 >= i / 6 { 1.0 / (3.0 + i as f64 + 7.0 * e as f64) } else { f64::NAN })
                .collect();
            // SAFETY: the slots index the pattern's values, which nothing else writes here.
            unsafe {
                scatter_upper::<6>(by_entry.as_mut_ptr(), upper.get(e), &block, 0.75);
                paired.scatter(e, by_pair.as_mut_ptr(), &block, 0.75);
            }
        }
        for (i, (a, b)) in by_entry.iter().zip(&by_pair).enumerate() {
            assert_eq!(a.to_bits(), b.to_bits(), "slot {i}: {a} vs {b}");
        }
    }

    /// Faces that repeat a vertex: two local entries meet in one diagonal slot. The upper
    /// scatter adds to every slot on or above the diagonal what the entry-by-entry scatter of
    /// the whole symmetric block adds there, the same bits, with and without the paired
    /// plan (before, such a slot got one of the two entries).
    #[test]
    fn faces_with_a_repeated_vertex_add_every_entry() {
        let faces: [[u32; 3]; 4] = [[0, 1, 2], [2, 2, 3], [1, 3, 1], [3, 0, 0]];
        let dofs: Vec<Vec<u32>> = faces.iter().map(|f| f.iter().flat_map(|&v| [2 * v, 2 * v + 1]).collect()).collect();
        let dofs = ElementList::from_slices(&dofs);
        let pattern = HessianPattern::build(8, std::slice::from_ref(&dofs)).unwrap();
        let slots = pattern.terms[0].slots();
        let nnz = pattern.csr.nnz();
        for nverts in [3, 0] {
            let upper = UpperSlots::build(&dofs, slots, 6, nverts);
            assert_eq!(upper.irregular.len(), 3);
            let (mut whole, mut by_upper) = (vec![0.25; nnz], vec![0.25; nnz]);
            for e in 0..faces.len() {
                let sym = |i: usize, j: usize| 1.0 / (3.0 + (i.min(j) * 6 + i.max(j)) as f64 + 7.0 * e as f64);
                let full: Vec<f64> = (0..36).map(|i| sym(i / 6, i % 6)).collect();
                // The projection writes the upper triangle back; below it, the input.
                let upper_only: Vec<f64> = (0..36).map(|i| if i % 6 >= i / 6 { full[i] } else { f64::NAN }).collect();
                for (i, &s) in slots.get(e).iter().enumerate() {
                    whole[s as usize] += 0.5 * full[i];
                }
                // SAFETY: the slots index the pattern's values, which nothing else writes here.
                unsafe { upper.scatter(e, 6, by_upper.as_mut_ptr(), &upper_only, 0.5) };
            }
            for r in 0..8 {
                for (i, &c) in pattern.csr.row(r).iter().enumerate() {
                    if c as usize >= r {
                        let at = pattern.csr.find(r, c).unwrap();
                        assert_eq!(whole[at].to_bits(), by_upper[at].to_bits(), "nverts {nverts} ({r}, {c}) #{i}");
                    }
                }
            }
        }
    }

    /// Dofs that are not two neighbouring ids per vertex (3-vectors read as 2-vectors) give
    /// no paired plan.
    #[test]
    fn other_layouts_are_not_paired() {
        let dofs = ElementList::from_slices(&[vec![0u32, 1, 2, 3, 4, 5], vec![0, 2, 4, 6, 8, 9]]);
        let pattern = HessianPattern::build(10, std::slice::from_ref(&dofs)).unwrap();
        assert!(UpperSlots::build(&dofs, pattern.terms[0].slots(), 6, 3).paired.is_none());
    }
}
