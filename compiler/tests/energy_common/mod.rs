//! Helpers shared by the mesh-energy tests: every Hessian column of a compiled source
//! against central differences of its gradient, and the gradient against central
//! differences of the energy.

// Dense reference computations index their matrices by row and column.
#![allow(clippy::needless_range_loop)]

#![allow(dead_code)]

use mad::energy::EnergyProgram;
use mad_runtime::mesh::load_mesh;

/// A deterministic pseudo-random value in [-0.5, 0.5).
pub fn rnd(seed: &mut u64) -> f64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((*seed >> 11) as f64 / (1u64 << 53) as f64) - 0.5
}

/// Compiles `src`, binds it to `mesh`, perturbs the initial dofs by `amp`, and checks the
/// assembled Hessian column by column against central differences of the gradient, and
/// the gradient against central differences of the energy.
pub fn derivatives_match_differences(src: &str, mesh: &str, amp: f64, seed: u64) {
    let prog = EnergyProgram::compile_str("check.mad", src).expect("compiles");
    let mesh = load_mesh(mesh).expect("mesh");
    let me = prog.bind(&mesh).expect("binds");
    let n = me.ndofs();
    let mut s = seed;
    let x: Vec<f64> = me
        .initial_x()
        .expect("initial dofs")
        .iter()
        .map(|v| v + amp * rnd(&mut s))
        .collect();
    let mut g = vec![0.0; n];
    let mut hv = vec![0.0; me.nnz()];
    me.hessian(&x, &mut g, &mut hv, false).unwrap();
    let p = me.pattern();
    let mut dense = vec![vec![0.0; n]; n];
    for r in 0..n {
        for k in p.row_ptr[r]..p.row_ptr[r + 1] {
            dense[r][p.col_idx[k] as usize] = hv[k];
        }
    }
    let hscale = hv.iter().fold(1e-3f64, |m, v| m.max(v.abs()));
    let gscale = g.iter().fold(1e-3f64, |m, v| m.max(v.abs()));
    let step = 1e-6;
    for i in 0..n {
        let (mut xp, mut xm) = (x.clone(), x.clone());
        xp[i] += step;
        xm[i] -= step;
        let fd = (me.energy(&xp).unwrap() - me.energy(&xm).unwrap()) / (2.0 * step);
        assert!((fd - g[i]).abs() <= 1e-6 * gscale, "g[{i}] = {} vs fd {fd}", g[i]);
        let (mut gp, mut gm) = (vec![0.0; n], vec![0.0; n]);
        me.gradient(&xp, &mut gp).unwrap();
        me.gradient(&xm, &mut gm).unwrap();
        for j in 0..n {
            let fd = (gp[j] - gm[j]) / (2.0 * step);
            assert!(
                (fd - dense[j][i]).abs() <= 1e-6 * hscale,
                "H[{j}][{i}] = {} vs fd {fd}",
                dense[j][i]
            );
        }
    }
}
