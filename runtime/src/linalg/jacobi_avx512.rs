//! The sweeps of the cyclic Jacobi of [`super::jacobi_lanes`] for 3×3 and 4×4 matrices in
//! AVX-512 registers ([`Zmm2`]), for processors that have them: the rotation and the
//! convergence test are the portable code's ([`rotate_entries`], [`rotate_row`],
//! [`sweep_test`], written once over [`Lanes`]),
//! with the rotation helpers of [`Zmm2`] fused (masked fused multiply-adds,
//! [`super::lane_ops`]): the results agree with the portable sweeps to rounding, and each
//! lane's bits still do not depend on the other lanes.
//!
//! What differs is the driver. The portable sweeps index entries kept in memory at run time,
//! and each rotation's eigenvector update sits between the square roots and divisions of
//! consecutive rotations, which the rotations wait on. Here the (p, q) pairs are constants,
//! so the entries stay in registers, and the eigenvector updates of a sweep are applied after
//! the sweep's rotations (each reads only its rotation's c, s and acting lanes, in rotation
//! order, as before), so the processor overlaps them with the next chain instead of stalling.
//! The 4×4 rotations do not skip a rotation no lane takes (`SKIP_IDLE` of
//! [`rotate_entries`] off: masked no-ops instead of a branch), so a sweep is one basic block,
//! which the compiler schedules and allocates with fewer spills (about 1.5 % of a
//! parameterization's projected Hessian; the 3×3 sweeps showed no difference either way).
//! The eigenvectors stay in memory and are updated one row at a time (a row's M entries in
//! registers): with both matrices in registers, two registers per entry, the 32 registers
//! did not hold them and a third of the instructions moved spilled values.
//! On an AVX-512 processor (AMD Zen 5) a batch of 16 random 4×4 matrices took 580 ns instead
//! of 790, and the projected Hessian of a parameterization 6 % less time
//! (`docs/benchmarks.md`). `tests::the_avx512_sweeps_give_the_bits_of_the_portable_ones`
//! checks the bits on random matrices, non-finite lanes included.

// Index loops are the natural form of these small matrix computations.
#![allow(clippy::needless_range_loop)]
#![cfg(target_arch = "x86_64")]

use super::jacobi_lanes::{
    LANES, LaneMatrix, MAX_LANE_SWEEPS, Rotation, rotate_entries, rotate_row, round_robin,
    sweep_test,
};
use super::lane_ops::{K, Lanes, Zmm2};

/// The eigenvector updates of one sweep's rotations (`rotations[k]` in the (p, q) plane
/// `pairs[k]`, `None` where no lane acted), applied to `v` in memory one row at a time: a
/// rotation mixes columns p and q within each row, so a row's updates need only its own M
/// entries in registers, and the matrix being decomposed stays in registers beside them.
#[inline(always)]
fn vectors<const M: usize, const R: usize>(
    v: &mut LaneMatrix<M>,
    pairs: [(usize, usize); R],
    rotations: [Option<Rotation<Zmm2>>; R],
) {
    for row in v.iter_mut() {
        let mut x = [Zmm2::splat(0.0); M];
        for j in 0..M {
            x[j] = Zmm2::load(&row[j]);
        }
        for k in 0..R {
            if let Some(r) = rotations[k] {
                rotate_row(&mut x, pairs[k].0, pairs[k].1, r);
            }
        }
        for j in 0..M {
            x[j].store(&mut row[j]);
        }
    }
}

/// Loads, the sweeps of `$sweep` (rotations, then their eigenvector updates), the
/// convergence test of the portable code, stores.
macro_rules! jacobi_body {
    ($m:literal, $am:ident, $vm:ident, |$a:ident, $v:ident, $live:ident| $sweep:block) => {{
        const M: usize = $m;
        let mut $a = [[Zmm2::splat(0.0); M]; M];
        for i in 0..M {
            for j in 0..M {
                $a[i][j] = Zmm2::load(&$am[i][j]);
                Zmm2::splat(if i == j { 1.0 } else { 0.0 }).store(&mut $vm[i][j]);
            }
        }
        let $v = $vm;
        let mut $live = K::ALL;
        let mut ok = K::NONE;
        for _ in 0..MAX_LANE_SWEEPS {
            if !sweep_test::<Zmm2, M>(&$a, &mut $live, &mut ok) {
                break;
            }
            $sweep
        }
        for i in 0..M {
            for j in 0..M {
                $a[i][j].store(&mut $am[i][j]);
            }
        }
        Zmm2::lanes_of(ok)
    }};
}

const PAIRS3: ([(u8, u8); 120], usize) = round_robin::<3>();
const PAIRS4: ([(u8, u8); 120], usize) = round_robin::<4>();

/// One rotation `k` of the round-robin order of `$pairs` (as constants).
macro_rules! pair {
    ($pairs:ident, $k:literal) => {
        ($pairs.0[$k].0 as usize, $pairs.0[$k].1 as usize)
    };
}

#[target_feature(enable = "avx512f")]
fn jacobi3(am: &mut LaneMatrix<3>, vm: &mut LaneMatrix<3>) -> [bool; LANES] {
    const _: () = assert!(PAIRS3.1 == 3);
    jacobi_body!(3, am, vm, |a, v, live| {
        const P0: (usize, usize) = pair!(PAIRS3, 0);
        const P1: (usize, usize) = pair!(PAIRS3, 1);
        const P2: (usize, usize) = pair!(PAIRS3, 2);
        let r0 = rotate_entries::<Zmm2, 3, true>(&mut a, P0.0, P0.1, live);
        let r1 = rotate_entries::<Zmm2, 3, true>(&mut a, P1.0, P1.1, live);
        let r2 = rotate_entries::<Zmm2, 3, true>(&mut a, P2.0, P2.1, live);
        vectors::<3, 3>(v, [P0, P1, P2], [r0, r1, r2]);
    })
}

#[target_feature(enable = "avx512f")]
fn jacobi4(am: &mut LaneMatrix<4>, vm: &mut LaneMatrix<4>) -> [bool; LANES] {
    const _: () = assert!(PAIRS4.1 == 6);
    jacobi_body!(4, am, vm, |a, v, live| {
        const P0: (usize, usize) = pair!(PAIRS4, 0);
        const P1: (usize, usize) = pair!(PAIRS4, 1);
        const P2: (usize, usize) = pair!(PAIRS4, 2);
        const P3: (usize, usize) = pair!(PAIRS4, 3);
        const P4: (usize, usize) = pair!(PAIRS4, 4);
        const P5: (usize, usize) = pair!(PAIRS4, 5);
        let r0 = rotate_entries::<Zmm2, 4, false>(&mut a, P0.0, P0.1, live);
        let r1 = rotate_entries::<Zmm2, 4, false>(&mut a, P1.0, P1.1, live);
        let r2 = rotate_entries::<Zmm2, 4, false>(&mut a, P2.0, P2.1, live);
        let r3 = rotate_entries::<Zmm2, 4, false>(&mut a, P3.0, P3.1, live);
        let r4 = rotate_entries::<Zmm2, 4, false>(&mut a, P4.0, P4.1, live);
        let r5 = rotate_entries::<Zmm2, 4, false>(&mut a, P5.0, P5.1, live);
        vectors::<4, 6>(v, [P0, P1, P2, P3, P4, P5], [r0, r1, r2, r3, r4, r5]);
    })
}

/// The AVX-512 decomposition for M = 3 and 4 (`None` for other sizes: the caller takes the
/// portable code).
///
/// # Safety
/// The processor must support AVX-512F.
#[inline(always)]
pub(crate) unsafe fn jacobi_small<const M: usize>(
    a: &mut LaneMatrix<M>,
    v: &mut LaneMatrix<M>,
) -> Option<[bool; LANES]> {
    let (pa, pv) = (a as *mut LaneMatrix<M>, v as *mut LaneMatrix<M>);
    // SAFETY: M is checked, so the casts are to the same type; the caller guarantees
    // AVX-512F.
    unsafe {
        match M {
            3 => Some(jacobi3(
                &mut *pa.cast::<LaneMatrix<3>>(),
                &mut *pv.cast::<LaneMatrix<3>>(),
            )),
            4 => Some(jacobi4(
                &mut *pa.cast::<LaneMatrix<4>>(),
                &mut *pv.cast::<LaneMatrix<4>>(),
            )),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::jacobi_lanes::{jacobi_lanes_generic, lane_zeros};
    use super::*;

    use crate::linalg::test_lcg as lcg;

    /// Random symmetric matrices over a wide range of scales, some lanes with repeated
    /// entries (exact ties), zeros, tiny entries or a non-finite entry.
    fn matrices<const M: usize>(seed: u64) -> LaneMatrix<M> {
        let mut st = seed;
        let mut a = lane_zeros::<M>();
        for l in 0..LANES {
            let scale = 10f64.powf(3.0 * lcg(&mut st));
            for i in 0..M {
                for j in 0..=i {
                    let x = match l % 8 {
                        0 if i != j => 0.0,
                        1 => 0.5,
                        2 if i != j => 1e-160 * lcg(&mut st),
                        3 if i != j => 1e-9 * lcg(&mut st),
                        _ => lcg(&mut st) * scale,
                    };
                    a[i][j].0[l] = x;
                    a[j][i].0[l] = x;
                }
            }
        }
        if seed.is_multiple_of(3) {
            a[0][M - 1].0[5] = f64::NAN;
            a[M - 1][0].0[5] = f64::NAN;
            a[1][1].0[13] = f64::INFINITY;
        }
        a
    }

    /// Lane `l`'s largest entry magnitude in `a`.
    fn lane_max<const M: usize>(a: &LaneMatrix<M>, l: usize) -> f64 {
        a.iter().flatten().map(|w| w.0[l].abs()).fold(0.0, f64::max)
    }

    /// The AVX-512 sweeps against the matrices themselves and against the portable sweeps:
    /// the same lanes converge, and in each converged lane V is orthonormal, V·diag(a)·Vᵀ
    /// rebuilds the matrix, and the sorted eigenvalues are the portable ones, all within a
    /// small multiple of the rounding of the lane's largest entry (the fused rotations round
    /// differently from the portable ones). A lane decomposed alone (the other lanes zero)
    /// gives the bits it gives beside the others.
    fn agrees<const M: usize>(seed: u64) {
        let a0 = matrices::<M>(seed);
        let (mut a1, mut v1) = (a0, lane_zeros::<M>());
        let (mut a2, mut v2) = (a0, lane_zeros::<M>());
        let ok1 = jacobi_lanes_generic::<M>(&mut a1, &mut v1);
        // SAFETY: checked by the caller.
        let ok2 = unsafe { jacobi_small::<M>(&mut a2, &mut v2) }.expect("M = 3 or 4");
        assert_eq!(ok1, ok2, "M = {M}, seed {seed}");
        let tol = 64.0 * M as f64 * f64::EPSILON;
        for l in (0..LANES).filter(|&l| ok1[l]) {
            let scale = lane_max(&a0, l);
            let sorted = |a: &LaneMatrix<M>| {
                let mut ev: Vec<f64> = (0..M).map(|i| a[i][i].0[l]).collect();
                ev.sort_by(f64::total_cmp);
                ev
            };
            for (x, y) in sorted(&a1).iter().zip(sorted(&a2)) {
                assert!((x - y).abs() <= tol * scale, "M={M} seed {seed} lane {l}: eigenvalues {x:e} vs {y:e}");
            }
            for i in 0..M {
                for j in 0..M {
                    let dot: f64 = (0..M).map(|k| v2[k][i].0[l] * v2[k][j].0[l]).sum();
                    let id = if i == j { 1.0 } else { 0.0 };
                    assert!((dot - id).abs() <= tol, "M={M} seed {seed} lane {l}: VᵀV[{i}][{j}] = {dot:e}");
                    let rebuilt: f64 = (0..M).map(|k| v2[i][k].0[l] * a2[k][k].0[l] * v2[j][k].0[l]).sum();
                    let want = a0[i][j].0[l];
                    assert!(
                        (rebuilt - want).abs() <= tol * scale,
                        "M={M} seed {seed} lane {l}: rebuilt [{i}][{j}] {rebuilt:e} vs {want:e}"
                    );
                }
            }
        }
        for l in [1, 4, 9, 15] {
            let mut alone = lane_zeros::<M>();
            for i in 0..M {
                for j in 0..M {
                    alone[i][j].0[l] = a0[i][j].0[l];
                }
            }
            let mut v3 = lane_zeros::<M>();
            // SAFETY: checked by the caller.
            let ok3 = unsafe { jacobi_small::<M>(&mut alone, &mut v3) }.expect("M = 3 or 4");
            assert_eq!(ok3[l], ok2[l], "M={M} seed {seed} lane {l} alone");
            if ok2[l] {
                for i in 0..M {
                    for j in 0..M {
                        assert_eq!(alone[i][j].0[l].to_bits(), a2[i][j].0[l].to_bits(), "M={M} seed {seed} lane {l}");
                        assert_eq!(v3[i][j].0[l].to_bits(), v2[i][j].0[l].to_bits(), "M={M} seed {seed} lane {l}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_avx512_sweeps_decompose_as_the_portable_ones_do() {
        if !std::arch::is_x86_feature_detected!("avx512f") {
            eprintln!("this processor has no AVX-512F: the AVX-512 sweeps cannot run here");
            return;
        }
        for seed in 0..300 {
            agrees::<3>(seed);
            agrees::<4>(seed);
        }
    }
}
