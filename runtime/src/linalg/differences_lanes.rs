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
//! Per batch of [`LANES`] waiting blocks, lane by lane in vector instructions (AVX-512 or AVX where the
//! processor has it, chosen at run time, as [`jacobi_lanes`](super::jacobi_lanes::jacobi_lanes)
//! does): R = GᵀXG by suffix sums, its power-of-two scale, cyclic Jacobi, X₊ from the side
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
/// blocks changed.
pub(crate) fn project_many_lanes<const K: usize, const M: usize, const N: usize>(
    blocks: &mut [f64],
    work: &mut PsdWork,
) -> usize {
    debug_assert_eq!(M, K - K / N);
    let kk = K * K;
    let d = K / N;
    let mut changed = 0;
    let mut lanes: LaneMatrix<M> = lane_zeros::<M>();
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
                    changed += flush::<K, M, N>(blocks, &mut lanes, &waiting[..filled], work);
                    filled = 0;
                }
            }
        }
        at += kk;
    }
    if filled > 0 {
        changed += flush::<K, M, N>(blocks, &mut lanes, &waiting[..filled], work);
    }
    changed
}

/// Projects the waiting blocks (lane i: X of the block at offset `waiting[i]`; the other
/// lanes zero) and zeroes the lanes again.
fn flush<const K: usize, const M: usize, const N: usize>(
    blocks: &mut [f64],
    x: &mut LaneMatrix<M>,
    waiting: &[usize],
    work: &mut PsdWork,
) -> usize {
    let mut out = [[Wide::ZERO; K]; K];
    let (ok, write) = lanes_dispatch::<K, M, N>(x, &mut out);
    let mut changed = 0;
    for (lane, &at) in waiting.iter().enumerate() {
        let block = &mut blocks[at..at + K * K];
        if !ok[lane] {
            changed += usize::from(project_psd_translation(block, K, N, 0.0, work));
        } else if write[lane] {
            for i in 0..K {
                for j in 0..K {
                    block[i * K + j] = out[i][j].0[lane];
                }
            }
            changed += 1;
        }
    }
    *x = lane_zeros::<M>();
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
    lanes_body::<K, M, N, false>(x, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn lanes_avx512<const K: usize, const M: usize, const N: usize>(
    x: &LaneMatrix<M>,
    out: &mut [[Wide; K]; K],
) -> ([bool; LANES], [bool; LANES]) {
    lanes_body::<K, M, N, true>(x, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
fn lanes_avx<const K: usize, const M: usize, const N: usize>(
    x: &LaneMatrix<M>,
    out: &mut [[Wide; K]; K],
) -> ([bool; LANES], [bool; LANES]) {
    lanes_body::<K, M, N, false>(x, out)
}

/// The lanes' decomposition: the AVX-512 sweeps where `AVX512` says the processor has them
/// and they cover M ([`super::jacobi_avx512`]), else the portable ones. Same bits either way.
#[inline(always)]
fn decompose<const M: usize, const AVX512: bool>(a: &mut LaneMatrix<M>, v: &mut LaneMatrix<M>) -> [bool; LANES] {
    #[cfg(target_arch = "x86_64")]
    if AVX512 {
        // SAFETY: `AVX512` is true only in `lanes_avx512`, which runs on AVX-512F processors.
        if let Some(ok) = unsafe { super::jacobi_avx512::jacobi_small::<M>(a, v) } {
            return ok;
        }
    }
    jacobi_lanes_generic::<M>(a, v)
}

/// The power of two that brings each lane's `amax` (> 0, finite) near 1, as
/// [`super::tridiag_ql::unit_scale`] computes it.
#[inline(always)]
fn unit_scales(amax: Wide) -> Wide {
    amax.map(|a| {
        let e = ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023;
        f64::from_bits(((1023 - e).clamp(1, 2046) as u64) << 52)
    })
}

/// The decomposition and the rebuilt blocks of every lane. Returns, per lane, whether it
/// went through (else the lane takes the fallback) and whether its block changed (then `out`
/// holds it, both triangles). No fused multiply-add is formed, so the AVX-512, AVX and portable
/// copies round identically.
#[inline(always)]
fn lanes_body<const K: usize, const M: usize, const N: usize, const AVX512: bool>(
    x: &LaneMatrix<M>,
    out: &mut [[Wide; K]; K],
) -> ([bool; LANES], [bool; LANES]) {
    let d = K / N;
    let nv = N - 1;
    let a = helmert(N);
    // R = GᵀXG: C = X·G, then Gᵀ·C, each by suffix sums over the vertices of a component.
    let mut c = lane_zeros::<M>();
    for i in 0..M {
        for comp in 0..d {
            let mut suf = Wide::ZERO;
            for j in (0..nv).rev() {
                let xij = x[i][j * d + comp];
                suf = suf + xij;
                c[i][j * d + comp] = Wide::splat(-a[j]) * (Wide::splat((j + 1) as f64) * xij + suf);
            }
        }
    }
    let mut r = lane_zeros::<M>();
    for col in 0..M {
        for comp in 0..d {
            let mut suf = Wide::ZERO;
            for j in (0..nv).rev() {
                let cj = c[j * d + comp][col];
                suf = suf + cj;
                r[j * d + comp][col] = Wide::splat(-a[j]) * (Wide::splat((j + 1) as f64) * cj + suf);
            }
        }
    }
    // The symmetric part, scaled by a power of two per lane.
    let mut rmax = Wide::ZERO;
    for i in 0..M {
        for j in 0..M {
            let v = r[i][j].abs();
            rmax = v.cmp(rmax, |p, q| p > q).select(v, rmax);
        }
    }
    let usable = rmax.cmp(Wide::ZERO, |p, _| p > 0.0 && p.is_finite());
    let sc = usable.select(unit_scales(rmax), Wide::ONE);
    let mut rs = lane_zeros::<M>();
    for i in 0..M {
        for j in 0..=i {
            let v = Wide::splat(0.5) * (r[i][j] + r[j][i]) * sc;
            let v = usable.select(v, Wide::ZERO);
            rs[i][j] = v;
            rs[j][i] = v;
        }
    }
    let mut w = lane_zeros::<M>();
    let converged = decompose::<M, AVX512>(&mut rs, &mut w);
    let mut ok = [false; LANES];
    for l in 0..LANES {
        ok[l] = converged[l] && usable.0[l] != 0;
    }
    // Eigenvalues of R, unscaled; how many are negative and how many clearly positive.
    let mut lam = [Wide::ZERO; M];
    for j in 0..M {
        lam[j] = rs[j][j] / sc;
    }
    let mut write = [false; LANES];
    let mut from_positive = crate::linalg::jacobi_lanes::Mask([0; LANES]);
    for l in 0..LANES {
        let ev: [f64; M] = std::array::from_fn(|j| lam[j].0[l]);
        let (nneg, npos) = super::differences::sign_counts(&ev);
        write[l] = ok[l] && nneg > 0;
        if super::differences::sum_positive_part(npos, M) {
            from_positive.0[l] = u64::MAX;
        }
    }
    if !write.iter().any(|&b| b) {
        return (ok, write);
    }
    // X₊ = X + Σ_{λ<0} (−λ)·z zᵀ, or Σ_{λ>0} λ·z zᵀ (fewer terms), z = G⁻ᵀw: the
    // eigenvalues not taken get a zero coefficient.
    let mut coef = [Wide::ZERO; M];
    let mut z = lane_zeros::<M>();
    // 1/a_v = √((v+1)(v+2)) and 1/(v+2) as factors: the divisions by these constants would
    // occupy the divider that the rotations wait on.
    let inv_a: [Wide; M] = std::array::from_fn(|v| Wide::splat((((v + 1) * (v + 2)) as f64).sqrt()));
    let inv_v2: [Wide; M] = std::array::from_fn(|v| Wide::splat(1.0 / (v + 2) as f64));
    for j in 0..M {
        let l = lam[j];
        let pos = l.cmp(Wide::ZERO, |p, q| p > q).select(l, Wide::ZERO);
        let neg = l.cmp(Wide::ZERO, |p, q| p < q).select(-l, Wide::ZERO);
        coef[j] = from_positive.select(pos, neg);
        for comp in 0..d {
            // (Gᵀz)_v = −a_v·((v+2)·z_v + Σ_{u>v} z_u) = w_v, from the last vertex back.
            let mut suf = Wide::ZERO;
            for v in (0..nv).rev() {
                let zv = (-w[v * d + comp][j] * inv_a[v] - suf) * inv_v2[v];
                z[j][v * d + comp] = zv;
                suf = suf + zv;
            }
        }
    }
    let mut xp = lane_zeros::<M>();
    for i in 0..M {
        for j in i..M {
            let mut acc = from_positive.select(Wide::ZERO, x[i][j]);
            for q in 0..M {
                acc = acc + coef[q] * z[q][i] * z[q][j];
            }
            xp[i][j] = acc;
            xp[j][i] = acc;
        }
    }
    // Tᵀ X₊ T: X₊ for vertices 1…, negated sums over the vertices for vertex 0.
    let mut colsum = lane_zeros::<M>();
    for i in 0..M {
        for cc in 0..d {
            let mut s = Wide::ZERO;
            for v in 0..nv {
                s = s + xp[v * d + cc][i];
            }
            colsum[cc][i] = s;
        }
    }
    for i in 0..M {
        for j in 0..M {
            out[d + i][d + j] = xp[i][j];
        }
        for cc in 0..d {
            out[cc][d + i] = -colsum[cc][i];
            out[d + i][cc] = -colsum[cc][i];
        }
    }
    for cc in 0..d {
        for c2 in cc..d {
            let mut s = Wide::ZERO;
            for v in 0..nv {
                s = s + colsum[cc][v * d + c2];
            }
            out[cc][c2] = s;
            out[c2][cc] = s;
        }
    }
    clamp_translation_part::<K, N>(out);
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
fn clamp_translation_part<const K: usize, const N: usize>(out: &mut [[Wide; K]; K]) {
    // d ≤ 4 for the shapes batched here; the arrays are sized for it.
    const D: usize = 4;
    let d = K / N;
    debug_assert!(d <= D);
    let inv_n = Wide::splat(1.0 / N as f64);
    // t = T̂ᵀ B T̂: t_cc' is the mean over the vertex pairs of the (c, c') entries.
    let mut t = [[Wide::ZERO; D]; D];
    for i in 0..K {
        for j in 0..K {
            t[i % d][j % d] = t[i % d][j % d] + out[i][j];
        }
    }
    let mut deficit = Wide::ZERO;
    for c in 0..d {
        let mut radius = Wide::ZERO;
        for c2 in 0..d {
            if c2 != c {
                radius = radius + (Wide::splat(0.5) * (t[c][c2] + t[c2][c])).abs();
            }
        }
        // −(t_cc − radius)/N, NaN-safe: a non-finite block is never lifted.
        let lack = (radius - t[c][c]) * inv_n;
        deficit = lack.cmp(deficit, |a, b| a > b).select(lack, deficit);
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
        clamp_translation_part::<K, N>(&mut out);
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
