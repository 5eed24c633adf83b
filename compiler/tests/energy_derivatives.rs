//! Mesh-energy derivatives of every example against central finite differences
//! of the energy, and Hessian·v against the matrix-free HVP, at random x.

// Dense reference computations index their matrices by row and column.
#![allow(clippy::needless_range_loop)]

use mad::energy::{EnergyProgram, MeshEnergy};
use mad_runtime::mesh::load_mesh;

fn example(name: &str) -> EnergyProgram {
    let path = format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    match EnergyProgram::compile_file(&path) {
        Ok(p) => p,
        Err(e) => panic!("{name}: {e}"),
    }
}

/// A deterministic pseudo-random value in [-1, 1).
fn rnd(seed: &mut u64) -> f64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
}

/// The mesh's positions perturbed by `amp`.
fn random_x(me: &MeshEnergy, amp: f64, seed: u64) -> Vec<f64> {
    let mut s = seed;
    me.default_x()
        .iter()
        .map(|&v| v + amp * rnd(&mut s))
        .collect()
}

fn dense_hessian(me: &MeshEnergy, vals: &[f64]) -> Vec<Vec<f64>> {
    let n = me.ndofs();
    let p = me.pattern();
    let mut h = vec![vec![0.0; n]; n];
    for r in 0..n {
        for k in p.row_ptr[r]..p.row_ptr[r + 1] {
            h[r][p.col_idx[k] as usize] = vals[k];
        }
    }
    h
}

fn check_example(file: &str, mesh: &str, amp: f64) {
    let prog = example(file);
    let mesh = load_mesh(mesh).unwrap();
    let me = prog.bind(&mesh).unwrap();
    let n = me.ndofs();
    let x = random_x(&me, amp, 7);
    let e0 = me.energy(&x).unwrap();
    let mut g = vec![0.0; n];
    let e1 = me.gradient(&x, &mut g).unwrap();
    let mut g2 = vec![0.0; n];
    let mut hv = vec![0.0; me.nnz()];
    let e2 = me.hessian(&x, &mut g2, &mut hv, false).unwrap();
    assert!(
        (e0 - e1).abs() <= 1e-12 * e0.abs().max(1.0),
        "{file}: energy {e0} vs {e1}"
    );
    assert!(
        (e0 - e2).abs() <= 1e-12 * e0.abs().max(1.0),
        "{file}: energy {e0} vs {e2}"
    );
    assert!(e0.is_finite() && e0 != 0.0, "{file}: energy {e0}");
    let h = dense_hessian(&me, &hv);
    let step = 1e-6;
    let gscale = g.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-3);
    let hscale = hv.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-3);
    // Gradient vs central differences of the energy; Hessian columns vs central
    // differences of the energy's second differences (diagonal) and of the gradient.
    for i in (0..n).step_by((n / 23).max(1)) {
        let mut xp = x.clone();
        let mut xm = x.clone();
        xp[i] += step;
        xm[i] -= step;
        let fd = (me.energy(&xp).unwrap() - me.energy(&xm).unwrap()) / (2.0 * step);
        assert!(
            (fd - g[i]).abs() <= 1e-5 * gscale,
            "{file}: grad[{i}] = {} vs fd {fd}",
            g[i]
        );
        assert_eq!(g[i], g2[i], "{file}: gradient of the Hessian kernel");
        let ed = (me.energy(&xp).unwrap() - 2.0 * e0 + me.energy(&xm).unwrap()) / (step * step);
        assert!(
            (ed - h[i][i]).abs() <= 2e-3 * hscale,
            "{file}: H[{i}][{i}] = {} vs fd {ed}",
            h[i][i]
        );
        let (mut gp, mut gm) = (vec![0.0; n], vec![0.0; n]);
        me.gradient(&xp, &mut gp).unwrap();
        me.gradient(&xm, &mut gm).unwrap();
        for j in 0..n {
            let fd = (gp[j] - gm[j]) / (2.0 * step);
            assert!(
                (fd - h[j][i]).abs() <= 1e-5 * hscale,
                "{file}: H[{j}][{i}] = {} vs fd {fd}",
                h[j][i]
            );
        }
    }
    // H·v (assembled) vs the matrix-free HVP.
    let mut s = 99;
    let v: Vec<f64> = (0..n).map(|_| rnd(&mut s)).collect();
    let mut out = vec![0.0; n];
    me.hvp(&x, &v, &mut out).unwrap();
    let mut hvv = vec![0.0; n];
    me.pattern().spmv(&hv, &v, &mut hvv);
    for i in 0..n {
        assert!(
            (out[i] - hvv[i]).abs() <= 1e-10 * hscale * 10.0,
            "{file}: hvp[{i}] = {} vs H·v {}",
            out[i],
            hvv[i]
        );
    }
}

#[test]
fn mass_spring_derivatives() {
    check_example("mass_spring.mad", "grid:4x4", 0.2);
}

#[test]
fn cloth_derivatives() {
    check_example("cloth.mad", "grid:4x3", 0.2);
}

#[test]
fn membrane_derivatives() {
    check_example("membrane.mad", "grid:3x4", 0.2);
}

#[test]
fn bending_derivatives() {
    check_example("bending.mad", "sphere:1", 0.1);
}

#[test]
fn objective_weights_scale_terms() {
    let prog = example("bending.mad");
    let mesh = load_mesh("grid:3x3").unwrap();
    let mut me = prog.bind(&mesh).unwrap();
    let x = random_x(&me, 0.2, 3);
    let e = me.energy(&x).unwrap();
    me.set_param("kb", 0.2).unwrap();
    me.set_param("ks", 20.0).unwrap();
    let e2 = me.energy(&x).unwrap();
    assert!((e2 - 2.0 * e).abs() <= 1e-12 * e.abs());
}

#[test]
fn residual_jacobian_matches_differences() {
    let prog = example("fit_residual.mad");
    let mesh = load_mesh("grid:3x3").unwrap();
    let me = prog.bind(&mesh).unwrap();
    let n = me.ndofs();
    let x = random_x(&me, 0.2, 5);
    let (r, j) = me.jacobian(&x).unwrap();
    assert_eq!(r.len(), me.num_residuals());
    assert_eq!(j.nrows, r.len());
    let step = 1e-6;
    for c in 0..n {
        let mut xp = x.clone();
        let mut xm = x.clone();
        xp[c] += step;
        xm[c] -= step;
        let (rp, _) = me.jacobian(&xp).unwrap();
        let (rm, _) = me.jacobian(&xm).unwrap();
        for row in 0..j.nrows {
            let fd = (rp[row] - rm[row]) / (2.0 * step);
            let mut val = 0.0;
            for k in j.row_ptr[row]..j.row_ptr[row + 1] {
                if j.col_idx[k] as usize == c {
                    val += j.values[k];
                }
            }
            assert!((fd - val).abs() <= 1e-7, "J[{row}][{c}] = {val} vs fd {fd}");
        }
    }
}
