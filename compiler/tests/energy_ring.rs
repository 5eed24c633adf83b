//! Ring stencils (variable valence, one compiled kernel set) and mixed second
//! derivatives ∂²E/∂x∂θ: checked against central finite differences and a
//! hand-built umbrella-operator Hessian.

// Dense reference computations index their matrices by row and column.
#![allow(clippy::needless_range_loop)]

use mad::energy::{EnergyProgram, MeshEnergy};
use mad_runtime::mesh::load_mesh;
use std::collections::BTreeSet;

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

fn random_x(me: &MeshEnergy, amp: f64, seed: u64) -> Vec<f64> {
    let mut s = seed;
    me.default_x()
        .iter()
        .map(|&v| v + amp * rnd(&mut s))
        .collect()
}

fn dense(me: &MeshEnergy, vals: &[f64]) -> Vec<Vec<f64>> {
    let n = me.ndofs();
    let p = me.pattern();
    let mut h = vec![vec![0.0; n]; n];
    for r in 0..n {
        for k in p.row_ptr[r]..p.row_ptr[r + 1] {
            h[r][p.col_idx[k] as usize] += vals[k];
        }
    }
    h
}

fn max_abs(v: impl IntoIterator<Item = f64>) -> f64 {
    v.into_iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

/// Gradient, Hessian and HVP against central differences at random x.
fn check_fd(me: &MeshEnergy, x: &[f64]) {
    let n = me.ndofs();
    let e0 = me.energy(x).unwrap();
    let mut g = vec![0.0; n];
    assert!((me.gradient(x, &mut g).unwrap() - e0).abs() <= 1e-12 * e0.abs().max(1.0));
    let mut g2 = vec![0.0; n];
    let mut hv = vec![0.0; me.nnz()];
    assert!(
        (me.hessian(x, &mut g2, &mut hv, false).unwrap() - e0).abs() <= 1e-12 * e0.abs().max(1.0)
    );
    let h = dense(me, &hv);
    let step = 1e-6;
    let gs = max_abs(g.iter().copied()).max(1e-3);
    let hs = max_abs(hv.iter().copied()).max(1e-3);
    for i in 0..n {
        let (mut xp, mut xm) = (x.to_vec(), x.to_vec());
        xp[i] += step;
        xm[i] -= step;
        let fd = (me.energy(&xp).unwrap() - me.energy(&xm).unwrap()) / (2.0 * step);
        assert!(
            (fd - g[i]).abs() <= 1e-6 * gs,
            "grad[{i}] = {} vs fd {fd}",
            g[i]
        );
        assert!(
            (g[i] - g2[i]).abs() <= 1e-12 * gs,
            "gradient of the Hessian path"
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
    let mut s = 5;
    let v: Vec<f64> = (0..n).map(|_| rnd(&mut s)).collect();
    let mut out = vec![0.0; n];
    me.hvp(x, &v, &mut out).unwrap();
    for r in 0..n {
        let hv: f64 = (0..n).map(|c| h[r][c] * v[c]).sum();
        assert!(
            (hv - out[r]).abs() <= 1e-10 * hs * n as f64,
            "HVP[{r}] = {} vs H·v {hv}",
            out[r]
        );
    }
}

#[test]
fn ring_derivatives_match_finite_differences() {
    let prog = example("laplacian_ring.mad");
    for mesh in ["grid:4x3", "sphere:0", "disk:5"] {
        let mut me = prog.bind(&load_mesh(mesh).unwrap()).unwrap();
        me.set_param("w", 1.7).unwrap();
        let x = random_x(&me, 0.2, 11);
        check_fd(&me, &x);
    }
}

/// Neighbours from the faces (vertices sharing an edge), independent of the
/// runtime's topology.
fn neighbours(faces: &[[u32; 3]], nv: usize) -> Vec<Vec<usize>> {
    let mut s = vec![BTreeSet::new(); nv];
    for f in faces {
        for a in 0..3 {
            let (p, q) = (f[a] as usize, f[(a + 1) % 3] as usize);
            s[p].insert(q);
            s[q].insert(p);
        }
    }
    s.into_iter().map(|b| b.into_iter().collect()).collect()
}

#[test]
fn umbrella_hessian_matches_hand_built_reference() {
    let prog = example("laplacian_ring.mad");
    for mesh in ["grid:5x4", "sphere:1"] {
        let m = load_mesh(mesh).unwrap();
        let mut me = prog.bind(&m).unwrap();
        let (w, lambda) = (2.5, 0.3);
        me.set_param("w", w).unwrap();
        me.set_param("lambda", lambda).unwrap();
        let nv = m.num_vertices();
        let nb = neighbours(&m.triangles, nv);
        // H = w·Σ_v a_v a_vᵀ ⊗ I₃ + λ·I, a_v = e_v − (1/n_v)·Σ_j e_j.
        let mut l = vec![vec![0.0; nv]; nv];
        for v in 0..nv {
            let mut a = vec![0.0; nv];
            a[v] = 1.0;
            for &j in &nb[v] {
                a[j] -= 1.0 / nb[v].len() as f64;
            }
            for p in 0..nv {
                for q in 0..nv {
                    l[p][q] += w * a[p] * a[q];
                }
            }
        }
        let x = random_x(&me, 0.3, 3);
        let n = me.ndofs();
        let (mut g, mut hv) = (vec![0.0; n], vec![0.0; me.nnz()]);
        me.hessian(&x, &mut g, &mut hv, false).unwrap();
        let h = dense(&me, &hv);
        for r in 0..n {
            for c in 0..n {
                let want = if r % 3 == c % 3 { l[r / 3][c / 3] } else { 0.0 }
                    + if r == c { lambda } else { 0.0 };
                assert!(
                    (h[r][c] - want).abs() <= 1e-12 * (1.0 + want.abs()),
                    "{mesh}: H[{r}][{c}] = {} vs {want}",
                    h[r][c]
                );
            }
        }
        // Projection keeps this PSD Hessian (to rounding), and is bit-identical across threads.
        let (mut g1, mut hp1) = (vec![0.0; n], vec![0.0; me.nnz()]);
        me.hessian(&x, &mut g1, &mut hp1, true).unwrap();
        assert!(hp1.iter().zip(&hv).all(|(a, b)| (a - b).abs() <= 1e-10));
        me.set_threads(3).unwrap();
        // Every colour of two chunks or more on the workers, however small the mesh.
        me.set_min_parallel_work(0);
        let (mut g3, mut hp3) = (vec![0.0; n], vec![0.0; me.nnz()]);
        me.hessian(&x, &mut g3, &mut hp3, true).unwrap();
        assert_eq!(g1, g3);
        assert_eq!(hp1, hp3);
    }
}

/// ∂(∇E)/∂θ against central differences of the gradient in θ.
fn check_mixed(me: &mut MeshEnergy, x: &[f64], param: &str) {
    let n = me.ndofs();
    let mut dg = vec![0.0; n];
    me.mixed(x, param, &mut dg).unwrap();
    let t0 = me.param(param).unwrap();
    let h = 1e-6;
    let (mut gp, mut gm) = (vec![0.0; n], vec![0.0; n]);
    me.set_param(param, t0 + h).unwrap();
    me.gradient(x, &mut gp).unwrap();
    me.set_param(param, t0 - h).unwrap();
    me.gradient(x, &mut gm).unwrap();
    me.set_param(param, t0).unwrap();
    let scale = max_abs(dg.iter().copied()).max(1e-3);
    assert!(
        max_abs(dg.iter().copied()) > 0.0,
        "{param}: mixed derivative is zero"
    );
    for i in 0..n {
        let fd = (gp[i] - gm[i]) / (2.0 * h);
        assert!(
            (fd - dg[i]).abs() <= 1e-6 * scale,
            "{param}: d²E/dx[{i}]dθ = {} vs fd {fd}",
            dg[i]
        );
    }
}

#[test]
fn mixed_derivatives_match_finite_differences() {
    let prog = example("laplacian_ring.mad");
    let mut me = prog.bind(&load_mesh("grid:4x4").unwrap()).unwrap();
    let x = random_x(&me, 0.2, 9);
    check_mixed(&mut me, &x, "w");
    check_mixed(&mut me, &x, "lambda");

    let prog = example("mass_spring.mad");
    let mut me = prog.bind(&load_mesh("grid:5x5").unwrap()).unwrap();
    me.set_param("k", 3.0).unwrap();
    let x = random_x(&me, 0.1, 2);
    check_mixed(&mut me, &x, "k");

    // A weight that depends on the param: objective = k·k·a + b.
    let prog = EnergyProgram::compile_str(
        "w.mad",
        "dof x: vertex -> vec3; param k: f64 = 1.5; param c: f64 = 0.5;
         energy a(e: edge) { c * dot(x[e.v0] - x[e.v1], x[e.v0] - x[e.v1])^2 }
         energy b(e: face) { k * norm(x[e.v0] - x[e.v2]) }
         objective = k * k * a + b;",
    )
    .unwrap();
    let mut me = prog.bind(&load_mesh("grid:3x3").unwrap()).unwrap();
    let x = random_x(&me, 0.2, 4);
    check_mixed(&mut me, &x, "k");
    check_mixed(&mut me, &x, "c");
    let mut out = vec![0.0; me.ndofs()];
    assert!(me.mixed(&x, "nope", &mut out).is_err());
}
