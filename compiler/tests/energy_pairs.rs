//! `pair` terms: host-supplied vertex pairs (contact), their derivatives against
//! central differences, and incremental pattern updates against a from-scratch bind.

// Dense reference computations index their matrices by row and column.
#![allow(clippy::needless_range_loop)]

use mad::energy::{EnergyProgram, MeshEnergy};
use mad_runtime::mesh::load_mesh;

fn example(name: &str) -> EnergyProgram {
    let path = format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    EnergyProgram::compile_file(&path).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn rnd(seed: &mut u64) -> f64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
}

fn dist(x: &[f64], a: u32, b: u32) -> f64 {
    let (a, b) = (3 * a as usize, 3 * b as usize);
    ((0..3).map(|c| (x[a + c] - x[b + c]).powi(2)).sum::<f64>()).sqrt()
}

/// (pattern, values) of the merged Hessian at x.
fn hessian(me: &MeshEnergy, x: &[f64]) -> (mad_runtime::sparse::CsrPattern, Vec<f64>, Vec<f64>) {
    let mut g = vec![0.0; me.ndofs()];
    let mut h = vec![0.0; me.nnz()];
    me.hessian(x, &mut g, &mut h, false).unwrap();
    let (p, v) = me.hessian_csr(&h).unwrap();
    (p, v, g)
}

fn dense(p: &mad_runtime::sparse::CsrPattern, v: &[f64]) -> Vec<Vec<f64>> {
    let mut h = vec![vec![0.0; p.n]; p.n];
    for r in 0..p.n {
        for k in p.row_ptr[r]..p.row_ptr[r + 1] {
            h[r][p.col_idx[k] as usize] += v[k];
        }
    }
    h
}

#[test]
fn barrier_derivatives_match_finite_differences() {
    let prog = example("contact_barrier.mad");
    let mut me = prog.bind(&load_mesh("grid:4x4").unwrap()).unwrap();
    assert_eq!(me.pair_arity(), 2);
    let mut s = 17;
    let x: Vec<f64> = me
        .default_x()
        .iter()
        .map(|v| v + 0.05 * rnd(&mut s))
        .collect();
    let pairs = [0u32, 5, 3, 6, 10, 15, 1, 12];
    let dmax = pairs
        .chunks(2)
        .map(|p| dist(&x, p[0], p[1]))
        .fold(0.0, f64::max);
    me.set_param("dhat", 1.3 * dmax).unwrap();
    me.set_param("kappa", 2.0).unwrap();
    me.set_pairs(&pairs).unwrap();
    let n = me.ndofs();
    let e0 = me.energy(&x).unwrap();
    let (p, hv, g) = hessian(&me, &x);
    let h = dense(&p, &hv);
    let step = 1e-6;
    let hs = hv.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for &i in &[0usize, 1, 2, 15, 16, 17, 9, 18, 30, 45, 46, 36] {
        let (mut xp, mut xm) = (x.clone(), x.clone());
        xp[i] += step;
        xm[i] -= step;
        let fd = (me.energy(&xp).unwrap() - me.energy(&xm).unwrap()) / (2.0 * step);
        assert!(
            (fd - g[i]).abs() <= 1e-6 * (1.0 + g[i].abs()),
            "grad[{i}] = {} vs fd {fd}",
            g[i]
        );
        let (mut gp, mut gm) = (vec![0.0; n], vec![0.0; n]);
        me.gradient(&xp, &mut gp).unwrap();
        me.gradient(&xm, &mut gm).unwrap();
        for j in 0..n {
            let fd = (gp[j] - gm[j]) / (2.0 * step);
            assert!(
                (fd - h[j][i]).abs() <= 1e-6 * hs,
                "H[{j}][{i}] = {} vs fd {fd}",
                h[j][i]
            );
        }
    }
    let v: Vec<f64> = (0..n).map(|_| rnd(&mut s)).collect();
    let mut out = vec![0.0; n];
    me.hvp(&x, &v, &mut out).unwrap();
    for r in 0..n {
        let want: f64 = (0..n).map(|c| h[r][c] * v[c]).sum();
        assert!((want - out[r]).abs() <= 1e-10 * hs, "HVP[{r}]");
    }
    // The barrier is active: removing the pairs lowers the energy.
    let mut me0 = prog.bind(&load_mesh("grid:4x4").unwrap()).unwrap();
    me0.set_param("dhat", 1.3 * dmax).unwrap();
    assert!(e0 > me0.energy(&x).unwrap());
    // Mixed derivative in kappa: the barrier's gradient / kappa.
    let mut dk = vec![0.0; n];
    me.mixed(&x, "kappa", &mut dk).unwrap();
    me.set_param("kappa", 2.0 + 1e-6).unwrap();
    let mut gp = vec![0.0; n];
    me.gradient(&x, &mut gp).unwrap();
    me.set_param("kappa", 2.0 - 1e-6).unwrap();
    let mut gm = vec![0.0; n];
    me.gradient(&x, &mut gm).unwrap();
    assert!(dk.iter().any(|v| v.abs() > 1e-6));
    for i in 0..n {
        assert!(
            ((gp[i] - gm[i]) / 2e-6 - dk[i]).abs() <= 1e-6 * (1.0 + dk[i].abs()),
            "mixed[{i}]"
        );
    }
    // Coincident vertices: +∞.
    let mut xc = x.clone();
    for c in 0..3 {
        xc[15 + c] = xc[c];
    }
    assert_eq!(me.energy(&xc).unwrap(), f64::INFINITY);
}

#[test]
fn incremental_pairs_match_a_fresh_bind() {
    let prog = example("contact_barrier.mad");
    let mesh = load_mesh("grid:5x5").unwrap();
    let mut me = prog.bind(&mesh).unwrap();
    me.set_param("dhat", 10.0).unwrap();
    let nv = mesh.num_vertices() as u32;
    let mut s = 23;
    let x: Vec<f64> = me
        .default_x()
        .iter()
        .map(|v| v + 0.05 * rnd(&mut s))
        .collect();
    let pick = |s: &mut u64| ((rnd(s) + 1.0) * 0.5 * nv as f64) as u32 % nv;
    for round in 0..6 {
        for _ in 0..8 {
            let live = me.pairs();
            if !live.is_empty() && rnd(&mut s) < 0.0 {
                let (id, _) = live[(pick(&mut s) as usize) % live.len()];
                me.remove_pair(id).unwrap();
            } else {
                let (a, b) = (pick(&mut s), pick(&mut s));
                if a != b {
                    me.add_pair(&[a, b]).unwrap();
                }
            }
        }
        // set_pairs keeps, drops and adds as needed.
        if round == 3 {
            let mut keep: Vec<u32> = me
                .pairs()
                .iter()
                .skip(1)
                .flat_map(|p| p.1.clone())
                .collect();
            keep.extend([0, 24, 3, 19]);
            me.set_pairs(&keep).unwrap();
        }
        let list: Vec<u32> = me.pairs().iter().flat_map(|p| p.1.clone()).collect();
        let mut fresh = prog.bind(&mesh).unwrap();
        fresh.set_param("dhat", 10.0).unwrap();
        fresh.set_pairs(&list).unwrap();
        let (p1, v1, g1) = hessian(&me, &x);
        let (p2, v2, g2) = hessian(&fresh, &x);
        assert_eq!(p1, p2, "round {round}: patterns differ");
        for (a, b) in v1.iter().zip(&v2) {
            assert!(
                (a - b).abs() <= 1e-12 * (1.0 + a.abs()),
                "round {round}: {a} vs {b}"
            );
        }
        for (a, b) in g1.iter().zip(&g2) {
            assert!((a - b).abs() <= 1e-12 * (1.0 + a.abs()));
        }
    }
}

#[test]
fn bad_pairs_are_errors() {
    let prog = example("contact_barrier.mad");
    let mut me = prog.bind(&load_mesh("grid:3x3").unwrap()).unwrap();
    assert!(me.set_pairs(&[0, 1, 2]).is_err());
    assert!(me.set_pairs(&[0, 99]).is_err());
    assert!(me.add_pair(&[0]).is_err());
    assert!(me.pairs().is_empty());
    let prog = example("mass_spring.mad");
    let mut me = prog.bind(&load_mesh("grid:3x3").unwrap()).unwrap();
    assert_eq!(me.pair_arity(), 0);
    assert!(me.set_pairs(&[0, 1]).is_err());
}
