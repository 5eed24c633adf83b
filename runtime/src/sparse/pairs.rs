//! Pair terms: a dynamic list of vertex tuples (contact pairs) whose Hessian entries are added to
//! a static pattern incrementally.
//!
//! The static pattern (from the mesh terms) never changes. Entries a pair needs that the static
//! pattern lacks live in an **overlay**: each such entry (r, c) has a reference count (how many
//! live pairs touch it, counting repeats within a pair once) and a stable overlay slot, taken from
//! a free list when its count becomes 1 and returned when it drops to 0. Adding or removing a pair
//! therefore costs O(k²) hash operations for its k local dofs, whatever the mesh size, and the
//! slots of the other pairs stay valid.
//!
//! Values live in one buffer of length [`PairPattern::num_values`]: static entries first
//! (`0..static_nnz`, the static CSR order), then overlay slots. A pair's slot `s` indexes that
//! buffer directly. [`PairPattern::to_csr`] and [`PairPattern::merge_values`] give the combined
//! matrix in plain CSR form (sorted columns per row), e.g. for output or a solver.

use super::pattern::{CsrPattern, Field, element_dofs};
use super::{ElementList, SparseError};
use std::collections::HashMap;

/// A handle to a live pair (stable until the pair is removed; ids are reused afterwards).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PairId(pub u32);

#[derive(Clone, Debug)]
struct Pair {
    vertices: Vec<u32>,
    dofs: Vec<u32>,
    slots: Vec<u32>,
}

#[derive(Clone, Copy, Debug)]
struct Overlay {
    slot: u32,
    refs: u32,
}

/// A static CSR pattern plus the entries of a changing set of pairs.
#[derive(Clone, Debug)]
pub struct PairPattern {
    base: CsrPattern,
    fields: Vec<Field>,
    num_entities: usize,
    arity: usize,
    overlay: HashMap<(u32, u32), Overlay>,
    /// Overlay slot → its entry (`None` when free).
    overlay_entries: Vec<Option<(u32, u32)>>,
    free_overlay: Vec<u32>,
    pairs: Vec<Option<Pair>>,
    free_pairs: Vec<u32>,
}

impl PairPattern {
    /// Starts from a static pattern; pairs are `arity` vertices (of `num_entities`) whose dofs
    /// are laid out by `fields` (see [`super::element_dofs`]).
    pub fn new(
        base: CsrPattern,
        fields: Vec<Field>,
        num_entities: usize,
        arity: usize,
    ) -> Result<PairPattern, SparseError> {
        let max_dof = fields
            .iter()
            .map(|f| f.offset + f.dim * num_entities)
            .max()
            .unwrap_or(0);
        if max_dof > base.n {
            return Err(SparseError::DofOutOfRange {
                term: 0,
                dof: max_dof - 1,
                ndofs: base.n,
            });
        }
        if arity == 0 {
            return Err(SparseError::BadPair {
                message: "pairs need at least one vertex".into(),
            });
        }
        Ok(PairPattern {
            base,
            fields,
            num_entities,
            arity,
            overlay: HashMap::new(),
            overlay_entries: Vec::new(),
            free_overlay: Vec::new(),
            pairs: Vec::new(),
            free_pairs: Vec::new(),
        })
    }

    /// The static pattern.
    pub fn base(&self) -> &CsrPattern {
        &self.base
    }

    /// The length of the value buffer: static entries, then overlay slots (free ones included).
    pub fn num_values(&self) -> usize {
        self.base.nnz() + self.overlay_entries.len()
    }

    /// The number of live overlay entries (entries present only because of pairs).
    pub fn num_overlay_entries(&self) -> usize {
        self.overlay.len()
    }

    /// The number of live pairs.
    pub fn num_pairs(&self) -> usize {
        self.pairs.len() - self.free_pairs.len()
    }

    /// Adds a pair of `arity` vertices; returns its id.
    pub fn add_pair(&mut self, vertices: &[u32]) -> Result<PairId, SparseError> {
        if vertices.len() != self.arity {
            return Err(SparseError::BadPair {
                message: format!(
                    "a pair has {} vertices, expected {}",
                    vertices.len(),
                    self.arity
                ),
            });
        }
        if let Some(&v) = vertices.iter().find(|&&v| v as usize >= self.num_entities) {
            return Err(SparseError::BadPair {
                message: format!(
                    "vertex {v} is out of range ({} vertices)",
                    self.num_entities
                ),
            });
        }
        let dofs = element_dofs(
            &ElementList::fixed(vertices.len(), vertices.to_vec()),
            &self.fields,
        )
        .indices()
        .to_vec();
        let mut slots = Vec::with_capacity(dofs.len() * dofs.len());
        let mut seen: Vec<(u32, u32)> = Vec::new();
        for &r in &dofs {
            for &c in &dofs {
                if let Some(s) = self.base.find(r as usize, c) {
                    slots.push(s as u32);
                    continue;
                }
                let first_time = !seen.contains(&(r, c));
                if first_time {
                    seen.push((r, c));
                }
                let slot = match self.overlay.get_mut(&(r, c)) {
                    Some(o) => {
                        o.refs += first_time as u32;
                        o.slot
                    }
                    None => {
                        let slot = match self.free_overlay.pop() {
                            Some(s) => {
                                self.overlay_entries[s as usize] = Some((r, c));
                                s
                            }
                            None => {
                                self.overlay_entries.push(Some((r, c)));
                                (self.overlay_entries.len() - 1) as u32
                            }
                        };
                        self.overlay.insert((r, c), Overlay { slot, refs: 1 });
                        slot
                    }
                };
                slots.push(self.base.nnz() as u32 + slot);
            }
        }
        let pair = Pair {
            vertices: vertices.to_vec(),
            dofs,
            slots,
        };
        let id = match self.free_pairs.pop() {
            Some(i) => {
                self.pairs[i as usize] = Some(pair);
                i
            }
            None => {
                self.pairs.push(Some(pair));
                (self.pairs.len() - 1) as u32
            }
        };
        Ok(PairId(id))
    }

    /// Removes a live pair.
    pub fn remove_pair(&mut self, id: PairId) -> Result<(), SparseError> {
        let pair = self
            .pairs
            .get_mut(id.0 as usize)
            .and_then(Option::take)
            .ok_or_else(|| SparseError::BadPair {
                message: format!("no live pair {}", id.0),
            })?;
        self.free_pairs.push(id.0);
        let mut seen: Vec<(u32, u32)> = Vec::new();
        for &r in &pair.dofs {
            for &c in &pair.dofs {
                if self.base.find(r as usize, c).is_some() || seen.contains(&(r, c)) {
                    continue;
                }
                seen.push((r, c));
                let o = self
                    .overlay
                    .get_mut(&(r, c))
                    .expect("a live pair's overlay entry exists");
                o.refs -= 1;
                if o.refs == 0 {
                    let slot = o.slot;
                    self.overlay.remove(&(r, c));
                    self.overlay_entries[slot as usize] = None;
                    self.free_overlay.push(slot);
                }
            }
        }
        Ok(())
    }

    /// The live pairs' ids, in increasing order.
    pub fn pair_ids(&self) -> Vec<PairId> {
        (0..self.pairs.len())
            .filter(|&i| self.pairs[i].is_some())
            .map(|i| PairId(i as u32))
            .collect()
    }

    /// A live pair's vertices, local dofs and k² value-buffer slots (row-major).
    pub fn pair(&self, id: PairId) -> Option<(&[u32], &[u32], &[u32])> {
        self.pairs
            .get(id.0 as usize)?
            .as_ref()
            .map(|p| (&p.vertices[..], &p.dofs[..], &p.slots[..]))
    }

    /// Adds each live pair's block (given by `block(id, dofs, out)`, out k×k row-major and zeroed
    /// before the call) into `values` (length [`Self::num_values`]), pairs in id order.
    pub fn assemble(
        &self,
        values: &mut [f64],
        mut block: impl FnMut(PairId, &[u32], &mut [f64]),
    ) -> Result<(), SparseError> {
        if values.len() != self.num_values() {
            return Err(SparseError::Length {
                what: "pair values".into(),
                expected: self.num_values(),
                found: values.len(),
            });
        }
        let mut buf = Vec::new();
        for (i, p) in self.pairs.iter().enumerate() {
            if let Some(p) = p {
                buf.clear();
                buf.resize(p.slots.len(), 0.0);
                block(PairId(i as u32), &p.dofs, &mut buf);
                for (&s, &v) in p.slots.iter().zip(&buf) {
                    values[s as usize] += v;
                }
            }
        }
        Ok(())
    }

    /// The combined pattern (static ∪ overlay) in CSR form.
    pub fn to_csr(&self) -> CsrPattern {
        self.merged(None).0
    }

    /// The combined pattern and the values moved into its order.
    pub fn merge_values(&self, values: &[f64]) -> Result<(CsrPattern, Vec<f64>), SparseError> {
        if values.len() != self.num_values() {
            return Err(SparseError::Length {
                what: "pair values".into(),
                expected: self.num_values(),
                found: values.len(),
            });
        }
        Ok(self.merged(Some(values)))
    }

    fn merged(&self, values: Option<&[f64]>) -> (CsrPattern, Vec<f64>) {
        let nnz0 = self.base.nnz();
        let mut extra: Vec<(u32, u32, u32)> = self
            .overlay
            .iter()
            .map(|(&(r, c), o)| (r, c, o.slot))
            .collect();
        extra.sort_unstable();
        let mut row_ptr = vec![0usize];
        let mut col_idx = Vec::with_capacity(nnz0 + extra.len());
        let mut out = Vec::new();
        let mut x = 0usize;
        for r in 0..self.base.n {
            let (lo, hi) = (self.base.row_ptr[r], self.base.row_ptr[r + 1]);
            let mut k = lo;
            loop {
                let base_c = (k < hi).then(|| self.base.col_idx[k]);
                let extra_c = (x < extra.len() && extra[x].0 as usize == r).then(|| extra[x].1);
                let take_extra = match (base_c, extra_c) {
                    (None, None) => break,
                    (Some(b), Some(e)) => e < b,
                    (Some(_), None) => false,
                    (None, Some(_)) => true,
                };
                if take_extra {
                    col_idx.push(extra[x].1);
                    if let Some(v) = values {
                        out.push(v[nnz0 + extra[x].2 as usize]);
                    }
                    x += 1;
                } else {
                    col_idx.push(self.base.col_idx[k]);
                    if let Some(v) = values {
                        out.push(v[k]);
                    }
                    k += 1;
                }
            }
            row_ptr.push(col_idx.len());
        }
        (
            CsrPattern {
                n: self.base.n,
                row_ptr,
                col_idx,
            },
            out,
        )
    }
}
