//! Sparse Hessian structure and assembly, pair terms, and the Matrix Market file format
//! (arrays are [`crate::npy`]).
//!
//! # Public API
//!
//! - [`ElementList`]: elements as index tuples (fixed arity or ragged): `fixed`, `ragged`,
//!   `from_slices`, `len`, `get`, `offset`, `indices`, `iter`, `arity`.
//! - [`breadth_first_rank`], [`locality_order`], `ElementList::permuted`: a locality order of
//!   elements for the evaluation schedule (see [`locality`]).
//! - [`Field`] `{ offset, dim }` and [`element_dofs`]`(elements, fields) -> ElementList`: local
//!   dofs per element, field-major, then vertex, then component; dof = `offset + dim·v + c`.
//! - [`CsrPattern`] `{ n, row_ptr, col_idx }` (`nnz`, `row`, `find`, `from_entries`, `spmv`).
//! - [`HessianPattern::build`]`(ndofs, &[ElementList]) -> Result<HessianPattern, SparseError>`:
//!   the CSR pattern of the sum of the terms, computed once, and per term a [`TermSlots`]
//!   (`dofs()`, `slots()`: each element's k² CSR positions, row-major, `coloring()`).
//! - [`assemble`]`(term, ndofs, nnz, &kernel, Outputs { grad, hess }, parallel) -> Result<f64, _>`:
//!   runs an [`ElementKernel`] (any `Fn(usize, &[u32], &mut [f64], &mut [f64]) -> f64 + Sync`)
//!   over a term, adds gradient and Hessian values (values only: the pattern is fixed), returns
//!   the energy. Race-free and bit-identical on every run and thread count (see [`assembly`]'s
//!   docs: elements are coloured, colours processed in a fixed order).
//! - [`scatter_blocks`], [`scatter_gradients`]: add precomputed per-element blocks/gradients.
//! - [`PairPattern`]: a static pattern plus incrementally maintained entries of dynamic pairs
//!   (`add_pair`, `remove_pair`, `pair`, `assemble`, `to_csr`, `merge_values`, `num_values`).
//! - [`write_matrix_market`] / [`write_matrix_market_rect`]: `coordinate real general` output.

pub mod assembly;
pub mod coloring;
pub mod elements;
pub mod locality;
pub mod mtx;
pub mod pairs;
pub mod pattern;

pub use assembly::{ElementKernel, Outputs, assemble, scatter_blocks, scatter_gradients};
pub use coloring::Coloring;
pub use elements::ElementList;
pub use locality::{breadth_first_rank, locality_order};
pub use mtx::{write_matrix_market, write_matrix_market_rect};
pub use pairs::{PairId, PairPattern};
pub use pattern::{CsrPattern, Field, HessianPattern, TermSlots, element_dofs};

use std::fmt;

/// Errors of pattern construction and assembly (wrong sizes, out-of-range indices).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SparseError {
    /// A term references a dof beyond the dof count.
    DofOutOfRange {
        term: usize,
        dof: usize,
        ndofs: usize,
    },
    /// A buffer has the wrong length.
    Length {
        what: String,
        expected: usize,
        found: usize,
    },
    /// The pattern does not fit 32-bit indices.
    TooLarge { what: String },
    /// A pair is malformed or unknown.
    BadPair { message: String },
}

impl fmt::Display for SparseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SparseError::DofOutOfRange { term, dof, ndofs } => {
                write!(f, "term {term} uses dof {dof}, but there are {ndofs} dofs")
            }
            SparseError::Length {
                what,
                expected,
                found,
            } => {
                write!(f, "{what}: expected length {expected}, found {found}")
            }
            SparseError::TooLarge { what } => write!(f, "sparse pattern too large: {what}"),
            SparseError::BadPair { message } => write!(f, "pair: {message}"),
        }
    }
}

impl std::error::Error for SparseError {}
