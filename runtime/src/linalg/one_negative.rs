//! The smallest eigenpair of a symmetric 4×4 matrix with exactly one negative eigenvalue,
//! lane by lane, so that the batched projections of [`super::differences_lanes`] can clamp it
//! as R₊ = R − μ·v vᵀ without a full decomposition.
//!
//! The blocks this serves are those of a triangle's energy in the plane (4×4 after the
//! translations are taken out): in a parameterization solve every block that needs the
//! projection has exactly one negative eigenvalue (`docs/benchmarks.md`), and the cyclic
//! Jacobi method spends four sweeps on all four eigenpairs to clamp that one.
//!
//! Per lane, on R scaled so that its largest entry lies in [1, 2):
//!
//! 1. The characteristic polynomial p(x) = x⁴ − c₃x³ + c₂x² − c₁x + c₀ (c₃ the trace, c₂ the
//!    sum of the principal 2×2 minors, c₁ that of the principal 3×3 minors, c₀ the
//!    determinant).
//! 2. Its smallest root λ by Laguerre's iteration from the Gershgorin lower bound. The roots
//!    of p are real, and for such a polynomial the iteration started below the smallest root
//!    increases monotonically to it, cubically near it. A lane stops when p(x) ≤ 0 (the
//!    root, within rounding), when a step does not increase x, or after a step below
//!    [`SMALL_STEP`] (the next one would be below the rounding); a lane still moving after
//!    [`MAX_STEPS`] fails.
//! 3. v: the column of adj(R − λI) with the largest diagonal entry (at a simple root the
//!    adjugate is Π_{i>1}(λᵢ − λ)·u uᵀ, u the unit eigenvector), normalized; μ = vᵀRv, the
//!    Rayleigh quotient, whose error is of second order in that of v.
//! 4. The checks that make the result trustworthy; a lane that fails any takes the full
//!    decomposition: μ < 0; the residual r = Rv − μv has no entry above [`residual_tol`];
//!    S = R − μ·vvᵀ + vvᵀ is positive definite: the pivots of its LDLᵀ all exceed that
//!    tolerance, tested without divisions on its leading principal minors (the k-th pivot
//!    is Dₖ/Dₖ₋₁).
//!
//! **Why the checks suffice.** With P = I − vvᵀ and Z = PRP (so Zv = 0), R = μvvᵀ + vrᵀ +
//! rvᵀ + Z, and the result is C = R − μvvᵀ = Z + vrᵀ + rvᵀ. S ≻ 0 gives Z ⪰ −‖r‖ on the
//! complement of v (‖vrᵀ + rvᵀ‖₂ = ‖r‖ for r ⟂ v). Y = μvvᵀ + Z has the clamp Y₊ = Z₊
//! (μ < 0), and since the projection onto the PSD cone is 1-Lipschitz in the Frobenius
//! norm, ‖R₊ − Y₊‖_F ≤ ‖R − Y‖_F = √2‖r‖. With ‖Z − Z₊‖_F ≤ √3‖r‖ and ‖C − Z‖_F = √2‖r‖:
//! ‖C − R₊‖_F ≤ (2√2 + √3)‖r‖, a small multiple of the rounding of R, as the Jacobi path's
//! error is.
//!
//! Only the IEEE operations of [`Lanes`] are used (no fused forms), so the portable and the
//! AVX-512 representations give the same bits, and each lane's result is its own.

// Index loops are the natural form of these small matrix computations.
#![allow(clippy::needless_range_loop)]

use super::jacobi_lanes::LaneMatrix;
use super::lane_ops::{LaneMask, Lanes};

/// The most Laguerre steps a lane may take (lanes of a parameterization take 3 to 6).
pub(crate) const MAX_STEPS: usize = 16;

/// A step below this (on R scaled to a largest entry in [1, 2)) ends the iteration after it:
/// the cubic convergence then leaves an error far below the rounding.
pub(crate) const SMALL_STEP: f64 = 1e-6;

/// The tolerance on the residual's entries and on the pivots of S (R scaled as above):
/// 64·4·ε·2, the multiple of the rounding the PSD test of [`super::psd_test`] allows.
pub(crate) fn residual_tol() -> f64 {
    64.0 * 4.0 * f64::EPSILON * 2.0
}

/// The smallest eigenpair of each lane's R: where `ok` is set, μ < 0 is R's only negative
/// eigenvalue (to the rounding bounded in the module docs) and `v` its unit eigenvector.
pub(crate) struct OneNegative<L: Lanes> {
    pub(crate) ok: L::Mask,
    pub(crate) mu: L,
    pub(crate) v: [L; 4],
}

/// The pair for every lane of `r` (M = 4; `None` for other sizes) where `live` is set;
/// other lanes are left out of the iteration and are not `ok`.
#[inline(always)]
pub(crate) fn smallest_pair<L: Lanes, const M: usize>(r: &LaneMatrix<M>, live: L::Mask) -> Option<OneNegative<L>> {
    if M != 4 {
        return None;
    }
    let mut a = [[L::splat(0.0); 4]; 4];
    for i in 0..4 {
        for j in 0..4 {
            a[i][j] = L::load(&r[i][j]);
        }
    }
    Some(smallest_pair_4(&a, live))
}

/// [`smallest_pair`] on loaded values.
#[inline(always)]
fn smallest_pair_4<L: Lanes>(r: &[[L; 4]; 4], live: L::Mask) -> OneNegative<L> {
    let zero = L::splat(0.0);
    let (adj, det) = adjugate(r);
    let c3 = r[0][0] + r[1][1] + r[2][2] + r[3][3];
    let mut c2 = zero;
    for i in 0..4 {
        for j in (i + 1)..4 {
            c2 = c2 + (r[i][i] * r[j][j] - r[i][j] * r[j][i]);
        }
    }
    let c1 = adj[0][0] + adj[1][1] + adj[2][2] + adj[3][3];
    let c0 = det;
    // The Gershgorin lower bound.
    let mut x = L::splat(f64::INFINITY);
    for i in 0..4 {
        let mut radius = zero;
        for j in 0..4 {
            if j != i {
                radius = radius + r[i][j].abs();
            }
        }
        let g = r[i][i] - radius;
        x = L::select(g.lt(x), g, x);
    }
    let (three, four, twelve) = (L::splat(3.0), L::splat(4.0), L::splat(12.0));
    let (two, six, small) = (L::splat(2.0), L::splat(6.0), L::splat(SMALL_STEP));
    let mut moving = live;
    for _ in 0..MAX_STEPS {
        if moving.none() {
            break;
        }
        let p = (((x - c3) * x + c2) * x - c1) * x + c0;
        let dp = ((four * x - three * c3) * x + two * c2) * x - c1;
        let ddp = (twelve * x - six * c3) * x + two * c2;
        moving = moving.and(p.gt(zero));
        // Laguerre's step 4/(G − √(3(4H − G²))) with G = p′/p, H = G² − p″/p, multiplied
        // through by p > 0 (one division): G < 0 below the smallest root, so the
        // denominator of larger magnitude takes −√.
        let radicand = three * (three * dp * dp - four * p * ddp);
        let radicand = L::select(radicand.gt(zero), radicand, zero);
        let next = x - four * p / (dp - radicand.sqrt());
        let advance = moving.and(next.gt(x));
        let step = next - x;
        x = L::select(advance, next, x);
        moving = advance.and(step.gt(small));
    }
    let converged = moving.not();
    // adj(R − xI): its column with the largest diagonal entry.
    let mut shifted = *r;
    for i in 0..4 {
        shifted[i][i] = shifted[i][i] - x;
    }
    let (adj, _) = adjugate(&shifted);
    // (The adjugate of a symmetric matrix is symmetric: only its upper triangle is read.)
    let mut v = [adj[0][0], adj[0][1], adj[0][2], adj[0][3]];
    let mut best = adj[0][0];
    for k in 1..4 {
        let better = adj[k][k].gt(best);
        best = L::select(better, adj[k][k], best);
        for i in 0..4 {
            v[i] = L::select(better, adj[i.min(k)][i.max(k)], v[i]);
        }
    }
    let norm2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3];
    let inv_norm = L::splat(1.0) / norm2.sqrt();
    for vi in v.iter_mut() {
        *vi = *vi * inv_norm;
    }
    let mut rv = [zero; 4];
    for i in 0..4 {
        rv[i] = r[i][0] * v[0] + r[i][1] * v[1] + r[i][2] * v[2] + r[i][3] * v[3];
    }
    let mu = v[0] * rv[0] + v[1] * rv[1] + v[2] * rv[2] + v[3] * rv[3];
    let tol = L::splat(residual_tol());
    let mut ok = live.and(converged).and(mu.lt(zero)).and(norm2.positive_finite());
    for i in 0..4 {
        ok = ok.and((rv[i] - mu * v[i]).abs().le(tol));
    }
    // S = R + (1 − μ)·vvᵀ, positive definite: its leading principal minors D₁…D₄ with
    // Dₖ > tol·Dₖ₋₁ (D₀ = 1), the pivots of its LDLᵀ above tol, without divisions.
    let lift = L::splat(1.0) - mu;
    let mut s = [[zero; 4]; 4];
    for i in 0..4 {
        for j in 0..4 {
            s[i][j] = r[i][j] + lift * v[i] * v[j];
        }
    }
    let d1 = s[0][0];
    let d2 = s[0][0] * s[1][1] - s[0][1] * s[1][0];
    let d3 = s[0][0] * (s[1][1] * s[2][2] - s[1][2] * s[2][1]) - s[0][1] * (s[1][0] * s[2][2] - s[1][2] * s[2][0])
        + s[0][2] * (s[1][0] * s[2][1] - s[1][1] * s[2][0]);
    let (_, d4) = adjugate(&s);
    ok = ok.and(d1.gt(tol)).and(d2.gt(tol * d1)).and(d3.gt(tol * d2)).and(d4.gt(tol * d3));
    OneNegative { ok, mu, v }
}

/// The adjugate of the 4×4 `m` (adj·m = det·I) and its determinant, by the 2×2 minors of
/// its first two and last two rows.
#[inline(always)]
fn adjugate<L: Lanes>(m: &[[L; 4]; 4]) -> ([[L; 4]; 4], L) {
    let s0 = m[0][0] * m[1][1] - m[1][0] * m[0][1];
    let s1 = m[0][0] * m[1][2] - m[1][0] * m[0][2];
    let s2 = m[0][0] * m[1][3] - m[1][0] * m[0][3];
    let s3 = m[0][1] * m[1][2] - m[1][1] * m[0][2];
    let s4 = m[0][1] * m[1][3] - m[1][1] * m[0][3];
    let s5 = m[0][2] * m[1][3] - m[1][2] * m[0][3];
    let c5 = m[2][2] * m[3][3] - m[3][2] * m[2][3];
    let c4 = m[2][1] * m[3][3] - m[3][1] * m[2][3];
    let c3 = m[2][1] * m[3][2] - m[3][1] * m[2][2];
    let c2 = m[2][0] * m[3][3] - m[3][0] * m[2][3];
    let c1 = m[2][0] * m[3][2] - m[3][0] * m[2][2];
    let c0 = m[2][0] * m[3][1] - m[3][0] * m[2][1];
    let adj = [
        [
            m[1][1] * c5 - m[1][2] * c4 + m[1][3] * c3,
            -m[0][1] * c5 + m[0][2] * c4 - m[0][3] * c3,
            m[3][1] * s5 - m[3][2] * s4 + m[3][3] * s3,
            -m[2][1] * s5 + m[2][2] * s4 - m[2][3] * s3,
        ],
        [
            -m[1][0] * c5 + m[1][2] * c2 - m[1][3] * c1,
            m[0][0] * c5 - m[0][2] * c2 + m[0][3] * c1,
            -m[3][0] * s5 + m[3][2] * s2 - m[3][3] * s1,
            m[2][0] * s5 - m[2][2] * s2 + m[2][3] * s1,
        ],
        [
            m[1][0] * c4 - m[1][1] * c2 + m[1][3] * c0,
            -m[0][0] * c4 + m[0][1] * c2 - m[0][3] * c0,
            m[3][0] * s4 - m[3][1] * s2 + m[3][3] * s0,
            -m[2][0] * s4 + m[2][1] * s2 - m[2][3] * s0,
        ],
        [
            -m[1][0] * c3 + m[1][1] * c1 - m[1][2] * c0,
            m[0][0] * c3 - m[0][1] * c1 + m[0][2] * c0,
            -m[3][0] * s3 + m[3][1] * s1 - m[3][2] * s0,
            m[2][0] * s3 - m[2][1] * s1 + m[2][2] * s0,
        ],
    ];
    let det = s0 * c5 - s1 * c4 + s2 * c3 + s3 * c2 - s4 * c1 + s5 * c0;
    (adj, det)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::jacobi_lanes::{LANES, Wide, lane_zeros};
    use crate::linalg::sym_eigen::sym_eigen;
    use crate::linalg::test_lcg as lcg;

    /// A random orthogonal 4×4 (the eigenvectors of a random symmetric matrix).
    fn random_rotation(st: &mut u64) -> [[f64; 4]; 4] {
        let mut b = vec![0.0; 16];
        for i in 0..4 {
            for j in 0..=i {
                let v = lcg(st);
                b[i * 4 + j] = v;
                b[j * 4 + i] = v;
            }
        }
        let e = sym_eigen(&b, 4);
        let mut q = [[0.0; 4]; 4];
        for i in 0..4 {
            for j in 0..4 {
                q[i][j] = e.vectors[i * 4 + j];
            }
        }
        q
    }

    /// Q diag(λ) Qᵀ.
    fn with_spectrum(lam: [f64; 4], st: &mut u64) -> [[f64; 4]; 4] {
        let q = random_rotation(st);
        let mut r = [[0.0; 4]; 4];
        for i in 0..4 {
            for j in 0..4 {
                r[i][j] = (0..4).map(|k| q[i][k] * lam[k] * q[j][k]).sum();
            }
        }
        r
    }

    /// The exact clamp of `r` by the general decomposition.
    fn clamp(r: &[[f64; 4]; 4]) -> [[f64; 4]; 4] {
        let e = sym_eigen(r.as_flattened(), 4);
        let mut out = [[0.0; 4]; 4];
        for i in 0..4 {
            for j in 0..4 {
                out[i][j] = (0..4).map(|k| e.vectors[i * 4 + k] * e.values[k].max(0.0) * e.vectors[j * 4 + k]).sum();
            }
        }
        out
    }

    fn lanes_of(rs: &[[[f64; 4]; 4]]) -> LaneMatrix<4> {
        let mut m = lane_zeros::<4>();
        for (l, r) in rs.iter().enumerate() {
            for i in 0..4 {
                for j in 0..4 {
                    m[i][j].0[l] = r[i][j];
                }
            }
        }
        m
    }

    fn run(m: &LaneMatrix<4>, live: [bool; LANES]) -> ([bool; LANES], Wide, [Wide; 4]) {
        let p = smallest_pair::<Wide, 4>(m, Wide::mask_of(&live)).unwrap();
        (Wide::lanes_of(p.ok), p.mu, p.v)
    }

    #[test]
    fn the_adjugate_times_the_matrix_is_the_determinant() {
        let mut st = 5;
        for _ in 0..50 {
            let mut a = [[Wide::ZERO; 4]; 4];
            for row in a.iter_mut() {
                for x in row.iter_mut() {
                    *x = Wide(std::array::from_fn(|_| lcg(&mut st)));
                }
            }
            let (adj, det) = adjugate(&a);
            for l in 0..LANES {
                for i in 0..4 {
                    for j in 0..4 {
                        let p: f64 = (0..4).map(|k| adj[i][k].0[l] * a[k][j].0[l]).sum();
                        let want = if i == j { det.0[l] } else { 0.0 };
                        assert!((p - want).abs() <= 1e-14, "lane {l} ({i}, {j}): {p} vs {want}");
                    }
                }
            }
        }
    }

    /// One negative eigenvalue: where a lane passes, R − μvvᵀ is the clamp to a small
    /// multiple of the rounding of R's largest entry. With the eigenvalues within two
    /// decades every lane passes; spread over six (three small ones next to a large one),
    /// the adjugate's minors lose digits to cancellation and some lanes are refused (they
    /// take the decomposition), never accepted with a larger error.
    #[test]
    fn one_negative_eigenvalue_gives_the_clamp() {
        let mut st = 17;
        for (decades, all_pass) in [(2.0, true), (6.0, false)] {
            let (mut worst, mut refused) = (0.0f64, 0);
            for _ in 0..400 {
                let mut rs = [[[0.0; 4]; 4]; LANES];
                for r in rs.iter_mut() {
                    let mut lam = [0.0; 4];
                    lam[0] = -(10f64.powf(-0.5 * decades * lcg(&mut st).abs()));
                    for l in lam.iter_mut().skip(1) {
                        *l = 10f64.powf(0.5 * decades * lcg(&mut st));
                    }
                    *r = with_spectrum(lam, &mut st);
                    let top = r.iter().flatten().fold(0.0f64, |a, b| a.max(b.abs()));
                    let scale = 2f64.powi(-(top.log2().floor() as i32));
                    r.iter_mut().flatten().for_each(|x| *x *= scale);
                }
                let (ok, mu, v) = run(&lanes_of(&rs), [true; LANES]);
                for l in 0..LANES {
                    if !ok[l] {
                        refused += 1;
                        continue;
                    }
                    let want = clamp(&rs[l]);
                    for i in 0..4 {
                        for j in 0..4 {
                            let got = rs[l][i][j] - mu.0[l] * v[i].0[l] * v[j].0[l];
                            worst = worst.max((got - want[i][j]).abs());
                        }
                    }
                }
            }
            eprintln!("{decades} decades: largest error {worst:e}, {refused} of {} lanes refused", 400 * LANES);
            assert!(worst <= 1024.0 * f64::EPSILON, "{decades} decades: error {worst:e}");
            if all_pass {
                assert_eq!(refused, 0, "{decades} decades");
            } else {
                assert!(refused < 400 * LANES / 4, "{decades} decades: {refused} refused");
            }
        }
    }

    /// Lanes the method must refuse: two or three negative eigenvalues, positive definite
    /// ones, a second eigenvalue at 0, a NaN, and a lane not live. (A PSD R with an
    /// eigenvalue exactly 0 may pass with μ at the level of rounding below 0, which is a
    /// correct clamp.)
    #[test]
    fn lanes_it_cannot_clamp_are_refused() {
        let mut st = 23;
        let mut rs = [[[0.0; 4]; 4]; LANES];
        let spectra = [
            [-0.5, -0.25, 1.0, 1.5],
            [-1.0, -0.5, -0.1, 1.0],
            [1e-3, 0.5, 1.0, 1.5],
            [0.2, 0.5, 1.0, 1.5],
            [-0.3, 1e-18, 1.0, 1.5],
        ];
        for (l, r) in rs.iter_mut().enumerate().take(15) {
            *r = with_spectrum(spectra[l % spectra.len()], &mut st);
        }
        rs[14][1][2] = f64::NAN;
        let mut live = [true; LANES];
        live[15] = false;
        let (ok, _, _) = run(&lanes_of(&rs), live);
        // A second eigenvalue at 0 within rounding (1e-18) is refused too: the pivot test
        // cannot tell it from rounding, and the decomposition handles it.
        assert_eq!(ok, [false; LANES]);
    }

    /// The AVX-512 registers give the bits of the portable lanes.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_avx512_lanes_give_the_same_bits() {
        if !std::arch::is_x86_feature_detected!("avx512f") {
            eprintln!("this processor has no AVX-512F: the AVX-512 lanes cannot run here");
            return;
        }
        #[target_feature(enable = "avx512f")]
        fn wide(m: &LaneMatrix<4>) -> ([bool; LANES], Wide, [Wide; 4]) {
            use crate::linalg::lane_ops::Zmm2;
            let p = smallest_pair::<Zmm2, 4>(m, Zmm2::mask_of(&[true; LANES])).unwrap();
            let mut mu = Wide::ZERO;
            p.mu.store(&mut mu);
            let mut v = [Wide::ZERO; 4];
            for i in 0..4 {
                p.v[i].store(&mut v[i]);
            }
            (Zmm2::lanes_of(p.ok), mu, v)
        }
        let mut st = 31;
        for _ in 0..100 {
            let rs: Vec<[[f64; 4]; 4]> = (0..LANES)
                .map(|_| with_spectrum([-lcg(&mut st).abs(), 0.1, lcg(&mut st).abs() + 0.2, 1.0], &mut st))
                .collect();
            let m = lanes_of(&rs);
            let (ok, mu, v) = run(&m, [true; LANES]);
            // SAFETY: AVX-512F checked above.
            let (ok2, mu2, v2) = unsafe { wide(&m) };
            assert_eq!(ok, ok2);
            for l in 0..LANES {
                assert_eq!(mu.0[l].to_bits(), mu2.0[l].to_bits());
                for i in 0..4 {
                    assert_eq!(v[i].0[l].to_bits(), v2[i].0[l].to_bits());
                }
            }
        }
    }
}
