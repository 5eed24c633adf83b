//! Sparse Cholesky (faer's supernodal/simplicial `LLᵀ`, AMD ordering) of a CSR Hessian with
//! fixed dofs and a diagonal shift, the symbolic factorization computed once per pattern; the
//! numeric factor and the scratch space are kept and reused between factorizations.
//!
//! The lower triangle is taken from the CSR pattern (row r's columns c ≥ r: the transpose, equal
//! for a symmetric matrix), with every diagonal entry present, and stored once in the AMD order
//! (P·A·Pᵀ, in the triangle faer's numeric factorization reads): each factorization then copies
//! the CSR values straight into place, where faer would otherwise permute (and for the
//! supernodal factor transpose) the whole matrix first; `solve` permutes the right-hand side
//! and the solution. Fixed dofs get an identity row and column, so their solution entries
//! equal the right-hand side's (zero for a masked gradient).
//!
//! When the loaded values of `H + τI` are bitwise identical to those of the current numeric
//! factorization (a constant Hessian, as in the global step of ARAP, with the same shift), the
//! factorization is kept instead of recomputed: the solve then gives the same bits as a fresh
//! factorization would.

use super::SolveError;
use crate::sparse::CsrPattern;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::linalg::cholesky::{
    CholeskySymbolicParams, LltRef, SymbolicCholesky, SymbolicCholeskyRaw, SymmetricOrdering,
    factorize_symbolic_cholesky,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par, Side};

const NONE: usize = usize::MAX;

/// From this many columns on, the factorization is supernodal (dense blocks of columns,
/// matrix-matrix kernels); below, faer chooses by its flop-per-entry ratio, which picks the
/// simplicial (column by column) factorization for most mesh Hessians of a few thousand
/// unknowns. On those the supernodal one is faster: the linear solve of the parameterization
/// of bunnyhead (3,100 unknowns) and of the cloth on a sphere (`docs/benchmarks.md`) takes
/// about 30 % less time.
pub(crate) const SUPERNODAL_FROM_COLUMNS: usize = 1000;

/// The supernodal threshold for an n×n matrix (see [`SUPERNODAL_FROM_COLUMNS`]).
fn supernodal_threshold(n: usize) -> SupernodalThreshold {
    if n >= SUPERNODAL_FROM_COLUMNS {
        SupernodalThreshold::FORCE_SUPERNODAL
    } else {
        SupernodalThreshold::AUTO
    }
}

/// A reusable factorization of `H + τI` for Hessians sharing one pattern.
pub(crate) struct ShiftedCholesky {
    pattern: CsrPattern,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    /// For each CSC entry, the CSR position it copies (`NONE`: an added diagonal).
    source: Vec<usize>,
    /// For each column, the CSC position of its diagonal.
    diag: Vec<usize>,
    /// For each dof, the CSR position of its diagonal entry (`NONE`: not in the pattern).
    csr_diag: Vec<usize>,
    /// The dof of each row and column of the stored (AMD-ordered) matrix.
    new_to_old: Vec<usize>,
    /// The right-hand side in the stored order (scratch of `solve`).
    permuted_rhs: Vec<f64>,
    /// Which triangle is stored (the one the numeric factorization reads as is).
    side: Side,
    values: Vec<f64>,
    /// The values the factor was computed from (meaningful while `factored_ok`).
    factored: Vec<f64>,
    symbolic: SymbolicCholesky<usize>,
    /// The numeric factor's values (`symbolic.len_val()` of them).
    l_values: Vec<f64>,
    /// Whether `l_values` holds a successful factorization.
    factored_ok: bool,
    /// Scratch space of the numeric factorization and of the solves.
    scratch: MemBuffer,
    numeric_count: usize,
}

impl ShiftedCholesky {
    pub fn new(pattern: &CsrPattern) -> Result<ShiftedCholesky, SolveError> {
        let n = pattern.n;
        // The lower triangle in CSC, every diagonal entry present: (column, row, source).
        let mut entries: Vec<(usize, usize, usize)> = Vec::new();
        for r in 0..n {
            let lo = pattern.row_ptr[r];
            let cols = pattern.row(r);
            let first = cols.partition_point(|&c| (c as usize) < r);
            if cols.get(first).map(|&c| c as usize) != Some(r) {
                entries.push((r, r, NONE));
            }
            for (k, &c) in cols.iter().enumerate().skip(first) {
                entries.push((r, c as usize, lo + k));
            }
        }
        fn analysis(e: impl std::fmt::Debug) -> SolveError {
            SolveError::Factorization {
                iteration: 0,
                message: format!("symbolic analysis: {e:?}"),
            }
        }
        let params = CholeskySymbolicParams {
            supernodal_flop_ratio_threshold: supernodal_threshold(n),
            ..Default::default()
        };
        // The fill-reducing (AMD) order, from a first analysis of the matrix as given.
        let (col_ptr, row_idx) = csc_of(n, &entries);
        let sym = SymbolicSparseColMatRef::new_checked(n, n, &col_ptr, None, &row_idx);
        let ordered = factorize_symbolic_cholesky(sym, Side::Lower, SymmetricOrdering::Amd, params)
            .map_err(analysis)?;
        let (new_to_old, old_to_new): (Vec<usize>, Vec<usize>) = match ordered.perm() {
            Some(p) => {
                let (fwd, inv) = p.arrays();
                (fwd.to_vec(), inv.to_vec())
            }
            None => ((0..n).collect(), (0..n).collect()),
        };
        // The matrix stored in that order (P·A·Pᵀ, rows sorted), so that each numeric
        // factorization reads it as is instead of permuting it first. With the identity
        // ordering faer's symbolic analysis reads the upper triangle; its numeric
        // factorization reads the upper triangle (simplicial) or the lower one (supernodal),
        // and anything else it would first transpose.
        let triangle = |upper: bool| {
            let mut t: Vec<(usize, usize, usize)> = entries
                .iter()
                .map(|&(c, r, src)| {
                    let (a, b) = (old_to_new[c], old_to_new[r]);
                    if upper { (a.max(b), a.min(b), src) } else { (a.min(b), a.max(b), src) }
                })
                .collect();
            t.sort_unstable_by_key(|&(c, r, _)| (c, r));
            t
        };
        let upper = triangle(true);
        let (up_ptr, up_idx) = csc_of(n, &upper);
        let sym = SymbolicSparseColMatRef::new_checked(n, n, &up_ptr, None, &up_idx);
        let symbolic =
            factorize_symbolic_cholesky(sym, Side::Upper, SymmetricOrdering::Identity, params)
                .map_err(analysis)?;
        let side = match symbolic.raw() {
            SymbolicCholeskyRaw::Supernodal(_) => Side::Lower,
            SymbolicCholeskyRaw::Simplicial(_) => Side::Upper,
        };
        let stored = if side == Side::Upper { upper } else { triangle(false) };
        let (col_ptr, row_idx) = csc_of(n, &stored);
        let source: Vec<usize> = stored.iter().map(|e| e.2).collect();
        let diag: Vec<usize> = (0..n)
            .map(|c| {
                let rows = &row_idx[col_ptr[c]..col_ptr[c + 1]];
                col_ptr[c] + rows.partition_point(|&r| r < c)
            })
            .collect();
        // Only to be sure the stored order is the analysed one: same factor size.
        debug_assert_eq!(ordered.len_val(), symbolic.len_val());
        let req = symbolic
            .factorize_numeric_llt_scratch::<f64>(Par::Seq, Default::default())
            .or(symbolic.solve_in_place_scratch::<f64>(1, Par::Seq));
        let scratch = MemBuffer::try_new(req).map_err(analysis)?;
        let values = vec![0.0; row_idx.len()];
        let l_values = vec![0.0; symbolic.len_val()];
        // Each stored column's diagonal copies the CSR diagonal of its dof (NONE: added).
        let mut csr_diag = vec![NONE; n];
        for (c, &k) in diag.iter().enumerate() {
            csr_diag[new_to_old[c]] = source[k];
        }
        Ok(ShiftedCholesky {
            pattern: pattern.clone(),
            csr_diag,
            col_ptr,
            row_idx,
            source,
            diag,
            new_to_old,
            side,
            permuted_rhs: vec![0.0; n],
            values,
            factored: Vec::new(),
            symbolic,
            l_values,
            factored_ok: false,
            scratch,
            numeric_count: 0,
        })
    }

    /// Whether this factorization was built for `pattern`.
    pub fn matches(&self, pattern: &CsrPattern) -> bool {
        self.pattern == *pattern
    }

    /// The largest absolute diagonal entry and the smallest diagonal entry over free dofs of
    /// `hess` (values in this factorization's pattern).
    pub fn diagonal_range(&self, hess: &[f64], fixed: Option<&[bool]>) -> (f64, f64) {
        let (mut max_abs, mut min) = (0.0f64, f64::INFINITY);
        for (r, &k) in self.csr_diag.iter().enumerate() {
            if fixed.is_some_and(|f| f[r]) {
                continue;
            }
            let v = if k == NONE { 0.0 } else { hess[k] };
            max_abs = max_abs.max(v.abs());
            min = min.min(v);
        }
        (max_abs, min)
    }

    /// Whether the factorization is supernodal (else simplicial).
    #[cfg(test)]
    pub fn is_supernodal(&self) -> bool {
        matches!(
            self.symbolic.raw(),
            faer::sparse::linalg::cholesky::SymbolicCholeskyRaw::Supernodal(_)
        )
    }

    /// How many numeric factorizations this object has computed (reused ones not counted).
    pub fn numeric_factorizations(&self) -> usize {
        self.numeric_count
    }

    /// Loads `hess + shift·I` (fixed dofs: identity) and factors it, or keeps the current
    /// factorization when the loaded values equal its values bit for bit. `Ok(false)` when the
    /// matrix is not numerically positive definite.
    pub fn factor(
        &mut self,
        hess: &[f64],
        fixed: Option<&[bool]>,
        shift: f64,
    ) -> Result<bool, SolveError> {
        self.factor_with(hess, fixed, |_| shift)
    }

    /// Like [`ShiftedCholesky::factor`] with a per-dof diagonal: loads `hess + diag(add)`
    /// (Levenberg–Marquardt's `JᵀJ + μD`); `add` has one entry per dof.
    pub fn factor_diagonal(
        &mut self,
        hess: &[f64],
        fixed: Option<&[bool]>,
        add: &[f64],
    ) -> Result<bool, SolveError> {
        self.factor_with(hess, fixed, |col| add[col])
    }

    fn factor_with(
        &mut self,
        hess: &[f64],
        fixed: Option<&[bool]>,
        shift: impl Fn(usize) -> f64,
    ) -> Result<bool, SolveError> {
        for (v, &s) in self.values.iter_mut().zip(&self.source) {
            *v = if s == NONE { 0.0 } else { hess[s] };
        }
        for col in 0..self.pattern.n {
            let is_fixed = |i: usize| fixed.is_some_and(|f| f[self.new_to_old[i]]);
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
                self.values[d] += shift(self.new_to_old[col]);
            }
        }
        if self.factored_ok
            && self.factored.len() == self.values.len()
            && self.factored.iter().zip(&self.values).all(|(a, b)| a.to_bits() == b.to_bits())
        {
            return Ok(true);
        }
        let n = self.pattern.n;
        // SAFETY: `col_ptr` and `row_idx` are the arrays `new` checked with `new_checked`
        // (unchanged since).
        let sym = unsafe {
            SymbolicSparseColMatRef::new_unchecked(n, n, &self.col_ptr, None, &self.row_idx)
        };
        let mat = SparseColMatRef::new(sym, &self.values);
        self.numeric_count += 1;
        self.factored_ok = false;
        let result = self.symbolic.factorize_numeric_llt::<f64>(
            &mut self.l_values,
            mat,
            self.side,
            Default::default(),
            Par::Seq,
            MemStack::new(&mut self.scratch),
            Default::default(),
        );
        match result {
            Ok(_) => {
                self.factored_ok = true;
                self.factored.clone_from(&self.values);
                Ok(true)
            }
            Err(_) => Ok(false),
        }
    }

    /// Solves with the last successful factorization, in place.
    pub fn solve(&mut self, rhs: &mut [f64]) -> Result<(), SolveError> {
        if !self.factored_ok {
            return Err(SolveError::Factorization {
                iteration: 0,
                message: "no factorization to solve with".into(),
            });
        }
        let n = rhs.len();
        if n != self.new_to_old.len() {
            return Err(SolveError::Factorization {
                iteration: 0,
                message: format!("right-hand side of {n} entries for {} unknowns", self.new_to_old.len()),
            });
        }
        for (y, &old) in self.permuted_rhs.iter_mut().zip(&self.new_to_old) {
            *y = rhs[old];
        }
        LltRef::new(&self.symbolic, &self.l_values).solve_in_place_with_conj(
            Conj::No,
            MatMut::from_column_major_slice_mut(&mut self.permuted_rhs, n, 1),
            Par::Seq,
            MemStack::new(&mut self.scratch),
        );
        for (&y, &old) in self.permuted_rhs.iter().zip(&self.new_to_old) {
            rhs[old] = y;
        }
        Ok(())
    }
}

/// The CSC arrays of `entries` (column, row, _), sorted by column then row.
fn csc_of(n: usize, entries: &[(usize, usize, usize)]) -> (Vec<usize>, Vec<usize>) {
    let mut col_ptr = vec![0usize; n + 1];
    for &(c, _, _) in entries {
        col_ptr[c + 1] += 1;
    }
    for c in 0..n {
        col_ptr[c + 1] += col_ptr[c];
    }
    (col_ptr, entries.iter().map(|e| e.1).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 4×4 tridiagonal SPD matrix in CSR (both triangles) with its values.
    fn tridiag(diag: f64) -> (CsrPattern, Vec<f64>) {
        let n = 4u32;
        let entries: Vec<(u32, u32)> =
            (0..n).flat_map(|r| (r.saturating_sub(1)..(r + 2).min(n)).map(move |c| (r, c))).collect();
        let pattern = CsrPattern::from_entries(n as usize, entries.iter().copied());
        let mut values = vec![0.0; pattern.nnz()];
        for r in 0..n as usize {
            for (k, &c) in pattern.row(r).iter().enumerate() {
                values[pattern.row_ptr[r] + k] = if c as usize == r { diag } else { -1.0 };
            }
        }
        (pattern, values)
    }

    fn solve(c: &mut ShiftedCholesky, b: &[f64]) -> Vec<u64> {
        let mut x = b.to_vec();
        c.solve(&mut x).unwrap();
        x.iter().map(|v| v.to_bits()).collect()
    }

    /// The 5-point Laplacian of an m×m grid (CSR, both triangles) plus `shift`·I.
    fn laplacian(m: usize, shift: f64) -> (CsrPattern, Vec<f64>) {
        let n = m * m;
        let id = |i: usize, j: usize| (i * m + j) as u32;
        let mut entries = Vec::new();
        for i in 0..m {
            for j in 0..m {
                entries.push((id(i, j), id(i, j)));
                if i + 1 < m {
                    entries.push((id(i, j), id(i + 1, j)));
                    entries.push((id(i + 1, j), id(i, j)));
                }
                if j + 1 < m {
                    entries.push((id(i, j), id(i, j + 1)));
                    entries.push((id(i, j + 1), id(i, j)));
                }
            }
        }
        let pattern = CsrPattern::from_entries(n, entries.iter().copied());
        let mut values = vec![0.0; pattern.nnz()];
        for r in 0..n {
            for (k, &c) in pattern.row(r).iter().enumerate() {
                values[pattern.row_ptr[r] + k] = if c as usize == r { 4.0 + shift } else { -1.0 };
            }
        }
        (pattern, values)
    }

    /// Fixed dofs and a per-dof diagonal on both factor kinds: fixed entries of the solution
    /// equal the right-hand side's, the free ones solve the free block (residual from the CSR
    /// values, in the dofs' own numbering, whatever order the factor stores).
    #[test]
    fn fixed_dofs_and_diagonals_solve_the_free_block() {
        for m in [9, 36] {
            let (pattern, h) = laplacian(m, 0.0);
            let n = m * m;
            let fixed: Vec<bool> = (0..n).map(|i| i % 7 == 3 || i == n - 1).collect();
            let add: Vec<f64> = (0..n).map(|i| 0.01 * (1 + i % 5) as f64).collect();
            let mut c = ShiftedCholesky::new(&pattern).unwrap();
            assert!(c.factor_diagonal(&h, Some(&fixed), &add).unwrap());
            let b: Vec<f64> = (0..n).map(|i| ((i * 31) % 11) as f64 - 5.0).collect();
            let mut x = b.clone();
            c.solve(&mut x).unwrap();
            let mut worst = 0.0f64;
            for r in 0..n {
                if fixed[r] {
                    assert_eq!(x[r], b[r], "fixed dof {r}");
                    continue;
                }
                let mut ax = add[r] * x[r];
                for (k, &col) in pattern.row(r).iter().enumerate() {
                    if !fixed[col as usize] {
                        ax += h[pattern.row_ptr[r] + k] * x[col as usize];
                    }
                }
                worst = worst.max((ax - b[r]).abs());
            }
            assert!(worst < 1e-9, "{n} unknowns: residual {worst}");
        }
    }

    #[test]
    fn large_matrices_factor_supernodally_and_solve_to_rounding() {
        for (m, supernodal) in [(10, false), (40, true)] {
            let (pattern, h) = laplacian(m, 0.0);
            let n = m * m;
            let mut c = ShiftedCholesky::new(&pattern).unwrap();
            assert_eq!(c.is_supernodal(), supernodal, "{n} columns");
            assert!(c.factor(&h, None, 1e-2).unwrap());
            let b: Vec<f64> = (0..n).map(|i| ((i * 7919) % 13) as f64 - 6.0).collect();
            let mut x = b.clone();
            c.solve(&mut x).unwrap();
            // Residual of (H + 1e-2 I) x = b, computed from the CSR values.
            let mut worst = 0.0f64;
            for r in 0..n {
                let mut ax = 1e-2 * x[r];
                for (k, &col) in pattern.row(r).iter().enumerate() {
                    ax += h[pattern.row_ptr[r] + k] * x[col as usize];
                }
                worst = worst.max((ax - b[r]).abs());
            }
            assert!(worst < 1e-9, "{n} columns: residual {worst}");
            // An indefinite matrix (shift below −λ_min ≈ 0) does not factor.
            assert!(!c.factor(&h, None, -0.5).unwrap());
            assert!(c.solve(&mut x).is_err());
        }
    }

    #[test]
    fn identical_values_reuse_the_factorization_with_the_same_bits() {
        let (pattern, h) = tridiag(3.0);
        let (_, h2) = tridiag(5.0);
        let b = [1.0, -2.0, 0.5, 3.0];
        let mut c = ShiftedCholesky::new(&pattern).unwrap();
        assert!(c.factor(&h, None, 0.0).unwrap());
        let first = solve(&mut c, &b);
        assert_eq!(c.numeric_factorizations(), 1);
        assert!(c.factor(&h, None, 0.0).unwrap());
        assert_eq!(c.numeric_factorizations(), 1, "same values: reused");
        assert_eq!(solve(&mut c, &b), first);
        // Another shift, other values, or a fixed dof change the loaded values: refactored.
        assert!(c.factor(&h, None, 1e-3).unwrap());
        assert_eq!(c.numeric_factorizations(), 2);
        assert!(c.factor(&h2, None, 0.0).unwrap());
        assert_eq!(c.numeric_factorizations(), 3);
        let fixed = [false, true, false, false];
        assert!(c.factor(&h2, Some(&fixed), 0.0).unwrap());
        assert_eq!(c.numeric_factorizations(), 4);
        // Back to the first values: a fresh factorization, equal to the first one's bits.
        assert!(c.factor(&h, None, 0.0).unwrap());
        assert_eq!(c.numeric_factorizations(), 5);
        assert_eq!(solve(&mut c, &b), first);
        // A failed factorization is not kept: the same values are tried (and fail) again.
        let (_, bad) = tridiag(-1.0);
        assert!(!c.factor(&bad, None, 0.0).unwrap());
        assert!(!c.factor(&bad, None, 0.0).unwrap());
        assert_eq!(c.numeric_factorizations(), 7);
        assert!(c.solve(&mut b.to_vec()).is_err());
    }
}
