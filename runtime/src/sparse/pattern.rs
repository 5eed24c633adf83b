//! The CSR pattern of a Hessian, built once from the elements of a set of terms, and each
//! element's precomputed slots.
//!
//! A term is given as the list of its elements' **local dofs** (global dof indices), built from a
//! stencil's element → vertex lists by [`element_dofs`]: for fields `[Field { offset, dim }, …]`
//! the local order is field-major, then the element's vertices in stencil order, then components,
//! with global dof index `offset + dim·v + c` (vertex-major layout).
//!
//! For an element with k local dofs, its k×k dense block (row-major: local entry `(a, b)` at
//! `a·k + b`) lands in the CSR entries `(dof[a], dof[b])`; [`TermSlots::slots`] lists, for every
//! element, those k² CSR positions in the same row-major order. Elements with a repeated dof
//! (a degenerate face, say) have several local entries sharing one slot; they are added.

use super::coloring::Coloring;
use super::{ElementList, SparseError};
use rayon::prelude::*;

/// A dof field: `dim` unknowns per entity starting at global dof `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub offset: usize,
    pub dim: usize,
}

/// Each element's local dofs: field-major, then element entity (vertex) order, then component.
pub fn element_dofs(elements: &ElementList, fields: &[Field]) -> ElementList {
    let per_entity: usize = fields.iter().map(|f| f.dim).sum();
    let build = |e: &[u32], out: &mut Vec<u32>| {
        for f in fields {
            for &v in e {
                for c in 0..f.dim {
                    out.push((f.offset + f.dim * v as usize + c) as u32);
                }
            }
        }
    };
    let mut out = Vec::with_capacity(elements.indices().len() * per_entity);
    match elements.arity() {
        Some(k) if k * per_entity > 0 => {
            for e in elements.iter() {
                build(e, &mut out);
            }
            ElementList::fixed(k * per_entity, out)
        }
        _ => {
            let mut offsets = Vec::with_capacity(elements.len() + 1);
            offsets.push(0);
            for e in elements.iter() {
                build(e, &mut out);
                offsets.push(out.len());
            }
            ElementList::ragged(offsets, out)
        }
    }
}

/// A compressed sparse row pattern (square, `n × n`, sorted unique columns per row).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsrPattern {
    pub n: usize,
    /// Row r's entries are `row_ptr[r]..row_ptr[r+1]`.
    pub row_ptr: Vec<usize>,
    pub col_idx: Vec<u32>,
}

impl CsrPattern {
    /// The empty n × n pattern.
    pub fn empty(n: usize) -> CsrPattern {
        CsrPattern {
            n,
            row_ptr: vec![0; n + 1],
            col_idx: Vec::new(),
        }
    }

    pub fn nnz(&self) -> usize {
        self.col_idx.len()
    }

    /// Row r's columns.
    pub fn row(&self, r: usize) -> &[u32] {
        &self.col_idx[self.row_ptr[r]..self.row_ptr[r + 1]]
    }

    /// The position of entry (r, c), if it is in the pattern.
    pub fn find(&self, r: usize, c: u32) -> Option<usize> {
        self.row(r)
            .binary_search(&c)
            .ok()
            .map(|k| self.row_ptr[r] + k)
    }

    /// Builds a pattern from arbitrary (row, col) entries (duplicates allowed).
    pub fn from_entries(n: usize, entries: impl IntoIterator<Item = (u32, u32)>) -> CsrPattern {
        let mut rows: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (r, c) in entries {
            rows[r as usize].push(c);
        }
        let mut row_ptr = vec![0];
        let mut col_idx = Vec::new();
        for mut r in rows {
            r.sort_unstable();
            r.dedup();
            col_idx.extend_from_slice(&r);
            row_ptr.push(col_idx.len());
        }
        CsrPattern {
            n,
            row_ptr,
            col_idx,
        }
    }

    /// The product `y = A x` of the matrix with this pattern and `values` (pattern order).
    ///
    /// # Panics
    /// If `values`, `x` or `y` is shorter than the pattern requires.
    pub fn spmv(&self, values: &[f64], x: &[f64], y: &mut [f64]) {
        for (r, yr) in y.iter_mut().enumerate().take(self.n) {
            let (lo, hi) = (self.row_ptr[r], self.row_ptr[r + 1]);
            *yr = values[lo..hi]
                .iter()
                .zip(&self.col_idx[lo..hi])
                .map(|(v, &c)| v * x[c as usize])
                .sum();
        }
    }
}

/// One term's elements, their local dofs, CSR slots and the colouring parallel assembly uses.
#[derive(Clone, Debug)]
pub struct TermSlots {
    pub(crate) dofs: ElementList,
    pub(crate) slots: ElementList,
    pub(crate) coloring: Coloring,
    /// Largest dof + 1 and largest slot + 1 (checked against buffers before unchecked writes).
    pub(crate) dof_bound: usize,
    pub(crate) slot_bound: usize,
}

impl TermSlots {
    /// Each element's local dofs.
    pub fn dofs(&self) -> &ElementList {
        &self.dofs
    }
    /// Each element's k² CSR positions, row-major within the block.
    pub fn slots(&self) -> &ElementList {
        &self.slots
    }
    /// The assembly schedule (chunks of one colour share no dof).
    pub fn coloring(&self) -> &Coloring {
        &self.coloring
    }
    pub fn len(&self) -> usize {
        self.dofs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.dofs.is_empty()
    }
}

/// The pattern of a sum of terms and every term's slots.
#[derive(Clone, Debug)]
pub struct HessianPattern {
    pub csr: CsrPattern,
    pub terms: Vec<TermSlots>,
}

impl HessianPattern {
    /// Builds the pattern of `ndofs × ndofs` Hessians of the terms whose elements' local dofs
    /// are given (see [`element_dofs`]), the slots and the colourings.
    pub fn build(ndofs: usize, terms: &[ElementList]) -> Result<HessianPattern, SparseError> {
        if ndofs > u32::MAX as usize {
            return Err(SparseError::TooLarge {
                what: "dof count".into(),
            });
        }
        for (t, dofs) in terms.iter().enumerate() {
            if let Some(&d) = dofs.indices().iter().find(|&&d| d as usize >= ndofs) {
                return Err(SparseError::DofOutOfRange {
                    term: t,
                    dof: d as usize,
                    ndofs,
                });
            }
        }
        let csr = build_csr(ndofs, terms)?;
        let terms = terms
            .iter()
            .map(|dofs| {
                let slots = element_slots(&csr, dofs);
                let coloring = Coloring::greedy(dofs, ndofs);
                let (dof_bound, slot_bound) = (dofs.max_index_bound(), slots.max_index_bound());
                TermSlots {
                    dofs: dofs.clone(),
                    slots,
                    coloring,
                    dof_bound,
                    slot_bound,
                }
            })
            .collect();
        Ok(HessianPattern { csr, terms })
    }
}

/// Counts, fills, sorts and deduplicates each row's columns.
fn build_csr(n: usize, terms: &[ElementList]) -> Result<CsrPattern, SparseError> {
    let mut count = vec![0usize; n + 1];
    for dofs in terms {
        for e in dofs.iter() {
            for &r in e {
                count[r as usize + 1] += e.len();
            }
        }
    }
    for r in 0..n {
        count[r + 1] += count[r];
    }
    let mut fill = count.clone();
    let mut raw = vec![0u32; count[n]];
    for dofs in terms {
        for e in dofs.iter() {
            for &r in e {
                let at = fill[r as usize];
                raw[at..at + e.len()].copy_from_slice(e);
                fill[r as usize] += e.len();
            }
        }
    }
    drop(fill);
    let mut row_ptr = Vec::with_capacity(n + 1);
    row_ptr.push(0);
    let mut write = 0usize;
    for r in 0..n {
        let (lo, hi) = (count[r], count[r + 1]);
        raw[lo..hi].sort_unstable();
        let mut last = None;
        for k in lo..hi {
            let c = raw[k];
            if last != Some(c) {
                raw[write] = c;
                write += 1;
                last = Some(c);
            }
        }
        row_ptr.push(write);
    }
    if write > u32::MAX as usize {
        return Err(SparseError::TooLarge {
            what: format!("{write} nonzeros"),
        });
    }
    raw.truncate(write);
    raw.shrink_to_fit();
    Ok(CsrPattern {
        n,
        row_ptr,
        col_idx: raw,
    })
}

/// Each element's k² slots (row-major) in a pattern that contains all its entries.
pub(crate) fn element_slots(csr: &CsrPattern, dofs: &ElementList) -> ElementList {
    let fill = |e: &[u32], out: &mut [u32]| {
        let k = e.len();
        for (a, &r) in e.iter().enumerate() {
            for (b, &c) in e.iter().enumerate() {
                let s = csr
                    .find(r as usize, c)
                    .expect("the pattern holds every element entry");
                out[a * k + b] = s as u32;
            }
        }
    };
    match dofs.arity() {
        Some(k) => {
            let mut out = vec![0u32; dofs.len() * k * k];
            out.par_chunks_mut(k * k)
                .enumerate()
                .for_each(|(i, o)| fill(dofs.get(i), o));
            ElementList::fixed(k * k, out)
        }
        None => {
            let mut offsets = Vec::with_capacity(dofs.len() + 1);
            offsets.push(0);
            for e in dofs.iter() {
                offsets.push(offsets.last().unwrap() + e.len() * e.len());
            }
            let mut out = vec![0u32; *offsets.last().unwrap()];
            for (i, e) in dofs.iter().enumerate() {
                fill(e, &mut out[offsets[i]..offsets[i + 1]]);
            }
            ElementList::ragged(offsets, out)
        }
    }
}
