//! Small dense linear algebra.
pub mod jacobi_lanes;
mod jacobi_avx512;
mod lane_ops;
mod lane_batch;
pub mod psd_test;
pub mod sym_eigen;
pub mod differences;
mod differences_lanes;
mod one_negative;
mod full_lanes;
pub mod tridiag_ql;
pub mod translation;

/// A fixed-seed generator of test values in [−1, 1) (an LCG), shared by the unit tests of the
/// lane code.
#[cfg(test)]
pub(crate) fn test_lcg(state: &mut u64) -> f64 {
    *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    ((*state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
}
