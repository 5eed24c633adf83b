//! Matrix Market output (`%%MatrixMarket matrix coordinate real general`) for CSR matrices.
//!
//! Entries are written row by row in CSR order with 1-based indices; values in Rust's shortest
//! round-trip form, so scipy.io.mmread reads back exactly the same f64 values.

use super::CsrPattern;
use std::io::Write;

/// Writes an `n × n` CSR matrix (all pattern entries, zeros included).
pub fn write_matrix_market<W: Write>(
    pattern: &CsrPattern,
    values: &[f64],
    w: W,
) -> std::io::Result<()> {
    write_matrix_market_rect(
        pattern.n,
        pattern.n,
        &pattern.row_ptr,
        &pattern.col_idx,
        values,
        w,
    )
}

/// Writes a general `nrows × ncols` CSR matrix (for Jacobians).
pub fn write_matrix_market_rect<W: Write>(
    nrows: usize,
    ncols: usize,
    row_ptr: &[usize],
    col_idx: &[u32],
    values: &[f64],
    mut w: W,
) -> std::io::Result<()> {
    let bad = |m: &str| std::io::Error::new(std::io::ErrorKind::InvalidInput, m.to_string());
    if row_ptr.len() != nrows + 1
        || values.len() != col_idx.len()
        || row_ptr[nrows] != col_idx.len()
    {
        return Err(bad("CSR arrays of inconsistent lengths"));
    }
    writeln!(w, "%%MatrixMarket matrix coordinate real general")?;
    writeln!(w, "{nrows} {ncols} {}", col_idx.len())?;
    for r in 0..nrows {
        for k in row_ptr[r]..row_ptr[r + 1] {
            writeln!(w, "{} {} {:e}", r + 1, col_idx[k] as usize + 1, values[k])?;
        }
    }
    Ok(())
}
