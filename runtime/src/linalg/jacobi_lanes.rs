//! Cyclic Jacobi on [`LANES`] small symmetric matrices at once, one matrix per SIMD lane.
//!
//! The PSD projection of element Hessians decomposes thousands of independent M×M matrices
//! (M = 3…6 after the translation reduction of [`super::translation`]). One matrix at a time,
//! every Jacobi rotation is a serial chain of divisions and square roots,
//! and the processor mostly waits on it. Here the entries are stored lane-innermost
//! (`a[i][j].0[lane]`), so each step of the algorithm is the same operation on `LANES`
//! independent matrices: the loops over lanes compile to vector instructions (two lanes per
//! SSE2 register, four per AVX register, eight per AVX-512 register, the widest the processor
//! has chosen at run time) and the chains of different lanes overlap. [`LANES`] is 16 so that
//! even with AVX-512 each step is two independent instructions: the rotations wait on
//! divisions and square roots, and one register's chain alone leaves the divider idle
//! between them (16 lanes were 7–9 % faster than 8 per parameterization Hessian on an
//! AVX-512 processor, `docs/benchmarks.md`).
//!
//! **Lanes are independent, bit for bit.** A lane's result does not depend on what the other
//! lanes hold or on how many there are: a lane stops rotating once it has converged (every
//! later update is a select that keeps its old values), and a rotation whose pivot entry is 0
//! is skipped the same way. The same matrix decomposed alone (the other lanes zero) or beside
//! any others gives the same bits, so a batched projection equals the block-by-block one.
//!
//! The algorithm is the one of [`super::sym_eigen`] with the pairs of a sweep in round-robin
//! order (rounds of disjoint pairs, whose rotations overlap in the pipeline): rotations with the
//! smaller angle (Numerical Recipes' form), pivot entries updated in closed form, eigenvectors
//! accumulated; a lane has converged when Σ_{p<q} a_pq² ≤ 10⁻³⁴ · Σ_p a_pp² (or the
//! off-diagonal part is exactly 0). The caller scales each matrix so its largest entry is near
//! 1 (a power of two: exact), so no square formed here overflows or underflows destructively.
//! A lane not converged after [`MAX_LANE_SWEEPS`] sweeps, or holding a non-finite value, is
//! reported as such and its contents are unspecified.

// Index loops are the natural form of these matrix sweeps (as in `sym_eigen`).
#![allow(clippy::needless_range_loop)]

use super::lane_ops::{LaneMask, Lanes};

/// Matrices decomposed together (module docs).
pub const LANES: usize = 16;

/// Sweep cap per lane (4×4 matrices typically converge in 3–5 sweeps, 9×9 in 6–8).
pub const MAX_LANE_SWEEPS: usize = 40;

/// One value per lane. The element-wise operations below are written lane by lane without
/// branches, as plain loops over the lanes (which the compiler turns into vector instructions
/// wherever they are inlined; `std::array::from_fn` over 16 lanes was sometimes left as a
/// call of a scalar loop).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(64))]
pub struct Wide(pub [f64; LANES]);

/// A per-lane condition: all bits set where true.
#[derive(Clone, Copy)]
pub(crate) struct Mask(pub(crate) [u64; LANES]);

impl Wide {
    pub(crate) const ZERO: Wide = Wide([0.0; LANES]);
    pub(crate) const ONE: Wide = Wide([1.0; LANES]);

    #[inline(always)]
    pub(crate) fn splat(x: f64) -> Wide {
        Wide([x; LANES])
    }
    #[inline(always)]
    pub(crate) fn map2(self, o: Wide, f: impl Fn(f64, f64) -> f64) -> Wide {
        let mut out = [0.0; LANES];
        for i in 0..LANES {
            out[i] = f(self.0[i], o.0[i]);
        }
        Wide(out)
    }
    #[inline(always)]
    pub(crate) fn map(self, f: impl Fn(f64) -> f64) -> Wide {
        let mut out = [0.0; LANES];
        for i in 0..LANES {
            out[i] = f(self.0[i]);
        }
        Wide(out)
    }
    #[inline(always)]
    pub(crate) fn cmp(self, o: Wide, f: impl Fn(f64, f64) -> bool) -> Mask {
        let mut out = [0u64; LANES];
        for i in 0..LANES {
            out[i] = if f(self.0[i], o.0[i]) { u64::MAX } else { 0 };
        }
        Mask(out)
    }
    #[inline(always)]
    pub(crate) fn abs(self) -> Wide {
        // Clearing the sign bit, as `f64::abs` does.
        self.map(|x| f64::from_bits(x.to_bits() & !(1u64 << 63)))
    }
    #[inline(always)]
    pub(crate) fn sqrt(self) -> Wide {
        self.map(f64::sqrt)
    }
}

impl Mask {
    #[inline(always)]
    pub(crate) fn and(self, o: Mask) -> Mask {
        let mut out = [0u64; LANES];
        for i in 0..LANES {
            out[i] = self.0[i] & o.0[i];
        }
        Mask(out)
    }
    #[inline(always)]
    pub(crate) fn or(self, o: Mask) -> Mask {
        let mut out = [0u64; LANES];
        for i in 0..LANES {
            out[i] = self.0[i] | o.0[i];
        }
        Mask(out)
    }
    #[inline(always)]
    pub(crate) fn not(self) -> Mask {
        let mut out = [0u64; LANES];
        for i in 0..LANES {
            out[i] = !self.0[i];
        }
        Mask(out)
    }
    /// `a` where the mask is set, `b` elsewhere (bitwise: exact).
    #[inline(always)]
    pub(crate) fn select(self, a: Wide, b: Wide) -> Wide {
        let mut out = [0.0; LANES];
        for i in 0..LANES {
            out[i] = f64::from_bits((a.0[i].to_bits() & self.0[i]) | (b.0[i].to_bits() & !self.0[i]));
        }
        Wide(out)
    }
}

impl std::ops::Add for Wide {
    type Output = Wide;
    #[inline(always)]
    fn add(self, o: Wide) -> Wide {
        self.map2(o, |a, b| a + b)
    }
}
impl std::ops::Sub for Wide {
    type Output = Wide;
    #[inline(always)]
    fn sub(self, o: Wide) -> Wide {
        self.map2(o, |a, b| a - b)
    }
}
impl std::ops::Mul for Wide {
    type Output = Wide;
    #[inline(always)]
    fn mul(self, o: Wide) -> Wide {
        self.map2(o, |a, b| a * b)
    }
}
impl std::ops::Div for Wide {
    type Output = Wide;
    #[inline(always)]
    fn div(self, o: Wide) -> Wide {
        self.map2(o, |a, b| a / b)
    }
}
impl std::ops::Neg for Wide {
    type Output = Wide;
    #[inline(always)]
    fn neg(self) -> Wide {
        self.map(|a| -a)
    }
}

/// M×M symmetric matrices, one per lane: `m[i][j].0[lane]`.
pub type LaneMatrix<const M: usize> = [[Wide; M]; M];

/// A zero [`LaneMatrix`].
pub const fn lane_zeros<const M: usize>() -> LaneMatrix<M> {
    [[Wide([0.0; LANES]); M]; M]
}

/// Decomposes the symmetric matrices in `a` (both triangles must hold the values): afterwards
/// the diagonal `a[j][j]` holds the eigenvalues (unsorted) and column j of `v` (`v[i][j]`,
/// i = 0..M) the eigenvector of eigenvalue j, lane by lane. Returns, per lane, whether it
/// converged with finite values.
pub fn jacobi_lanes<const M: usize>(a: &mut LaneMatrix<M>, v: &mut LaneMatrix<M>) -> [bool; LANES] {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the processor supports AVX-512F (checked just above).
            return unsafe { jacobi_lanes_avx512::<M>(a, v) };
        }
        if std::arch::is_x86_feature_detected!("avx") {
            // SAFETY: the processor supports AVX (checked just above).
            return unsafe { jacobi_lanes_avx::<M>(a, v) };
        }
    }
    jacobi_lanes_generic::<M>(a, v)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn jacobi_lanes_avx512<const M: usize>(a: &mut LaneMatrix<M>, v: &mut LaneMatrix<M>) -> [bool; LANES] {
    // SAFETY: this function is compiled for and only called on AVX-512F processors.
    if let Some(ok) = unsafe { super::jacobi_avx512::jacobi_small::<M>(a, v) } {
        return ok;
    }
    jacobi_lanes_generic::<M>(a, v)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
fn jacobi_lanes_avx<const M: usize>(a: &mut LaneMatrix<M>, v: &mut LaneMatrix<M>) -> [bool; LANES] {
    jacobi_lanes_generic::<M>(a, v)
}

/// The portable body; `#[inline(always)]` so that the AVX entry compiles its own copy with
/// AVX enabled. No fused multiply-add is formed (Rust does not contract `a*b + c`, and the
/// rotation helpers of [`Wide`] round each operation), so both copies round identically.
#[inline(always)]
pub(crate) fn jacobi_lanes_generic<const M: usize>(a: &mut LaneMatrix<M>, v: &mut LaneMatrix<M>) -> [bool; LANES] {
    for (i, row) in v.iter_mut().enumerate() {
        for (j, x) in row.iter_mut().enumerate() {
            *x = if i == j { Wide::ONE } else { Wide::ZERO };
        }
    }
    // `live`: lanes still rotating; `ok`: lanes that stopped converged with finite values.
    // The test runs in the lanes too (a lane-by-lane loop with branches would make the
    // compiler take every entry apart into scalars).
    let mut live = Mask([u64::MAX; LANES]);
    let mut ok = Mask([0; LANES]);
    for _ in 0..MAX_LANE_SWEEPS {
        if !sweep_test::<Wide, M>(a, &mut live, &mut ok) {
            break;
        }
        let (pairs, count) = const { round_robin::<M>() };
        for &(p, q) in &pairs[..count] {
            let (p, q) = (p as usize, q as usize);
            if let Some(r) = rotate_entries::<Wide, M, true>(a, p, q, live) {
                rotate_vectors::<Wide, M>(v, p, q, r);
            }
        }
    }
    std::array::from_fn(|l| ok.0[l] != 0)
}

/// The (p, q) pairs of one sweep in round-robin order (the circle method): each round is a
/// set of disjoint pairs, so the rotation angles of a round depend on entries that the other
/// rotations of the round do not change, and their chains of divisions and square roots
/// overlap. (Rotations on disjoint pairs commute, so this is the cyclic method in another
/// order.) Returns the pairs and their count M(M−1)/2; M ≤ 16.
pub(crate) const fn round_robin<const M: usize>() -> ([(u8, u8); 120], usize) {
    let mut out = [(0u8, 0u8); 120];
    let mut count = 0;
    // An even number of players; with M odd the last one is a bye.
    let n = if M.is_multiple_of(2) { M } else { M + 1 };
    if n < 2 {
        return (out, 0);
    }
    let mut r = 0;
    while r < n - 1 {
        // Player n−1 meets r; the others meet across the circle of the first n−1.
        let mut i = 0;
        while i < n / 2 {
            let (a, b) = if i == 0 {
                (r, n - 1)
            } else {
                ((r + i) % (n - 1), (r + n - 1 - i) % (n - 1))
            };
            let (p, q) = if a < b { (a, b) } else { (b, a) };
            if q < M {
                out[count] = (p as u8, q as u8);
                count += 1;
            }
            i += 1;
        }
        r += 1;
    }
    (out, count)
}

/// The convergence test before a sweep, written once for both lane types: a lane has
/// converged when Σ_{p<q} a_pq² ≤ 10⁻³⁴ · Σ_p a_pp² (or the off-diagonal part is exactly 0)
/// with finite sums; such lanes (and non-finite ones) leave `live`, the converged ones join
/// `ok`. Returns whether any lane is still live.
#[inline(always)]
pub(crate) fn sweep_test<L: Lanes, const M: usize>(a: &[[L; M]; M], live: &mut L::Mask, ok: &mut L::Mask) -> bool {
    let mut off = L::splat(0.0);
    let mut diag = L::splat(0.0);
    for p in 0..M {
        diag = diag + a[p][p] * a[p][p];
        for q in (p + 1)..M {
            off = off + a[p][q] * a[p][q];
        }
    }
    let finite = off.finite().and(diag.finite());
    let converged = off.eq(L::splat(0.0)).or(off.le(L::splat(1e-34) * diag));
    *ok = ok.or(live.and(finite).and(converged));
    *live = live.and(finite).and(converged.not());
    !live.none()
}

/// What a rotation hands to the eigenvector update: c, s and the acting lanes.
pub(crate) type Rotation<L> = (L, L, <L as Lanes>::Mask);

/// One Jacobi rotation in the (p, q) plane of every `live` lane whose |a_pq| is above
/// 1e-150, on the matrix entries (both triangles); the other lanes keep their values
/// exactly. With `SKIP_IDLE`, `None` when no lane acts (a branch around the rotation);
/// without, the rotation runs with no lane selected, which gives the same bits. Written once for both lane types (with constant p and
/// q the AVX-512 sweeps keep the entries in registers).
#[inline(always)]
pub(crate) fn rotate_entries<L: Lanes, const M: usize, const SKIP_IDLE: bool>(
    a: &mut [[L; M]; M],
    p: usize,
    q: usize,
    live: L::Mask,
) -> Option<Rotation<L>> {
    let (app, aqq, apq) = (a[p][p], a[q][q], a[p][q]);
    // An entry below 1e-150 is left alone: with the matrix scaled to a largest entry near 1
    // it is far below the convergence test, and its square could underflow below.
    let act = L::opaque(live.and(apq.abs().gt(L::splat(1e-150))));
    if SKIP_IDLE && act.none() {
        return None;
    }
    // The rotation of the smaller angle (Numerical Recipes' t = 1 / (|θ| + √(θ² + 1)),
    // θ = τ / 2a_pq, τ = a_qq − a_pp), written with one division: with r = √(τ² + 4a_pq²)
    // and den = |τ| + r, t = sgn(τ)·2a_pq / den, and 1 + t² = 2r·den / den², so with
    // inv = 1 / √(2r·den):
    //   c = 1/√(1 + t²) = den·inv,   s = t·c = sgn(τ)·2a_pq·inv,   t = sgn(τ)·2a_pq·2r·inv².
    // (Square roots and divisions share one slow unit that the rotations wait on; this takes
    // three of its operations instead of four. No overflow for scaled entries.)
    let tau = aqq - app;
    let two_apq = apq + apq;
    let tau2 = tau * tau;
    let sum2 = tau2 + two_apq * two_apq;
    // Small angles (the last sweep, where |a_pq| is far below |τ|): where τ² + 4a_pq² rounds
    // to τ² in every acting lane, r = √(τ²) is |τ| exactly, den = 2|τ| and 2r·den = 4τ²
    // (scaling by 2 and 4 is exact), whose square root is 2|τ| exactly: both square roots
    // are skipped and the bits are those of the general formula.
    let small = act.and(sum2.ne(tau2)).none();
    let (two_r, root) = if small {
        let two_r = tau.abs() + tau.abs();
        (two_r, two_r)
    } else {
        let r = sum2.sqrt();
        let two_r = r + r;
        (two_r, (two_r * (tau.abs() + r)).sqrt())
    };
    let den = two_r * L::splat(0.5) + tau.abs();
    // Inactive lanes may hold NaN here (0/0); they are never selected.
    let inv = L::splat(1.0) / root;
    let signed = L::select(tau.lt(L::splat(0.0)), -two_apq, two_apq);
    let c = den * inv;
    let s = signed * inv;
    // (Inactive lanes keep their entries: the updates below select on `act`.)
    let t = signed * two_r * (inv * inv);
    for r in 0..M {
        if r == p || r == q {
            continue;
        }
        let (arp, arq) = (a[r][p], a[r][q]);
        let np = L::rotate_first(act, arp, arq, c, s);
        let nq = L::rotate_second(act, arp, arq, c, s);
        a[r][p] = np;
        a[p][r] = np;
        a[r][q] = nq;
        a[q][r] = nq;
    }
    a[p][p] = L::sub_product(act, app, t, apq);
    a[q][q] = L::add_product(act, aqq, t, apq);
    let zpq = L::select(act, L::splat(0.0), apq);
    a[p][q] = zpq;
    a[q][p] = zpq;
    Some((c, s, act))
}

/// The eigenvector update of a rotation in the (p, q) plane: columns p and q of `v`.
#[inline(always)]
pub(crate) fn rotate_vectors<L: Lanes, const M: usize>(v: &mut [[L; M]; M], p: usize, q: usize, rotation: Rotation<L>) {
    for row in v.iter_mut() {
        rotate_row(row, p, q, rotation);
    }
}

/// The eigenvector update of a rotation in the (p, q) plane on one row of `v`.
#[inline(always)]
pub(crate) fn rotate_row<L: Lanes, const M: usize>(row: &mut [L; M], p: usize, q: usize, rotation: Rotation<L>) {
    let (c, s, act) = rotation;
    let (vp, vq) = (row[p], row[q]);
    row[p] = L::rotate_first(act, vp, vq, c, s);
    row[q] = L::rotate_second(act, vp, vq, c, s);
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::linalg::test_lcg as lcg;

    fn random_lanes<const M: usize>(seed: u64) -> LaneMatrix<M> {
        let mut st = seed;
        let mut a = lane_zeros::<M>();
        for l in 0..LANES {
            for i in 0..M {
                for j in 0..=i {
                    let x = lcg(&mut st);
                    a[i][j].0[l] = x;
                    a[j][i].0[l] = x;
                }
            }
        }
        a
    }

    fn check_decomposition<const M: usize>(seed: u64) {
        let a0 = random_lanes::<M>(seed);
        let mut a = a0;
        let mut v = lane_zeros::<M>();
        assert_eq!(jacobi_lanes::<M>(&mut a, &mut v), [true; LANES]);
        for l in 0..LANES {
            // A v_j = λ_j v_j and VᵀV = I.
            for j in 0..M {
                for i in 0..M {
                    let av: f64 = (0..M).map(|c| a0[i][c].0[l] * v[c][j].0[l]).sum();
                    assert!((av - a[j][j].0[l] * v[i][j].0[l]).abs() < 1e-13, "lane {l}");
                }
                for k in 0..M {
                    let d: f64 = (0..M).map(|i| v[i][j].0[l] * v[i][k].0[l]).sum();
                    let want = if j == k { 1.0 } else { 0.0 };
                    assert!((d - want).abs() < 1e-13);
                }
            }
        }
    }

    #[test]
    fn a_sweep_visits_every_pair_once_in_disjoint_rounds() {
        fn check<const M: usize>() {
            let (pairs, count) = round_robin::<M>();
            assert_eq!(count, M * (M - 1) / 2);
            let mut seen = vec![false; M * M];
            for &(p, q) in &pairs[..count] {
                assert!(p < q && (q as usize) < M);
                assert!(!seen[p as usize * M + q as usize], "M={M}: ({p},{q}) twice");
                seen[p as usize * M + q as usize] = true;
            }
            // Consecutive rounds of ⌊M/2⌋ pairs share no index within a round.
            let per = M / 2;
            if M.is_multiple_of(2) {
                for round in pairs[..count].chunks(per) {
                    let mut used = vec![false; M];
                    for &(p, q) in round {
                        assert!(!used[p as usize] && !used[q as usize], "M={M}: round reuses");
                        used[p as usize] = true;
                        used[q as usize] = true;
                    }
                }
            }
        }
        check::<2>();
        check::<3>();
        check::<4>();
        check::<5>();
        check::<6>();
        check::<9>();
        check::<16>();
    }

    #[test]
    fn the_small_angle_shortcut_gives_the_bits_of_the_general_formula() {
        // Where τ² + 4a² rounds to τ², r = √(τ² + 4a²) is |τ| exactly and √(2r·(|τ| + r))
        // is 2|τ| exactly. Checked over random magnitudes and ratios.
        let mut st = 12345u64;
        let mut hits = 0;
        for _ in 0..200_000 {
            let tau = lcg(&mut st) * 10f64.powf(lcg(&mut st) * 3.0);
            let a = lcg(&mut st) * tau.abs() * 10f64.powf(-6.0 - 12.0 * lcg(&mut st).abs());
            let two_a = a + a;
            let tau2 = tau * tau;
            let sum2 = tau2 + two_a * two_a;
            if sum2 != tau2 {
                continue;
            }
            hits += 1;
            let r = sum2.sqrt();
            assert_eq!(r.to_bits(), tau.abs().to_bits(), "τ = {tau:e}");
            let two_r = r + r;
            let root = (two_r * (tau.abs() + r)).sqrt();
            assert_eq!(root.to_bits(), (tau.abs() + tau.abs()).to_bits(), "τ = {tau:e}");
        }
        assert!(hits > 10_000, "{hits}");
    }

    #[test]
    fn a_rotation_annihilates_its_pivot_entry() {
        // The one-division form of c, s and t: c² + s² = 1, t = s/c, and the rotated
        // (p, q) entry (c² − s²)·a_pq + c·s·(a_pp − a_qq) vanishes, to rounding.
        let mut st = 777u64;
        for _ in 0..20_000 {
            let (app, aqq) = (lcg(&mut st), lcg(&mut st));
            let apq = lcg(&mut st) * 10f64.powf(-4.0 * lcg(&mut st).abs());
            let mut m = lane_zeros::<2>();
            let mut v = lane_zeros::<2>();
            for l in 0..LANES {
                m[0][0].0[l] = app;
                m[1][1].0[l] = aqq;
                m[0][1].0[l] = apq;
                m[1][0].0[l] = apq;
            }
            for (i, row) in v.iter_mut().enumerate() {
                row[i] = Wide::ONE;
            }
            let r = rotate_entries::<Wide, 2, true>(&mut m, 0, 1, Mask([u64::MAX; LANES])).expect("acts");
            rotate_vectors::<Wide, 2>(&mut v, 0, 1, r);
            let (c, s) = (v[0][0].0[0], v[0][1].0[0]);
            assert!((c * c + s * s - 1.0).abs() < 1e-15, "{c} {s}");
            let rotated = (c * c - s * s) * apq + c * s * (app - aqq);
            assert!(rotated.abs() < 1e-15, "{rotated:e}");
            // The closed-form diagonal agrees with the rotated one.
            let dpp = c * c * app - 2.0 * c * s * apq + s * s * aqq;
            assert!((m[0][0].0[0] - dpp).abs() < 1e-15, "{} vs {dpp}", m[0][0].0[0]);
        }
    }

    #[test]
    fn decomposes_random_matrices() {
        for seed in 0..20 {
            check_decomposition::<3>(seed);
            check_decomposition::<4>(seed);
            check_decomposition::<6>(seed);
            check_decomposition::<9>(seed);
        }
    }

    #[test]
    fn a_lane_does_not_depend_on_its_neighbours() {
        let full = random_lanes::<4>(7);
        let (mut a, mut v) = (full, lane_zeros::<4>());
        jacobi_lanes::<4>(&mut a, &mut v);
        for l in 0..LANES {
            let mut alone = lane_zeros::<4>();
            for i in 0..4 {
                for j in 0..4 {
                    alone[i][j].0[l] = full[i][j].0[l];
                }
            }
            let mut va = lane_zeros::<4>();
            jacobi_lanes::<4>(&mut alone, &mut va);
            for i in 0..4 {
                for j in 0..4 {
                    assert_eq!(alone[i][j].0[l].to_bits(), a[i][j].0[l].to_bits());
                    assert_eq!(va[i][j].0[l].to_bits(), v[i][j].0[l].to_bits());
                }
            }
        }
    }

    #[test]
    fn non_finite_lanes_are_reported() {
        let mut a = random_lanes::<3>(3);
        a[0][1].0[2] = f64::NAN;
        a[1][0].0[2] = f64::NAN;
        let mut v = lane_zeros::<3>();
        let mut want = [true; LANES];
        want[2] = false;
        assert_eq!(jacobi_lanes::<3>(&mut a, &mut v), want);
    }
}
