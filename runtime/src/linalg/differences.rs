//! PSD projection of element Hessians computed in difference coordinates.
//!
//! A term that reads its vertex dofs only through differences of vertex points is a function
//! Ẽ(y) of y = T·x, y_v = x_v − x_0 for the vertices v = 1…n−1 (d components each,
//! vertex-major). Its Hessian is H = Tᵀ X T with X = ∇²Ẽ, the (n−1)d × (n−1)d block of H in
//! the rows and columns of vertices 1…n−1: the Hessian kernels of such terms seed only those
//! vertices (`compiler/src/energy/derive.rs`), so that block is exactly what they compute and
//! the rows and columns of vertex 0 follow from it. The projection then works on X alone:
//!
//! * **Test.** T is onto, so H is PSD exactly when X is: the pivoted-LDLᵀ test of
//!   [`super::psd_test`] runs on X (m = (n−1)d rows, 3 for a spring of 3-vectors, 4 for a face
//!   of 2-vectors, 6 for a face of 3-vectors, 9 for a diamond). A block that passes is left
//!   bit for bit, as [`super::translation`] leaves it.
//! * **Decomposition.** With Q the Helmert contrasts of [`super::translation`] (an orthonormal
//!   basis of the translation complement), T·Q = G is invertible and lower triangular per
//!   component (G_vj = 0 for v < j, −(j+2)·a_j for v = j, −a_j for v > j, with
//!   a_j = 1/√((j+1)(j+2))). The eigen-decomposition of R = QᵀHQ = GᵀXG gives the nonzero
//!   spectrum of H, and the clamp λ ← max(λ, 0) of H is Tᵀ X₊ T with
//!   X₊ = X − Σ_{λ<0} λ·z zᵀ = Σ_{λ>0} λ·z zᵀ, z = G⁻ᵀw (w the eigenvector of λ): from
//!   T = G Qᵀ (T kills the translations), Tᵀ z = Q w. The sum with fewer terms is formed (the
//!   second when fewer than half the eigenvalues are clearly positive, `sum_positive_part`). R is formed and z solved by
//!   suffix sums, in O(m²) and O(m).
//! * **Result.** A projected block is written as Tᵀ X₊ T: X₊ in the rows and columns of
//!   vertices 1…, their negated sums per component in those of vertex 0. Its translations are
//!   a null space up to the rounding of those sums, as in the blocks the kernels write; the
//!   negative eigenvalues of that rounding (the translation part T̂ᵀBT̂) are clamped as
//!   [`super::translation`] clamps them (one block at a time), or the part is lifted by its
//!   Gershgorin deficit (in the lanes, where a d×d decomposition per block cost about a tenth
//!   of a parameterization's projected Hessian); the two agree to rounding.
//!
//! For the shapes of faces, edges and diamonds (m ≤ 6) the batched projection
//! ([`project_psd_differences_many`]) runs `differences_lanes`: a cheaper test
//! (unpivoted LDLᵀ of X, the pivoted test where a pivot falls within its tolerance), then
//! everything after it [`LANES`](super::jacobi_lanes::LANES) blocks at a time in SIMD lanes;
//! one block at a time ([`project_psd_differences`]) R is decomposed by tridiagonal QL (as in
//! [`super::translation`]). The two agree to rounding. Blocks the
//! difference path cannot take (non-finite X, a shape outside [`MAX_K`], a decomposition
//! that does not converge) take [`project_psd_translation`], which tests the translation
//! structure itself. Everything is per block on stack arrays: deterministic (a block's result
//! does not depend on its neighbours in the batch) and allocation-free.
//!
//! **Contract.** The caller guarantees that the block is the Hessian of a function of the
//! differences (only the rows and columns of vertices 1… are read); for any other block the
//! result is the projection of Tᵀ X T, not of the block.

use super::differences_lanes::project_many_lanes;
use super::psd_test::psd_check;
use super::sym_eigen::PsdWork;
use super::translation::{MAX_K, helmert, project_psd_translation, translation_negatives};
use super::tridiag_ql::{eigen_rows, scaled_symmetric};

/// The eigenvalue-clamped projection (clamp at 0) of a k×k row-major block over `nverts`
/// vertices of k / `nverts` components (vertex-major) that is the Hessian of a function of
/// the differences x_v − x_0 (module docs). Returns whether the block was changed; a block
/// that needs no projection is left bit for bit. Shapes the difference path does not take
/// (`nverts` < 2 or not dividing k, k > [`MAX_K`]) go to [`project_psd_translation`].
///
/// # Panics
/// If `block.len() != k*k` (a programming error).
pub fn project_psd_differences(block: &mut [f64], k: usize, nverts: usize, work: &mut PsdWork) -> bool {
    assert_eq!(block.len(), k * k, "project_psd_differences: matrix size");
    let r = match (k, nverts) {
        (6, 2) => one::<6, 3>(block, 6, 2),
        (6, 3) => one::<6, 4>(block, 6, 3),
        (9, 3) => one::<9, 6>(block, 9, 3),
        (8, 4) => one::<8, 6>(block, 8, 4),
        (12, 4) => one::<12, 9>(block, 12, 4),
        _ if nverts >= 2 && k.is_multiple_of(nverts) && k <= MAX_K => {
            one::<MAX_K, MAX_K>(block, k, nverts)
        }
        _ => None,
    };
    match r {
        Some(changed) => changed,
        None => project_psd_translation(block, k, nverts, 0.0, work),
    }
}

/// [`project_psd_differences`] on every k×k block of `blocks` (consecutive, row-major);
/// returns how many were changed. For the shapes with m = k − k/`nverts` ≤ 6 of faces,
/// edges and diamonds the blocks are tested one by one and projected
/// [`LANES`](super::jacobi_lanes::LANES) at a time (`differences_lanes`).
///
/// # Panics
/// If `blocks.len()` is not a multiple of `k*k` (a programming error).
pub fn project_psd_differences_many(
    blocks: &mut [f64],
    k: usize,
    nverts: usize,
    work: &mut PsdWork,
) -> usize {
    many_differences::<false>(blocks, k, nverts, work)
}

/// [`project_psd_differences_many`] for callers that read the **upper triangles** of the
/// projected blocks only (entries (i, j) with j ≥ i, as an upper-triangle assembly does):
/// blocks projected in lanes get those entries only, their lower triangles keep the input
/// values. (Writing a lane's block back into its row-major place is a transposition, one
/// scalar store per entry; the upper triangle alone is 21 of a 6×6 block's 36.)
///
/// # Panics
/// As [`project_psd_differences_many`].
pub fn project_psd_differences_many_upper(
    blocks: &mut [f64],
    k: usize,
    nverts: usize,
    work: &mut PsdWork,
) -> usize {
    many_differences::<true>(blocks, k, nverts, work)
}

fn many_differences<const UPPER: bool>(
    blocks: &mut [f64],
    k: usize,
    nverts: usize,
    work: &mut PsdWork,
) -> usize {
    assert!(
        k > 0 && blocks.len().is_multiple_of(k * k),
        "project_psd_differences_many: matrix size"
    );
    match (k, nverts) {
        (6, 2) => project_many_lanes::<6, 3, 2, UPPER>(blocks, work),
        (6, 3) => project_many_lanes::<6, 4, 3, UPPER>(blocks, work),
        (9, 3) => project_many_lanes::<9, 6, 3, UPPER>(blocks, work),
        (8, 4) => project_many_lanes::<8, 6, 4, UPPER>(blocks, work),
        _ => blocks
            .chunks_exact_mut(k * k)
            .map(|b| usize::from(project_psd_differences(b, k, nverts, work)))
            .sum(),
    }
}

/// One block: [`prepare`], tridiagonal QL of R, [`finish`]. `None` sends the block (untouched)
/// to [`project_psd_translation`]. Stack arrays are K×K and M×M (K ≥ k, M ≥ m).
#[inline(always)]
fn one<const K: usize, const M: usize>(block: &mut [f64], k: usize, n: usize) -> Option<bool> {
    let (x, r, sc) = match prepare::<K, M>(block, k, n) {
        Prep::Done => return Some(false),
        Prep::Fallback => return None,
        Prep::Decompose { x, r, sc } => (x, r, sc),
    };
    let m = k - k / n;
    let (ev, w) = eigen_rows::<M>(&r, m)?;
    Some(finish::<K, M>(block, k, n, &x, sc, &ev, &w, m))
}

/// What [`prepare`] found for a block.
enum Prep<const M: usize> {
    /// X is PSD: the block stays as it is.
    Done,
    /// The block takes [`project_psd_translation`] (X not finite); it is untouched.
    Fallback,
    /// `x`: the symmetric part of X; `r`: R = GᵀXG (symmetric, both triangles) scaled by the
    /// power of two `sc`.
    Decompose { x: [[f64; M]; M], r: [[f64; M]; M], sc: f64 },
}

/// The test on X and, when X is not PSD, R = GᵀXG scaled by a power of two.
#[inline(always)]
#[allow(clippy::needless_range_loop)]
fn prepare<const K: usize, const M: usize>(block: &[f64], k: usize, n: usize) -> Prep<M> {
    let d = k / n;
    let m = k - d;
    let mut x = [[0.0f64; M]; M];
    let mut finite = true;
    for i in 0..m {
        for j in 0..m {
            let v = 0.5 * (block[(d + i) * k + d + j] + block[(d + j) * k + d + i]);
            finite &= v.is_finite();
            x[i][j] = v;
        }
    }
    if !finite {
        return Prep::Fallback;
    }
    let mut flat = [[0.0f64; M]; M];
    let xf = flat.as_flattened_mut();
    for i in 0..m {
        xf[i * m..i * m + m].copy_from_slice(&x[i][..m]);
    }
    let mut scratch = [[0.0f64; M]; M];
    if psd_check(&xf[..m * m], m, 0.0, scratch.as_flattened_mut()) {
        return Prep::Done;
    }
    let a = helmert(n);
    let nv = n - 1;
    // C = X·G, then R = Gᵀ·C, each by suffix sums over the vertices of one component:
    // (X·G)_{i,(j,c)} = −a_j·((j+1)·X_{i,(j,c)} + Σ_{v≥j} X_{i,(v,c)}).
    let mut c = [[0.0f64; M]; M];
    for i in 0..m {
        for comp in 0..d {
            let mut suf = 0.0;
            for j in (0..nv).rev() {
                let xij = x[i][j * d + comp];
                suf += xij;
                c[i][j * d + comp] = -a[j] * ((j + 1) as f64 * xij + suf);
            }
        }
    }
    let mut r = [[0.0f64; M]; M];
    for col in 0..m {
        for comp in 0..d {
            let mut suf = 0.0;
            for j in (0..nv).rev() {
                let cj = c[j * d + comp][col];
                suf += cj;
                r[j * d + comp][col] = -a[j] * ((j + 1) as f64 * cj + suf);
            }
        }
    }
    let Some((rs, sc)) = scaled_symmetric::<M>(&r, m) else {
        return Prep::Fallback;
    };
    Prep::Decompose { x, r: rs, sc }
}

/// How many of the eigenvalues `ev` are negative, and how many are clearly positive: above
/// 64·m·ε times the largest magnitude, the rounding level of an eigenvalue that is zero in
/// exact arithmetic.
pub(crate) fn sign_counts(ev: &[f64]) -> (usize, usize) {
    let largest = ev.iter().fold(0.0f64, |acc, l| acc.max(l.abs()));
    let tol = 64.0 * ev.len() as f64 * f64::EPSILON * largest;
    let nneg = ev.iter().filter(|&&l| l < 0.0).count();
    let npos = ev.iter().filter(|&&l| l > tol).count();
    (nneg, npos)
}

/// Whether X₊ is formed as Σ_{λ>0} λ·z zᵀ rather than X − Σ_{λ<0} λ·z zᵀ: when fewer than
/// half of the m eigenvalues are clearly positive ([`sign_counts`]). That is the sum with
/// fewer terms, and a block whose eigenvalues are all negative or zero (a spring compressed
/// along its only stiff direction) becomes 0 or the PSD sum of its rounding-level positive
/// terms, instead of the rounding left by X minus its own negative part, which has either
/// sign at its own scale.
pub(crate) fn sum_positive_part(npos: usize, m: usize) -> bool {
    2 * npos < m
}

/// After the decomposition of R (eigenvalues `ev[..m]` scaled by `sc`, `w[j][..m]` the
/// eigenvector of `ev[j]`): X₊ = X − Σ_{λ<0} λ·z zᵀ with Gᵀz = w, written as Tᵀ X₊ T.
/// Returns whether the block changed.
#[inline(always)]
#[allow(clippy::needless_range_loop, clippy::too_many_arguments)]
fn finish<const K: usize, const M: usize>(
    block: &mut [f64],
    k: usize,
    n: usize,
    x: &[[f64; M]; M],
    sc: f64,
    ev: &[f64; M],
    w: &[[f64; M]; M],
    m: usize,
) -> bool {
    let d = k / n;
    let nv = n - 1;
    let a = helmert(n);
    // X₊ = X − Σ_{λ<0} λ·z zᵀ, or Σ_{λ>0} λ·z zᵀ ([`sum_positive_part`]).
    let mut unscaled = [0.0f64; M];
    for col in 0..m {
        unscaled[col] = ev[col] / sc;
    }
    let (nneg, npos) = sign_counts(&unscaled[..m]);
    if nneg == 0 {
        return false;
    }
    let from_positive = sum_positive_part(npos, m);
    let mut lam = [0.0f64; M];
    let mut z = [[0.0f64; M]; M];
    let mut used = 0;
    for col in 0..m {
        let l = ev[col] / sc;
        let take = if from_positive { l > 0.0 } else { l < 0.0 };
        if !take {
            continue;
        }
        lam[used] = if from_positive { l } else { -l };
        let w = &w[col];
        let zo = &mut z[used];
        for comp in 0..d {
            // (Gᵀz)_j = −a_j·((j+2)·z_j + Σ_{v>j} z_v) = w_j, from the last vertex back.
            let mut suf = 0.0;
            for j in (0..nv).rev() {
                let zj = (-w[j * d + comp] / a[j] - suf) / (j + 2) as f64;
                zo[j * d + comp] = zj;
                suf += zj;
            }
        }
        used += 1;
    }
    let mut xp = [[0.0f64; M]; M];
    for i in 0..m {
        for j in i..m {
            let mut acc = if from_positive { 0.0 } else { x[i][j] };
            for q in 0..used {
                acc += lam[q] * z[q][i] * z[q][j];
            }
            xp[i][j] = acc;
            xp[j][i] = acc;
        }
    }
    // Tᵀ X₊ T: X₊ for vertices 1…, negated sums over the vertices for vertex 0.
    let mut colsum = [[0.0f64; M]; M];
    for i in 0..m {
        for c in 0..d {
            let mut s = 0.0;
            for v in 0..nv {
                s += xp[v * d + c][i];
            }
            colsum[c][i] = s;
        }
    }
    for i in 0..m {
        for j in 0..m {
            block[(d + i) * k + d + j] = xp[i][j];
        }
        for c in 0..d {
            block[c * k + d + i] = -colsum[c][i];
            block[(d + i) * k + c] = -colsum[c][i];
        }
    }
    for c in 0..d {
        for c2 in c..d {
            let mut s = 0.0;
            for v in 0..nv {
                s += colsum[c][v * d + c2];
            }
            block[c * k + c2] = s;
            block[c2 * k + c] = s;
        }
    }
    // The translation part of Tᵀ X₊ T is the rounding of those sums, of either sign; its
    // negative eigenvalues are clamped as the other projections clamp them, so that a global
    // Hessian singular along the translations (no fixed vertex) is not made indefinite.
    let (mut tl, mut tu) = ([0.0f64; K], [[0.0f64; K]; K]);
    let nt = translation_negatives::<K>(|i, j| block[i * k + j], k, n, &mut tl, &mut tu, 0);
    if let Some(nt @ 1..) = nt {
        for i in 0..k {
            for j in i..k {
                let mut acc = block[i * k + j];
                for q in 0..nt {
                    acc -= tl[q] * tu[q][i] * tu[q][j];
                }
                block[i * k + j] = acc;
                block[j * k + i] = acc;
            }
        }
    }
    true
}
