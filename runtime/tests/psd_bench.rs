//! Per-block cost of the PSD projection by method and block kind (a timing table, not a
//! check): `cargo test --release -p mad-runtime --test psd_bench -- --ignored --nocapture`.

use std::hint::black_box;
use std::time::Instant;

use mad_runtime::linalg::psd_test::psd_within_tolerance;
use mad_runtime::linalg::sym_eigen::{PsdMethod, PsdWork, project_psd_by};

use crate::blocks_common;
use blocks_common::*;

#[test]
#[ignore = "a timing table, not a check: run with --release -- --ignored --nocapture"]
fn psd_projection_cost_table() {
    const N: usize = 20_000;
    println!(
        "| k | blocks | Jacobi, no test (µs) | test + Jacobi (µs) | test + QL (µs) | pass the test | projected |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|");
    for k in [6usize, 9, 12] {
        for (kind, negative) in [("PSD, rank k−3", false), ("one negative eigenvalue", true)] {
            let mut rng = Lcg(k as u64 * 7 + negative as u64);
            let blocks: Vec<Vec<f64>> = (0..N)
                .map(|_| {
                    let mut w: Vec<f64> = (0..k - 3).map(|_| 0.1 + rng.uniform().abs()).collect();
                    if negative {
                        w[0] *= -0.5;
                    }
                    element_like(k, &w, &mut rng)
                })
                .collect();
            let mut row = format!("| {k} | {kind} |");
            let mut failed = 0usize;
            for method in [
                PsdMethod::Jacobi,
                PsdMethod::SkipThenJacobi,
                PsdMethod::Default,
            ] {
                let mut work = PsdWork::new();
                let mut best = f64::INFINITY;
                for _ in 0..3 {
                    let mut buf = blocks.clone();
                    let t = Instant::now();
                    let mut changed = 0usize;
                    for b in buf.iter_mut() {
                        changed +=
                            usize::from(project_psd_by(black_box(b), k, 0.0, &mut work, method));
                    }
                    black_box(changed);
                    if method == PsdMethod::Default {
                        failed = buf.iter().zip(&blocks).filter(|(b, a)| b != a).count();
                    }
                    best = best.min(t.elapsed().as_secs_f64() / N as f64 * 1e6);
                }
                row += &format!(" {best:.2} |");
            }
            let pass = blocks
                .iter()
                .filter(|b| psd_within_tolerance(b, k, 0.0))
                .count();
            println!(
                "{row} {:.1} % | {:.1} % |",
                100.0 * pass as f64 / N as f64,
                100.0 * failed as f64 / N as f64
            );
        }
    }
}

#[test]
#[ignore = "a timing table, not a check: run with --release -- --ignored --nocapture"]
fn psd_translation_cost_table() {
    use mad_runtime::linalg::differences::project_psd_differences_many;
    use mad_runtime::linalg::translation::{project_psd_translation, project_psd_translation_many};
    const N: usize = 20_000;
    println!(
        "| n × d (k → reduced) | blocks | test + QL, full (µs) | translation-reduced, one by one (µs) | translation-reduced, all at once (µs) | difference coordinates, all at once (µs) |"
    );
    println!("|---|---|---:|---:|---:|---:|");
    for (n, d) in [(2usize, 3usize), (3, 2), (3, 3), (4, 3)] {
        let k = n * d;
        for (kind, negative) in [("PSD, rank k−d", false), ("one negative eigenvalue", true)] {
            let mut rng = Lcg(k as u64 * 13 + n as u64 + negative as u64);
            let blocks: Vec<Vec<f64>> = (0..N)
                .map(|_| {
                    let mut w: Vec<f64> = (0..k - d).map(|_| 0.1 + rng.uniform().abs()).collect();
                    if negative {
                        w[0] *= -0.5;
                    }
                    invariant_block(n, d, &w, &mut rng)
                })
                .collect();
            let mut row = format!("| {n} × {d} ({k} → {}) | {kind} |", k - d);
            let flat: Vec<f64> = blocks.concat();
            for how in 0..4 {
                let mut work = PsdWork::new();
                let mut best = f64::INFINITY;
                for _ in 0..3 {
                    let mut buf = blocks.clone();
                    let mut all = flat.clone();
                    let t = Instant::now();
                    let mut changed = 0usize;
                    if how == 3 {
                        changed += project_psd_differences_many(black_box(&mut all), k, n, &mut work);
                    } else if how == 2 {
                        changed += project_psd_translation_many(black_box(&mut all), k, n, 0.0, &mut work);
                    } else {
                        for b in buf.iter_mut() {
                            let b = black_box(b);
                            changed += usize::from(if how == 1 {
                                project_psd_translation(b, k, n, 0.0, &mut work)
                            } else {
                                project_psd_by(b, k, 0.0, &mut work, PsdMethod::Default)
                            });
                        }
                    }
                    black_box(changed);
                    best = best.min(t.elapsed().as_secs_f64() / N as f64 * 1e6);
                }
                row += &format!(" {best:.2} |");
            }
            println!("{row}");
        }
    }
}
