//! Small dense linear algebra.
pub mod jacobi_lanes;
pub mod psd_test;
pub mod sym_eigen;
pub mod tridiag_ql;
pub mod translation;
