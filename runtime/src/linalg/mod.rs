//! Small dense linear algebra.
pub mod jacobi_lanes;
mod jacobi_avx512;
mod lane_ops;
mod lane_batch;
pub mod psd_test;
pub mod sym_eigen;
pub mod differences;
mod differences_lanes;
mod full_lanes;
pub mod tridiag_ql;
pub mod translation;
