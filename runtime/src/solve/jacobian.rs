//! Rectangular sparse Jacobian patterns (residuals × dofs) and the products Gauss-Newton needs:
//! `J v`, `Jᵀ w`, the pattern of `JᵀJ` and its values.

use crate::sparse::CsrPattern;

/// A compressed sparse row pattern of an `rows × cols` matrix (sorted unique columns per row).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JacobianPattern {
    pub rows: usize,
    pub cols: usize,
    /// Row r's entries are `row_ptr[r]..row_ptr[r+1]`.
    pub row_ptr: Vec<usize>,
    pub col_idx: Vec<u32>,
}

impl JacobianPattern {
    /// Builds a pattern from (row, col) entries (duplicates allowed, merged).
    ///
    /// # Panics
    /// If an entry lies outside `rows × cols`.
    pub fn from_entries(
        rows: usize,
        cols: usize,
        entries: impl IntoIterator<Item = (u32, u32)>,
    ) -> JacobianPattern {
        let mut per_row: Vec<Vec<u32>> = vec![Vec::new(); rows];
        for (r, c) in entries {
            assert!((c as usize) < cols, "column {c} outside {cols} columns");
            per_row[r as usize].push(c);
        }
        let mut row_ptr = vec![0];
        let mut col_idx = Vec::new();
        for mut r in per_row {
            r.sort_unstable();
            r.dedup();
            col_idx.extend_from_slice(&r);
            row_ptr.push(col_idx.len());
        }
        JacobianPattern {
            rows,
            cols,
            row_ptr,
            col_idx,
        }
    }

    pub fn nnz(&self) -> usize {
        self.col_idx.len()
    }

    /// `y = J x` (y has `rows` entries).
    pub fn mul(&self, values: &[f64], x: &[f64], y: &mut [f64]) {
        for (r, yr) in y.iter_mut().enumerate().take(self.rows) {
            let (lo, hi) = (self.row_ptr[r], self.row_ptr[r + 1]);
            *yr = values[lo..hi]
                .iter()
                .zip(&self.col_idx[lo..hi])
                .map(|(v, &c)| v * x[c as usize])
                .sum();
        }
    }

    /// `y = Jᵀ w` (y has `cols` entries, overwritten).
    pub fn mul_transpose(&self, values: &[f64], w: &[f64], y: &mut [f64]) {
        y.fill(0.0);
        for (r, &wr) in w.iter().enumerate().take(self.rows) {
            for k in self.row_ptr[r]..self.row_ptr[r + 1] {
                y[self.col_idx[k] as usize] += values[k] * wr;
            }
        }
    }

    /// The diagonal of `JᵀJ`: each column's sum of squares.
    pub fn normal_diagonal(&self, values: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        for (k, &c) in self.col_idx.iter().enumerate() {
            out[c as usize] += values[k] * values[k];
        }
    }
}

/// The pattern of `JᵀJ` and, for every row of J, the pattern positions its outer product adds to.
pub(crate) struct NormalProduct {
    pub pattern: CsrPattern,
    /// For row r of J with entries k0..k1, the (k1−k0)² positions, row-major.
    slots: Vec<u32>,
    slot_ptr: Vec<usize>,
}

impl NormalProduct {
    pub fn new(j: &JacobianPattern) -> NormalProduct {
        let pattern = CsrPattern::from_entries(
            j.cols,
            (0..j.rows).flat_map(|r| {
                let cols = &j.col_idx[j.row_ptr[r]..j.row_ptr[r + 1]];
                cols.iter()
                    .flat_map(move |&a| cols.iter().map(move |&b| (a, b)))
            }),
        );
        let mut slots = Vec::new();
        let mut slot_ptr = vec![0];
        for r in 0..j.rows {
            let cols = &j.col_idx[j.row_ptr[r]..j.row_ptr[r + 1]];
            for &a in cols {
                for &b in cols {
                    let s = pattern
                        .find(a as usize, b)
                        .expect("JᵀJ pattern holds every outer-product entry");
                    slots.push(s as u32);
                }
            }
            slot_ptr.push(slots.len());
        }
        NormalProduct {
            pattern,
            slots,
            slot_ptr,
        }
    }

    /// The values of `JᵀJ` (overwritten) from J's values.
    pub fn values(&self, j: &JacobianPattern, jv: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        for r in 0..j.rows {
            let row = &jv[j.row_ptr[r]..j.row_ptr[r + 1]];
            let slots = &self.slots[self.slot_ptr[r]..self.slot_ptr[r + 1]];
            let k = row.len();
            for a in 0..k {
                for b in 0..k {
                    out[slots[a * k + b] as usize] += row[a] * row[b];
                }
            }
        }
    }
}
