//! Terms linear in their dofs (gravity, loads): recognized from their Hessian kernels, which
//! Hessian evaluations then skip in favour of the gradient kernels. Checked here: which terms
//! qualify, and that energies, gradients, Hessians (plain and projected, on one and two
//! threads, into buffers that do not start at zero) and Hessian-vector products of programs
//! mixing such terms with others match central differences and each other.

// Dense reference computations index their matrices by row and column.
#![allow(clippy::needless_range_loop)]

use mad::energy::EnergyProgram;
use mad_runtime::mesh::load_mesh;

use crate::energy_common;
use energy_common::{derivatives_match_differences, rnd};

/// The linear terms first, so that one of them is the first term a Hessian evaluation runs.
const SRC: &str = r#"
dof x: vertex -> vec3 = positions;
param g: f64 = 9.8;
energy gravity(v: vertex) { g * x[v.v0].z }
energy pull(e: edge) { dot(vec3(0.3, -0.2, 0.1), x[e.v1] - x[e.v0]) + 2.0 }
energy spring(e: edge) { let d = x[e.v0] - x[e.v1]; (dot(d, d) - 0.04)^2 }
energy bend(f: face) { let n = cross(x[f.v1] - x[f.v0], x[f.v2] - x[f.v0]); dot(n, n) * x[f.v0].z }
"#;

#[test]
fn linear_terms_are_recognized() {
    let p = EnergyProgram::compile_str("lin.mad", SRC).unwrap();
    let names: Vec<&str> = p.linear_terms().into_iter().map(|n| n.trim_start_matches("energy::")).collect();
    assert_eq!(names, ["gravity", "pull"]);
}

#[test]
fn mixed_programs_match_central_differences() {
    derivatives_match_differences(SRC, "grid:4x4", 0.05, 3);
}

#[test]
fn hessians_overwrite_their_buffers_and_agree_with_hvp() {
    let p = EnergyProgram::compile_str("lin.mad", SRC).unwrap();
    let mesh = load_mesh("grid:5x5").unwrap();
    for threads in [1, 2] {
        let mut me = p.bind(&mesh).unwrap();
        me.set_threads(threads).unwrap();
        // Every colour of two chunks or more on the workers, however small the mesh.
        me.set_min_parallel_work(0);
        let n = me.ndofs();
        let mut s = 11;
        let x: Vec<f64> = me.initial_x().unwrap().iter().map(|v| v + 0.05 * rnd(&mut s)).collect();
        let v: Vec<f64> = (0..n).map(|_| rnd(&mut s)).collect();
        let mut g0 = vec![0.0; n];
        let e0 = me.gradient(&x, &mut g0).unwrap();
        assert_eq!(e0, me.energy(&x).unwrap());
        for project in [false, true] {
            let (mut g, mut h) = (vec![0.0; n], vec![0.0; me.nnz()]);
            let e = me.hessian(&x, &mut g, &mut h, project).unwrap();
            let (mut g2, mut h2) = (vec![7.0; n], vec![-3.0; me.nnz()]);
            let e2 = me.hessian(&x, &mut g2, &mut h2, project).unwrap();
            assert_eq!((e, &g, &h), (e2, &g2, &h2), "threads {threads}: stale buffer values");
            assert!((e - e0).abs() <= 1e-12 * e0.abs());
            for (a, b) in g.iter().zip(&g0) {
                assert!((a - b).abs() <= 1e-12 * (1.0 + b.abs()));
            }
            if !project {
                // H·v from the assembled values against the matrix-free product.
                let pat = me.pattern();
                let mut hv = vec![0.0; n];
                for r in 0..n {
                    for k in pat.row_ptr[r]..pat.row_ptr[r + 1] {
                        hv[r] += h[k] * v[pat.col_idx[k] as usize];
                    }
                }
                let mut mf = vec![5.0; n];
                me.hvp(&x, &v, &mut mf).unwrap();
                let scale = hv.iter().fold(1.0f64, |m, a| m.max(a.abs()));
                for (a, b) in hv.iter().zip(&mf) {
                    assert!((a - b).abs() <= 1e-10 * scale, "threads {threads}: {a} vs {b}");
                }
            }
        }
    }
}
