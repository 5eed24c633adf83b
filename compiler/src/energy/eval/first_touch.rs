//! Zeroing outputs where they are first written instead of in a separate pass.
//!
//! A gradient, HVP or Hessian evaluation adds every element's contribution
//! into its outputs, so they must start at zero. Clearing the Hessian values
//! (tens of bytes per dof, far more than any cache) in a pass of their own costs
//! a full trip through memory before the element loop makes another. When
//! the first term of an evaluation runs as a batched loop, each chunk instead
//! clears the dofs (gradient/HVP entries) and CSR rows (Hessian values) that it
//! is the first in the schedule to touch, right before it writes them, while
//! they are on their way into the cache anyway; the dofs and rows no element of
//! the term touches, and the pair overlay, are cleared up front.
//!
//! The Hessian values of the first term go further ([`FirstStore`]): its
//! compact slot table marks, per run of CSR values, the first element in the
//! schedule to write it, and the loop stores that element's values where the
//! others add, so the values are never cleared at all (only those no element
//! of the term writes are, up front). `0 + v` and `v` are the same bits, so the
//! results equal those of a cleared buffer.
//!
//! Correctness rests on the schedule of [`Coloring`]: colours run in turn, the
//! chunks of one colour share no dof, and an element writes only the gradient
//! entries and CSR rows of its own dofs. So when a chunk starts, no earlier
//! chunk has touched the rows it clears, and no concurrent chunk touches them.

use mad_runtime::sparse::{Coloring, ElementList};

/// Per chunk of one term's schedule, the dof ranges it touches first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FirstTouch {
    /// Chunk `c`'s ranges are `ranges[offsets[c]..offsets[c + 1]]`.
    offsets: Vec<usize>,
    ranges: Vec<(u32, u32)>,
    /// The dof ranges no element of the term touches.
    untouched: Vec<(u32, u32)>,
}

impl FirstTouch {
    /// The plan for the elements `dofs` scheduled by `coloring` over `ndofs` dofs.
    pub fn plan(dofs: &ElementList, coloring: &Coloring, ndofs: usize) -> FirstTouch {
        let nchunks = coloring.chunks.len();
        let mut seen = vec![false; ndofs];
        let mut per_chunk: Vec<Vec<(u32, u32)>> = vec![Vec::new(); nchunks];
        let mut fresh = Vec::new();
        for c in 0..coloring.num_colours() {
            for &ch in coloring.colour(c) {
                fresh.clear();
                for e in coloring.chunk_elements(ch) {
                    for &d in dofs.get(e) {
                        if let Some(s) = seen.get_mut(d as usize)
                            && !*s
                        {
                            *s = true;
                            fresh.push(d);
                        }
                    }
                }
                fresh.sort_unstable();
                per_chunk[ch as usize] = runs(fresh.iter().copied());
            }
        }
        let mut offsets = Vec::with_capacity(nchunks + 1);
        offsets.push(0);
        let mut ranges = Vec::new();
        for r in per_chunk {
            ranges.extend(r);
            offsets.push(ranges.len());
        }
        let untouched = runs((0..ndofs as u32).filter(|&d| !seen[d as usize]));
        FirstTouch {
            offsets,
            ranges,
            untouched,
        }
    }

    /// The dof ranges chunk `chunk` touches first.
    pub fn chunk(&self, chunk: u32) -> &[(u32, u32)] {
        let c = chunk as usize;
        match (self.offsets.get(c), self.offsets.get(c + 1)) {
            (Some(&a), Some(&b)) => &self.ranges[a..b],
            _ => &[],
        }
    }

    /// The dof ranges no element touches.
    pub fn untouched(&self) -> &[(u32, u32)] {
        &self.untouched
    }
}

/// Bit 31 of a compact Hessian slot: this element is the first in the schedule
/// to write the slot's run, so the loop stores its value instead of adding it
/// to what the buffer held (no clearing pass over the Hessian values at all).
pub const FIRST_STORE: u32 = 1 << 31;

/// A term's compact Hessian slot table with [`FIRST_STORE`] marks, and the
/// static CSR values no element of the term writes (cleared up front).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FirstStore {
    pub table: Vec<u32>,
    pub uncovered: Vec<(usize, usize)>,
}

impl FirstStore {
    /// Marks, in schedule order, the first element to write each run of the
    /// compact table `compact` (per element, per row a, per run r: the first
    /// slot of the run, `runs[r]` values long) over `static_nnz` CSR values.
    /// `None` where the marks would not be exact: a slot at or above 2³¹ or
    /// past the values, two entries of one element on the same run (the loop
    /// writes an element's values in its own order), or runs that overlap
    /// without coinciding.
    pub fn plan(compact: &[u32], runs: &[usize], k: usize, coloring: &Coloring, static_nnz: usize) -> Option<FirstStore> {
        let per = k * runs.len();
        if per == 0 || compact.len() != coloring.num_elements * per || static_nnz >= FIRST_STORE as usize {
            return None;
        }
        let mut seen = vec![0u64; static_nnz.div_ceil(64)];
        let is_seen = |seen: &[u64], i: usize| seen[i / 64] >> (i % 64) & 1 == 1;
        let mut table = compact.to_vec();
        let mut starts = Vec::with_capacity(per);
        for c in 0..coloring.num_colours() {
            for &ch in coloring.colour(c) {
                for e in coloring.chunk_elements(ch) {
                    let entries = &mut table[e * per..(e + 1) * per];
                    starts.clear();
                    starts.extend(entries.iter().copied());
                    starts.sort_unstable();
                    if starts.windows(2).any(|w| w[0] == w[1]) {
                        return None;
                    }
                    for (j, slot) in entries.iter_mut().enumerate() {
                        let (s, len) = (*slot as usize, runs[j % runs.len()]);
                        if s + len > static_nnz {
                            return None;
                        }
                        let fresh = (s..s + len).filter(|&i| !is_seen(&seen, i)).count();
                        if fresh == len {
                            (s..s + len).for_each(|i| seen[i / 64] |= 1 << (i % 64));
                            *slot |= FIRST_STORE;
                        } else if fresh != 0 {
                            return None;
                        }
                    }
                }
            }
        }
        let mut uncovered: Vec<(usize, usize)> = Vec::new();
        for i in (0..static_nnz).filter(|&i| !is_seen(&seen, i)) {
            match uncovered.last_mut() {
                Some(r) if r.1 == i => r.1 = i + 1,
                _ => uncovered.push((i, i + 1)),
            }
        }
        Some(FirstStore { table, uncovered })
    }
}

/// Half-open ranges covering a sorted sequence of distinct values.
fn runs(sorted: impl Iterator<Item = u32>) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for d in sorted {
        match out.last_mut() {
            Some(r) if r.1 == d => r.1 = d + 1,
            _ => out.push((d, d + 1)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dof_is_cleared_exactly_once_before_its_first_write() {
        // A path of 40 edges over 41 dofs plus 3 dofs no edge touches.
        let n = 40;
        let edges: Vec<[u32; 2]> = (0..n as u32).map(|i| [i, i + 1]).collect();
        let dofs = ElementList::from_slices(&edges);
        let coloring = Coloring::with_chunk_size(&dofs, 44, 3);
        let plan = FirstTouch::plan(&dofs, &coloring, 44);
        let mut cleared = [0; 44];
        for &(a, b) in plan.untouched() {
            (a..b).for_each(|d| cleared[d as usize] += 1);
        }
        assert_eq!(plan.untouched(), &[(41, 44)]);
        for c in 0..coloring.num_colours() {
            for &ch in coloring.colour(c) {
                for &(a, b) in plan.chunk(ch) {
                    (a..b).for_each(|d| cleared[d as usize] += 1);
                }
                // Every dof this chunk writes has been cleared by now.
                for e in coloring.chunk_elements(ch) {
                    assert!(dofs.get(e).iter().all(|&d| cleared[d as usize] == 1));
                }
            }
        }
        assert!(cleared.iter().all(|&c| c == 1));
    }
}
