//! Sparse Cholesky (faer's supernodal/simplicial `LLᵀ`) of a CSR Hessian with fixed dofs and a
//! diagonal shift, the symbolic factorization computed once per pattern.
//!
//! The lower triangle is taken from the CSR pattern (row r's columns c ≥ r become CSC column r,
//! rows c: the transpose, equal for a symmetric matrix), with every diagonal entry present. Fixed
//! dofs get an identity row and column, so their solution entries equal the right-hand side's
//! (zero for a masked gradient).

use super::SolveError;
use crate::sparse::CsrPattern;
use faer::linalg::solvers::Solve;
use faer::sparse::linalg::solvers::{Llt, SymbolicLlt};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{MatMut, Side};

const NONE: usize = usize::MAX;

/// A reusable factorization of `H + τI` for Hessians sharing one pattern.
pub(crate) struct ShiftedCholesky {
    pattern: CsrPattern,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    /// For each CSC entry, the CSR position it copies (`NONE`: an added diagonal).
    source: Vec<usize>,
    /// For each column, the CSC position of its diagonal.
    diag: Vec<usize>,
    values: Vec<f64>,
    symbolic: SymbolicLlt<usize>,
    factor: Option<Llt<usize, f64>>,
}

impl ShiftedCholesky {
    pub fn new(pattern: &CsrPattern) -> Result<ShiftedCholesky, SolveError> {
        let n = pattern.n;
        let mut col_ptr = Vec::with_capacity(n + 1);
        let mut row_idx = Vec::new();
        let mut source = Vec::new();
        let mut diag = Vec::with_capacity(n);
        col_ptr.push(0);
        for r in 0..n {
            let lo = pattern.row_ptr[r];
            let cols = pattern.row(r);
            let first = cols.partition_point(|&c| (c as usize) < r);
            if cols.get(first).map(|&c| c as usize) != Some(r) {
                diag.push(row_idx.len());
                row_idx.push(r);
                source.push(NONE);
            }
            for (k, &c) in cols.iter().enumerate().skip(first) {
                if c as usize == r {
                    diag.push(row_idx.len());
                }
                row_idx.push(c as usize);
                source.push(lo + k);
            }
            col_ptr.push(row_idx.len());
        }
        let sym = SymbolicSparseColMatRef::new_checked(n, n, &col_ptr, None, &row_idx);
        let symbolic =
            SymbolicLlt::try_new(sym, Side::Lower).map_err(|e| SolveError::Factorization {
                iteration: 0,
                message: format!("symbolic analysis: {e:?}"),
            })?;
        let values = vec![0.0; row_idx.len()];
        Ok(ShiftedCholesky {
            pattern: pattern.clone(),
            col_ptr,
            row_idx,
            source,
            diag,
            values,
            symbolic,
            factor: None,
        })
    }

    /// Whether this factorization was built for `pattern`.
    pub fn matches(&self, pattern: &CsrPattern) -> bool {
        self.pattern == *pattern
    }

    /// The largest absolute diagonal entry and the smallest diagonal entry over free dofs.
    pub fn diagonal_range(
        hess: &[f64],
        pattern: &CsrPattern,
        fixed: Option<&[bool]>,
    ) -> (f64, f64) {
        let (mut max_abs, mut min) = (0.0f64, f64::INFINITY);
        for r in 0..pattern.n {
            if fixed.is_some_and(|f| f[r]) {
                continue;
            }
            let v = pattern.find(r, r as u32).map_or(0.0, |k| hess[k]);
            max_abs = max_abs.max(v.abs());
            min = min.min(v);
        }
        (max_abs, min)
    }

    /// Loads `hess + shift·I` (fixed dofs: identity) and factors it. `Ok(false)` when the
    /// matrix is not numerically positive definite.
    pub fn factor(
        &mut self,
        hess: &[f64],
        fixed: Option<&[bool]>,
        shift: f64,
    ) -> Result<bool, SolveError> {
        for (v, &s) in self.values.iter_mut().zip(&self.source) {
            *v = if s == NONE { 0.0 } else { hess[s] };
        }
        for col in 0..self.pattern.n {
            let is_fixed = |i: usize| fixed.is_some_and(|f| f[i]);
            if is_fixed(col) {
                for k in self.col_ptr[col]..self.col_ptr[col + 1] {
                    self.values[k] = 0.0;
                }
            } else if fixed.is_some() {
                for k in self.col_ptr[col]..self.col_ptr[col + 1] {
                    if is_fixed(self.row_idx[k]) {
                        self.values[k] = 0.0;
                    }
                }
            }
            let d = self.diag[col];
            if is_fixed(col) {
                self.values[d] = 1.0;
            } else {
                self.values[d] += shift;
            }
        }
        let n = self.pattern.n;
        let sym = SymbolicSparseColMatRef::new_checked(n, n, &self.col_ptr, None, &self.row_idx);
        let mat = SparseColMatRef::new(sym, &self.values);
        match Llt::try_new_with_symbolic(self.symbolic.clone(), mat, Side::Lower) {
            Ok(f) => {
                self.factor = Some(f);
                Ok(true)
            }
            Err(faer::sparse::linalg::LltError::Numeric(_)) => {
                self.factor = None;
                Ok(false)
            }
            Err(e) => Err(SolveError::Factorization {
                iteration: 0,
                message: format!("{e:?}"),
            }),
        }
    }

    /// Solves with the last successful factorization, in place.
    pub fn solve(&self, rhs: &mut [f64]) -> Result<(), SolveError> {
        let f = self.factor.as_ref().ok_or(SolveError::Factorization {
            iteration: 0,
            message: "no factorization to solve with".into(),
        })?;
        let n = rhs.len();
        f.solve_in_place(MatMut::from_column_major_slice_mut(rhs, n, 1));
        Ok(())
    }
}
