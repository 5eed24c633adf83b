//! Sparse Hessian/Jacobian structure.
pub mod elements;
pub use elements::ElementList;
