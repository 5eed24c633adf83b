//! The batched projection of [`super::differences`] with every step after the test done on
//! [`LANES`] blocks at once, one block per SIMD lane.
//!
//! Per block, on its own: X (the symmetric part of the rows and columns of vertices 1…) is
//! read and tested. The test is an unpivoted LDLᵀ of X with the tolerance of
//! [`super::psd_test`] (`64·m·ε·max|X_ii|`):
//!
//! * every pivot above the tolerance: X is positive definite, the block is left bit for bit;
//! * a remaining diagonal entry below −tolerance while all earlier pivots were above it: X is
//!   not PSD, the block waits in a lane for the decomposition;
//! * a pivot within the tolerance (a rank-deficient X, such as that of a spring at rest):
//!   the pivoted test of [`super::psd_test`] decides, as on the one-block path.
//!
//! Up to rounding the decision is the pivoted test's: an X that is PSD within the tolerance
//! but whose unpivoted elimination amplifies rounding below −tolerance is decomposed, and its
//! eigenvalues (all ≥ 0 up to rounding) then change it by at most the rounding of the clamp.
//! (The pivoted test on every block costs about a tenth of a parameterization's projected
//! Hessian: its pivots are data-dependent branches.)
//!
//! Per batch of [`LANES`] waiting blocks, lane by lane in vector instructions (chosen at run
//! time: AVX-512 registers through [`super::lane_ops`] with the sweeps of
//! [`super::jacobi_avx512`], else AVX or portable code): R = GᵀXG by suffix sums, its
//! power-of-two scale, for a 4×4 R with one negative eigenvalue that eigenpair alone
//! ([`super::one_negative`]; the lanes that fail its checks, and every R of another size,
//! take cyclic Jacobi), X₊ from the side
//! with fewer terms, the block Tᵀ X₊ T, and its translation part (rounding of either sign)
//! lifted to PSD by its Gershgorin deficit ([`clamp_translation_part`]), as
//! [`super::differences`] describes them. Lanes
//! are independent bit for bit: a block's result does not depend on the others in its batch.
//! A lane whose R is zero or not finite, or whose decomposition does not converge, takes
//! [`project_psd_translation`] (its block untouched until then).

// Index loops are the natural form of these small matrix computations; the negated
// comparisons make NaN fail the tests (as in `psd_test`).
#![allow(clippy::needless_range_loop, clippy::neg_cmp_op_on_partial_ord)]

use super::jacobi_lanes::{LANES, LaneMatrix, Wide, jacobi_lanes_generic, lane_zeros};
#[cfg(target_arch = "x86_64")]
use super::lane_ops::Zmm2;
use super::lane_ops::Lanes;
use super::one_negative::smallest_pair;
use super::psd_test::{psd_check, psd_tolerance};
use super::sym_eigen::PsdWork;
use super::translation::{helmert, project_psd_translation};

/// What the test found for a block.
enum Test {
    /// X is positive definite (or PSD by the pivoted test): the block stays as it is.
    Keep,
    /// X is not PSD: decompose.
    Decompose,
    /// X has a non-finite entry: the translation path decides.
    Fallback,
}

/// The test of the module docs on the symmetric M×M `x`.
#[inline(always)]
fn test<const M: usize>(x: &[[f64; M]; M]) -> Test {
    let mut scale = 0.0f64;
    for i in 0..M {
        scale = scale.max(x[i][i].abs());
    }
    let tol = psd_tolerance(M, scale);
    let mut a = *x;
    for s in 0..M {
        let d = a[s][s];
        for i in s..M {
            if !(a[i][i] >= -tol) {
                return Test::Decompose;
            }
        }
        if !(d > tol) {
            // A pivot within the tolerance: the pivoted test decides.
            return if pivoted_test::<M>(x) { Test::Keep } else { Test::Decompose };
        }
        let inv = 1.0 / d;
        for i in (s + 1)..M {
            let l = a[i][s] * inv;
            for j in (s + 1)..M {
                a[i][j] -= l * a[s][j];
            }
        }
    }
    Test::Keep
}

/// The pivoted LDLᵀ test of [`super::psd_test`] on the symmetric `x` (inlined with M fixed).
#[inline(always)]
fn pivoted_test<const M: usize>(x: &[[f64; M]; M]) -> bool {
    let mut scratch = [[0.0f64; M]; M];
    psd_check(x.as_flattened(), M, 0.0, scratch.as_flattened_mut())
}

/// The batched projection of K×K blocks over N vertices (M = K − K/N); returns how many
/// blocks changed. With `UPPER`, a block projected in lanes gets its upper triangle only
/// (entries (i, j) with j ≥ i; the lower keeps the input): for callers that read no other.
pub(crate) fn project_many_lanes<const K: usize, const M: usize, const N: usize, const UPPER: bool>(
    blocks: &mut [f64],
    work: &mut PsdWork,
) -> usize {
    debug_assert_eq!(M, K - K / N);
    let kk = K * K;
    let d = K / N;
    let mut changed = 0;
    let mut lanes: LaneMatrix<M> = lane_zeros::<M>();
    // The rebuilt blocks of a batch (written by every flush that changes a block before it
    // is read, so it is not cleared between batches).
    let mut out = [[Wide::ZERO; K]; K];
    let mut waiting = [0usize; LANES];
    let mut filled = 0;
    let mut at = 0;
    while at < blocks.len() {
        let block = &blocks[at..at + kk];
        let mut x = [[0.0f64; M]; M];
        let mut finite = true;
        for i in 0..M {
            for j in 0..M {
                let v = 0.5 * (block[(d + i) * K + d + j] + block[(d + j) * K + d + i]);
                finite &= v.is_finite();
                x[i][j] = v;
            }
        }
        let t = if finite { test::<M>(&x) } else { Test::Fallback };
        match t {
            Test::Keep => {}
            Test::Fallback => {
                changed += usize::from(project_psd_translation(&mut blocks[at..at + kk], K, N, 0.0, work));
            }
            Test::Decompose => {
                for i in 0..M {
                    for j in 0..M {
                        lanes[i][j].0[filled] = x[i][j];
                    }
                }
                waiting[filled] = at;
                filled += 1;
                if filled == LANES {
                    changed += flush::<K, M, N, UPPER>(blocks, &lanes, &mut out, &waiting[..filled], work);
                    filled = 0;
                }
            }
        }
        at += kk;
    }
    if filled > 0 {
        // The lanes after the last block still hold earlier batches' matrices: zeros instead,
        // so that they cost no sweep (each lane's result is its own either way).
        for row in lanes.iter_mut() {
            for w in row.iter_mut() {
                w.0[filled..].fill(0.0);
            }
        }
        changed += flush::<K, M, N, UPPER>(blocks, &lanes, &mut out, &waiting[..filled], work);
    }
    changed
}

/// Projects the waiting blocks (lane i: X of the block at offset `waiting[i]`; the lanes
/// after them are ignored) through `out`; with `UPPER`, writes the upper triangles only.
fn flush<const K: usize, const M: usize, const N: usize, const UPPER: bool>(
    blocks: &mut [f64],
    x: &LaneMatrix<M>,
    out: &mut [[Wide; K]; K],
    waiting: &[usize],
    work: &mut PsdWork,
) -> usize {
    let (ok, write) = lanes_dispatch::<K, M, N>(x, out);
    let mut changed = 0;
    for (lane, &at) in waiting.iter().enumerate() {
        let block = &mut blocks[at..at + K * K];
        if !ok[lane] {
            changed += usize::from(project_psd_translation(block, K, N, 0.0, work));
        } else if write[lane] {
            for i in 0..K {
                for j in if UPPER { i } else { 0 }..K {
                    block[i * K + j] = out[i][j].0[lane];
                }
            }
            changed += 1;
        }
    }
    changed
}

/// Runs [`lanes_body`] with AVX-512 or AVX where the processor has them.
fn lanes_dispatch<const K: usize, const M: usize, const N: usize>(
    x: &LaneMatrix<M>,
    out: &mut [[Wide; K]; K],
) -> ([bool; LANES], [bool; LANES]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the processor supports AVX-512F (checked just above).
            return unsafe { lanes_avx512::<K, M, N>(x, out) };
        }
        if std::arch::is_x86_feature_detected!("avx") {
            // SAFETY: the processor supports AVX (checked just above).
            return unsafe { lanes_avx::<K, M, N>(x, out) };
        }
    }
    lanes_body::<Wide, K, M, N>(x, out, jacobi_lanes_generic::<M>)
}

/// The body on AVX-512 registers ([`Zmm2`]), with the AVX-512 sweeps where they cover M
/// ([`super::jacobi_avx512`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn lanes_avx512<const K: usize, const M: usize, const N: usize>(
    x: &LaneMatrix<M>,
    out: &mut [[Wide; K]; K],
) -> ([bool; LANES], [bool; LANES]) {
    let decompose = |a: &mut LaneMatrix<M>, v: &mut LaneMatrix<M>| {
        // SAFETY: this function runs on AVX-512F processors only.
        unsafe { super::jacobi_avx512::jacobi_small::<M>(a, v) }.unwrap_or_else(|| jacobi_lanes_generic::<M>(a, v))
    };
    lanes_body::<Zmm2, K, M, N>(x, out, decompose)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
fn lanes_avx<const K: usize, const M: usize, const N: usize>(
    x: &LaneMatrix<M>,
    out: &mut [[Wide; K]; K],
) -> ([bool; LANES], [bool; LANES]) {
    lanes_body::<Wide, K, M, N>(x, out, jacobi_lanes_generic::<M>)
}

/// `m` loaded into lane values.
#[inline(always)]
fn load<L: Lanes, const M: usize>(m: &LaneMatrix<M>) -> [[L; M]; M] {
    // Loops, not `std::array::from_fn`: its closures were left as calls.
    let mut out = [[L::splat(0.0); M]; M];
    for i in 0..M {
        for j in 0..M {
            out[i][j] = L::load(&m[i][j]);
        }
    }
    out
}

/// The decomposition and the rebuilt blocks of every lane, written once over [`Lanes`] (the
/// portable [`Wide`] or AVX-512 registers: same bits, except in the fused rotations of the
/// AVX-512 sweeps, [`super::lane_ops`]). Returns, per lane, whether it went
/// through (else the lane takes the fallback) and whether its block changed (then `out`
/// holds it, both triangles). No fused multiply-add is formed here.
#[inline(always)]
fn lanes_body<L: Lanes, const K: usize, const M: usize, const N: usize>(
    xw: &LaneMatrix<M>,
    out: &mut [[Wide; K]; K],
    decompose: impl Fn(&mut LaneMatrix<M>, &mut LaneMatrix<M>) -> [bool; LANES],
) -> ([bool; LANES], [bool; LANES]) {
    let d = K / N;
    let nv = N - 1;
    let a = helmert(N);
    let zero = L::splat(0.0);
    let x: [[L; M]; M] = load(xw);
    // R = GᵀXG: C = X·G, then Gᵀ·C, each by suffix sums over the vertices of a component.
    let mut c = [[zero; M]; M];
    for i in 0..M {
        for comp in 0..d {
            let mut suf = zero;
            for j in (0..nv).rev() {
                let xij = x[i][j * d + comp];
                suf = suf + xij;
                c[i][j * d + comp] = L::splat(-a[j]) * (L::splat((j + 1) as f64) * xij + suf);
            }
        }
    }
    let mut r = [[zero; M]; M];
    for col in 0..M {
        for comp in 0..d {
            let mut suf = zero;
            for j in (0..nv).rev() {
                let cj = c[j * d + comp][col];
                suf = suf + cj;
                r[j * d + comp][col] = L::splat(-a[j]) * (L::splat((j + 1) as f64) * cj + suf);
            }
        }
    }
    // The symmetric part, scaled by a power of two per lane.
    let mut rmax = zero;
    for i in 0..M {
        for j in 0..M {
            let v = r[i][j].abs();
            rmax = L::select(v.gt(rmax), v, rmax);
        }
    }
    let usable = rmax.positive_finite();
    let sc = L::select(usable, rmax.unit_scales(), L::splat(1.0));
    let mut rs = lane_zeros::<M>();
    for i in 0..M {
        for j in 0..=i {
            let v = L::splat(0.5) * (r[i][j] + r[j][i]) * sc;
            let v = L::select(usable, v, zero);
            v.store(&mut rs[i][j]);
            v.store(&mut rs[j][i]);
        }
    }
    // 4×4 lanes with one negative eigenvalue need only that eigenpair
    // ([`super::one_negative`]); the others (and every lane of other sizes) are decomposed.
    let single = smallest_pair::<L, M>(&rs, usable);
    let single_lanes = single.as_ref().map_or([false; LANES], |p| L::lanes_of(p.ok));
    let usable = L::lanes_of(usable);
    let decomposed = (0..LANES).any(|l| usable[l] && !single_lanes[l]);
    let mut ww = lane_zeros::<M>();
    let converged = if decomposed { decompose(&mut rs, &mut ww) } else { [false; LANES] };
    let mut ok = [false; LANES];
    for l in 0..LANES {
        ok[l] = usable[l] && (single_lanes[l] || converged[l]);
    }
    // Eigenvalues of R, unscaled; how many are negative and how many clearly positive.
    let mut lam = [zero; M];
    for j in 0..M {
        lam[j] = L::load(&rs[j][j]) / sc;
    }
    let mut write = [false; LANES];
    let mut positive = [false; LANES];
    let mut lam_lanes = [Wide::ZERO; M];
    for j in 0..M {
        lam[j].store(&mut lam_lanes[j]);
    }
    for l in 0..LANES {
        if single_lanes[l] {
            // X₊ = X − λ·z zᵀ for the one negative λ.
            write[l] = ok[l];
            continue;
        }
        let mut ev = [0.0; M];
        for j in 0..M {
            ev[j] = lam_lanes[j].0[l];
        }
        let (nneg, npos) = super::differences::sign_counts(&ev);
        write[l] = ok[l] && nneg > 0;
        positive[l] = super::differences::sum_positive_part(npos, M);
    }
    if !write.iter().any(|&b| b) {
        return (ok, write);
    }
    let from_positive = L::mask_of(&positive);
    let mut w: [[L; M]; M] = load(&ww);
    // The single pairs as the first eigenpair, the other eigenvalues 0 (no term).
    let single_mask = L::mask_of(&single_lanes);
    if let Some(pair) = &single {
        lam[0] = L::select(single_mask, pair.mu / sc, lam[0]);
        for i in 0..M {
            w[i][0] = L::select(single_mask, pair.v[i], w[i][0]);
        }
        for j in 1..M {
            lam[j] = L::select(single_mask, zero, lam[j]);
        }
    }
    // Without a decomposition only the first pair has a term.
    let terms = if decomposed { M } else { 1 };
    // X₊ = X + Σ_{λ<0} (−λ)·z zᵀ, or Σ_{λ>0} λ·z zᵀ (fewer terms), z = G⁻ᵀw: the
    // eigenvalues not taken get a zero coefficient.
    let mut coef = [zero; M];
    let mut z = [[zero; M]; M];
    // 1/a_v = √((v+1)(v+2)) and 1/(v+2) as factors: the divisions by these constants would
    // occupy the divider that the rotations wait on.
    let mut inv_a = [zero; M];
    let mut inv_v2 = [zero; M];
    for v in 0..M {
        inv_a[v] = L::splat((((v + 1) * (v + 2)) as f64).sqrt());
        inv_v2[v] = L::splat(1.0 / (v + 2) as f64);
    }
    for j in 0..terms {
        let l = lam[j];
        let pos = L::select(l.gt(zero), l, zero);
        let neg = L::select(l.lt(zero), -l, zero);
        coef[j] = L::select(from_positive, pos, neg);
        for comp in 0..d {
            // (Gᵀz)_v = −a_v·((v+2)·z_v + Σ_{u>v} z_u) = w_v, from the last vertex back.
            let mut suf = zero;
            for v in (0..nv).rev() {
                let zv = (-w[v * d + comp][j] * inv_a[v] - suf) * inv_v2[v];
                z[j][v * d + comp] = zv;
                suf = suf + zv;
            }
        }
    }
    let mut xp = [[zero; M]; M];
    for i in 0..M {
        for j in i..M {
            let mut acc = L::select(from_positive, zero, x[i][j]);
            acc = acc + coef[0] * z[0][i] * z[0][j];
            // A single pair's lane ends here, whatever the other lanes need (its bits are its own).
            let single_acc = acc;
            for q in 1..terms {
                acc = acc + coef[q] * z[q][i] * z[q][j];
            }
            let value = L::select(single_mask, single_acc, acc);
            xp[i][j] = value;
            xp[j][i] = value;
        }
    }
    // Tᵀ X₊ T: X₊ for vertices 1…, negated sums over the vertices for vertex 0.
    let mut colsum = [[zero; M]; M];
    for i in 0..M {
        for cc in 0..d {
            let mut s = zero;
            for v in 0..nv {
                s = s + xp[v * d + cc][i];
            }
            colsum[cc][i] = s;
        }
    }
    let mut block = [[zero; K]; K];
    for i in 0..M {
        for j in 0..M {
            block[d + i][d + j] = xp[i][j];
        }
        for cc in 0..d {
            block[cc][d + i] = -colsum[cc][i];
            block[d + i][cc] = -colsum[cc][i];
        }
    }
    for cc in 0..d {
        for c2 in cc..d {
            let mut s = zero;
            for v in 0..nv {
                s = s + colsum[cc][v * d + c2];
            }
            block[cc][c2] = s;
            block[c2][cc] = s;
        }
    }
    clamp_translation_part::<L, K, N>(&mut block);
    for i in 0..K {
        for j in 0..K {
            block[i][j].store(&mut out[i][j]);
        }
    }
    (ok, write)
}

/// Lifts the translation part T̂ᵀ B T̂ (d×d, T̂ the normalized translations) of each lane's
/// block B to PSD: the rounding of the sums that form the rows of vertex 0 leaves it at the
/// level of rounding, of either sign, and a global Hessian singular along the translations
/// (no fixed vertex) must not be made indefinite by it. With s ≥ 0 the largest Gershgorin
/// deficit of T̂ᵀ B T̂ (s = max(0, −min_c (t_cc − Σ_{c'≠c} |t_cc'|))), B + s·T̂T̂ᵀ has the
/// translation part T̂ᵀ B T̂ + s·I, which is PSD, and the same spectrum on the complement of
/// the translations. (s is at the level of rounding; the one-block path of
/// [`super::differences`] clamps the same part's negative eigenvalues instead, which agrees
/// to rounding and costs a d×d decomposition and d rank-one updates per block.)
#[inline(always)]
fn clamp_translation_part<L: Lanes, const K: usize, const N: usize>(out: &mut [[L; K]; K]) {
    // d ≤ 4 for the shapes batched here; the arrays are sized for it.
    const D: usize = 4;
    let d = K / N;
    debug_assert!(d <= D);
    let zero = L::splat(0.0);
    let inv_n = L::splat(1.0 / N as f64);
    // t = T̂ᵀ B T̂: t_cc' is the mean over the vertex pairs of the (c, c') entries.
    let mut t = [[zero; D]; D];
    for i in 0..K {
        for j in 0..K {
            t[i % d][j % d] = t[i % d][j % d] + out[i][j];
        }
    }
    let mut deficit = zero;
    for c in 0..d {
        let mut radius = zero;
        for c2 in 0..d {
            if c2 != c {
                radius = radius + (L::splat(0.5) * (t[c][c2] + t[c2][c])).abs();
            }
        }
        // −(t_cc − radius)/N, NaN-safe: a non-finite block is never lifted.
        let lack = (radius - t[c][c]) * inv_n;
        deficit = L::select(lack.gt(deficit), lack, deficit);
    }
    // B += s·T̂T̂ᵀ: s/N on the entries of equal components.
    let add = deficit * inv_n;
    for i in 0..K {
        for j in 0..K {
            if i % d == j % d {
                out[i][j] = out[i][j] + add;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::linalg::test_lcg as lcg;

    /// The AVX-512 body against the portable one on random symmetric X of mixed scales and
    /// signs (some lanes PSD, some zero, one with a NaN): same flags, and the same blocks to
    /// rounding (bit for bit where the sweeps are the portable ones).
    #[cfg(target_arch = "x86_64")]
    fn same_bits<const K: usize, const M: usize, const N: usize>(seed: u64) {
        let mut st = seed;
        let mut x = lane_zeros::<M>();
        for l in 0..LANES {
            let scale = 10f64.powf(4.0 * lcg(&mut st));
            for i in 0..M {
                for j in 0..=i {
                    let v = match l % 5 {
                        0 => 0.0,
                        // Diagonally dominant: PSD, nothing to write.
                        1 if i == j => 4.0 * M as f64 * scale,
                        _ => lcg(&mut st) * scale,
                    };
                    x[i][j].0[l] = v;
                    x[j][i].0[l] = v;
                }
            }
        }
        x[0][M - 1].0[7] = f64::NAN;
        x[M - 1][0].0[7] = f64::NAN;
        let mut portable = [[Wide::ZERO; K]; K];
        let mut wide = [[Wide::ZERO; K]; K];
        let a = lanes_body::<Wide, K, M, N>(&x, &mut portable, jacobi_lanes_generic::<M>);
        // SAFETY: checked by the caller.
        let b = unsafe { lanes_avx512::<K, M, N>(&x, &mut wide) };
        assert_eq!(a, b, "K={K} M={M} seed {seed}");
        assert!(a.1.iter().any(|&w| w), "some lane must need the projection");
        for l in (0..LANES).filter(|&l| a.1[l]) {
            // The sweeps of M = 3 and 4 fuse their rotations (`jacobi_avx512`): the blocks
            // agree to a small multiple of the rounding of the lane's largest entry; the
            // portable sweeps of larger M give the same bits.
            let scale = x.iter().flatten().map(|w| w.0[l].abs()).fold(0.0, f64::max);
            let tol = if M <= 4 { 256.0 * M as f64 * f64::EPSILON * scale } else { 0.0 };
            for i in 0..K {
                for j in 0..K {
                    let (p, w) = (portable[i][j].0[l], wide[i][j].0[l]);
                    assert!(
                        p.to_bits() == w.to_bits() || (p - w).abs() <= tol,
                        "K={K} M={M} seed {seed} lane {l} ({i},{j}): {p:e} vs {w:e}"
                    );
                }
            }
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_avx512_body_agrees_with_the_portable_one() {
        if !std::arch::is_x86_feature_detected!("avx512f") {
            eprintln!("this processor has no AVX-512F: the AVX-512 body cannot run here");
            return;
        }
        for seed in 0..100 {
            same_bits::<6, 4, 3>(seed); // triangles in 2D
            same_bits::<6, 3, 2>(seed); // edges in 3D
            same_bits::<9, 6, 3>(seed); // triangles in 3D (portable sweeps)
        }
    }

    /// B = C − δ·T̂T̂ᵀ for 3 vertices of 2 components, C with translations in its null space
    /// (rows of vertex 0 the negated sums): the lift must add back δ·T̂T̂ᵀ, which
    /// leaves the translation part PSD and the complement untouched.
    #[test]
    fn a_negative_translation_part_is_lifted_to_psd_and_the_rest_is_kept() {
        const K: usize = 6;
        const N: usize = 3;
        let d = K / N;
        let mut out = [[Wide::ZERO; K]; K];
        let mut c = [[0.0f64; K]; K];
        for lane in 0..LANES {
            // C = Tᵀ X T with X = diag(1, 2, 3, 4) + lane·0.01 in the difference coordinates.
            for i in 0..K {
                for j in 0..K {
                    let (vi, ci, vj, cj) = (i / d, i % d, j / d, j % d);
                    if ci != cj {
                        c[i][j] = 0.0;
                        continue;
                    }
                    let x = |v: usize| 1.0 + (v - 1) as f64 * 2.0 + ci as f64 + lane as f64 * 0.01;
                    c[i][j] = match (vi, vj) {
                        (0, 0) => x(1) + x(2),
                        (0, v) | (v, 0) => -x(v),
                        (a, b) if a == b => x(a),
                        _ => 0.0,
                    };
                }
            }
            let delta = [0.0, 1e-14, 3e-3][lane % 3];
            for i in 0..K {
                for j in 0..K {
                    let p = if i % d == j % d { 1.0 / N as f64 } else { 0.0 };
                    out[i][j].0[lane] = c[i][j] - delta * p;
                }
            }
        }
        let before = out;
        clamp_translation_part::<Wide, K, N>(&mut out);
        for lane in 0..LANES {
            let delta = [0.0, 1e-14, 3e-3][lane % 3];
            for i in 0..K {
                for j in 0..K {
                    let lifted = out[i][j].0[lane] - before[i][j].0[lane];
                    let want = if i % d == j % d { delta / N as f64 } else { 0.0 };
                    assert!((lifted - want).abs() <= 1e-15, "lane {lane} ({i}, {j}): {lifted:e} vs {want:e}");
                }
            }
            // The translation part is now ≥ 0 (here diagonal), and a difference direction
            // (the complement) sees the same block as before.
            for comp in 0..d {
                let mut t = 0.0;
                for i in (comp..K).step_by(d) {
                    for j in (comp..K).step_by(d) {
                        t += out[i][j].0[lane];
                    }
                }
                let t = t / N as f64;
                assert!(t >= -1e-15, "lane {lane}: translation part {t:e}");
            }
            let w = [1.0, 0.0, -1.0, 0.0, 0.0, 0.0];
            let quad = |b: &[[Wide; K]; K]| -> f64 {
                (0..K).map(|i| (0..K).map(|j| w[i] * b[i][j].0[lane] * w[j]).sum::<f64>()).sum()
            };
            assert!((quad(&out) - quad(&before)).abs() <= 1e-12, "lane {lane}: the complement changed");
        }
    }
}
