//! The CSR slot tables of the batched loops, built once per bound term: compact slots
//! (a `Hess` loop over runs of consecutive dofs), the upper triangle of a symmetric
//! block ([`UpperSlots`]) and, for triangles of 2-vectors, its neighbouring slot pairs
//! ([`PairedSlots`]), with the scatters that add a projected block through them.

use std::collections::HashMap;

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
    /// else 0 ([`crate::energy::kernels::TermKernels::translation_nverts`]).
    pub(super) fn build(
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
    pub(super) unsafe fn scatter(&self, e: usize, k: usize, hess: *mut f64, block: &[f64], weight: f64) {
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
