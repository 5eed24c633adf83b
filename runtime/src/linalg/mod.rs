//! Small dense linear algebra.
pub mod sym_eigen;
