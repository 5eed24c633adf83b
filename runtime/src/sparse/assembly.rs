//! Assembly of energies, gradients and Hessian values from per-element kernels or blocks.
//!
//! Determinism: elements run in the fixed schedule of [`super::Coloring`]: contiguous chunks,
//! colours one after another, chunks of one colour in parallel (they share no dof, so each
//! gradient entry and each CSR row is written by one chunk at a time), elements of a chunk in
//! index order. Every entry therefore receives its contributions in the same order whatever the
//! number of threads. Energies are summed per chunk, chunk sums in schedule order. The serial and
//! parallel paths follow the same schedule, so their results are bit-identical on every run and
//! every thread count (rayon's current pool decides the thread count: run inside
//! `ThreadPool::install` to choose it).

use super::SparseError;
use super::pattern::TermSlots;
use rayon::prelude::*;

/// Where assembled values go: gradient (length ndofs) and Hessian values (length nnz), each
/// optional. Both are added to, not overwritten.
pub struct Outputs<'a> {
    pub grad: Option<&'a mut [f64]>,
    pub hess: Option<&'a mut [f64]>,
}

/// A per-element kernel: `(element, local dofs, grad out (k), hess out (k×k row-major)) -> energy`.
/// The output buffers are zeroed before each call.
pub trait ElementKernel: Sync {
    fn eval(&self, element: usize, dofs: &[u32], grad: &mut [f64], hess: &mut [f64]) -> f64;
}

impl<F> ElementKernel for F
where
    F: Fn(usize, &[u32], &mut [f64], &mut [f64]) -> f64 + Sync,
{
    fn eval(&self, element: usize, dofs: &[u32], grad: &mut [f64], hess: &mut [f64]) -> f64 {
        self(element, dofs, grad, hess)
    }
}

#[derive(Clone, Copy)]
struct SharedMut(*mut f64, usize);
// SAFETY: used only to write entries that the colouring makes disjoint between threads.
unsafe impl Send for SharedMut {}
unsafe impl Sync for SharedMut {}

impl SharedMut {
    fn new(s: Option<&mut [f64]>) -> Option<SharedMut> {
        s.map(|s| SharedMut(s.as_mut_ptr(), s.len()))
    }
    /// # Safety
    /// `i` is in bounds (checked once against the term's dof and slot bounds) and no other
    /// thread accesses index `i` concurrently.
    unsafe fn add(self, i: usize, v: f64) {
        debug_assert!(i < self.1);
        unsafe { *self.0.add(i) += v };
    }
}

fn check_lengths(
    term: &TermSlots,
    ndofs: usize,
    nnz: usize,
    out: &Outputs,
) -> Result<(), SparseError> {
    if let Some(g) = &out.grad
        && g.len() != ndofs
    {
        return Err(SparseError::Length {
            what: "gradient".into(),
            expected: ndofs,
            found: g.len(),
        });
    }
    if let Some(h) = &out.hess
        && h.len() != nnz
    {
        return Err(SparseError::Length {
            what: "Hessian values".into(),
            expected: nnz,
            found: h.len(),
        });
    }
    if term.dof_bound > ndofs {
        return Err(SparseError::DofOutOfRange {
            term: 0,
            dof: term.dof_bound - 1,
            ndofs,
        });
    }
    if term.slot_bound > nnz {
        return Err(SparseError::Length {
            what: "pattern entries".into(),
            expected: term.slot_bound,
            found: nnz,
        });
    }
    Ok(())
}

/// Evaluates a kernel on every element of a term and adds the results into `out`; returns the
/// term's energy. `parallel` picks rayon or the calling thread; both give the same bits.
pub fn assemble<K: ElementKernel>(
    term: &TermSlots,
    ndofs: usize,
    nnz: usize,
    kernel: &K,
    out: Outputs,
    parallel: bool,
) -> Result<f64, SparseError> {
    check_lengths(term, ndofs, nnz, &out)?;
    let grad = SharedMut::new(out.grad);
    let hess = SharedMut::new(out.hess);
    let max_k = match term.dofs.arity() {
        Some(k) => k,
        None => term.dofs.iter().map(<[u32]>::len).max().unwrap_or(0),
    };
    let coloring = &term.coloring;
    let run_chunk = |buf: &mut (Vec<f64>, Vec<f64>), chunk: u32| -> f64 {
        let mut sum = 0.0;
        for e in coloring.chunk_elements(chunk) {
            let dofs = term.dofs.get(e);
            let k = dofs.len();
            let (g, h) = (&mut buf.0[..k], &mut buf.1[..k * k]);
            g.fill(0.0);
            h.fill(0.0);
            sum += kernel.eval(e, dofs, g, h);
            // SAFETY: chunks of one colour share no dof, hence no gradient entry and no CSR
            // row; colours run one after another.
            unsafe {
                if let Some(gp) = grad {
                    for (a, &d) in dofs.iter().enumerate() {
                        gp.add(d as usize, g[a]);
                    }
                }
                if let Some(hp) = hess {
                    for (&s, &v) in term.slots.get(e).iter().zip(h.iter()) {
                        hp.add(s as usize, v);
                    }
                }
            }
        }
        sum
    };
    let new_buf = || (vec![0.0; max_k], vec![0.0; max_k * max_k]);
    let mut total = 0.0;
    for c in 0..coloring.num_colours() {
        let chunks = coloring.colour(c);
        let sums: Vec<f64> = if parallel {
            chunks
                .par_iter()
                .map_init(new_buf, |b, &ch| run_chunk(b, ch))
                .collect()
        } else {
            let mut b = new_buf();
            chunks.iter().map(|&ch| run_chunk(&mut b, ch)).collect()
        };
        for s in sums {
            total += s;
        }
    }
    Ok(total)
}

/// Adds precomputed element blocks (element e's k×k block at `blocks[term.slots().offset(e)..]`,
/// row-major) into the Hessian values, element by element in index order.
pub fn scatter_blocks(
    term: &TermSlots,
    blocks: &[f64],
    values: &mut [f64],
) -> Result<(), SparseError> {
    let needed = term.slots.indices().len();
    if blocks.len() != needed {
        return Err(SparseError::Length {
            what: "element blocks".into(),
            expected: needed,
            found: blocks.len(),
        });
    }
    if term.slots.max_index_bound() > values.len() {
        return Err(SparseError::Length {
            what: "Hessian values".into(),
            expected: term.slots.max_index_bound(),
            found: values.len(),
        });
    }
    for (&s, &v) in term.slots.indices().iter().zip(blocks) {
        values[s as usize] += v;
    }
    Ok(())
}

/// Adds per-element gradients (element e's k entries at `grads[term.dofs().offset(e)..]`) into
/// `out`, element by element in index order.
pub fn scatter_gradients(
    term: &TermSlots,
    grads: &[f64],
    out: &mut [f64],
) -> Result<(), SparseError> {
    let needed = term.dofs.indices().len();
    if grads.len() != needed {
        return Err(SparseError::Length {
            what: "element gradients".into(),
            expected: needed,
            found: grads.len(),
        });
    }
    if term.dofs.max_index_bound() > out.len() {
        return Err(SparseError::Length {
            what: "gradient".into(),
            expected: term.dofs.max_index_bound(),
            found: out.len(),
        });
    }
    for (&d, &v) in term.dofs.indices().iter().zip(grads) {
        out[d as usize] += v;
    }
    Ok(())
}
