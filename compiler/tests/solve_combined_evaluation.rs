//! `MeshObjective::value_grad_hessian` (one evaluation for the energy, the gradient and the
//! Hessian values, which Newton asks for where it expects to need the Hessian) gives the bits
//! of `value_grad` and `hessian_values`, with and without the PSD projection; programs whose
//! pattern moves (pairs) or that have residual terms decline it. Plain mesh energies overwrite
//! the values they are given (`hessian_values_overwrite`), so stale buffers give the same bits.

use mad::energy::{EnergyProgram, MeshObjective};
use mad_runtime::mesh::load_mesh;
use mad_runtime::solve::Objective;

fn example(name: &str) -> String {
    let path = format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).unwrap()
}

/// Checks the combined evaluation against the separate ones at x0 and a perturbed point.
fn check_same_bits(src: &str, mesh: &str) {
    let prog = EnergyProgram::compile_str("t.mad", src).unwrap();
    let mesh = load_mesh(mesh).unwrap();
    let me = prog.bind(&mesh).unwrap();
    let x0 = me.initial_x().unwrap();
    let mut obj = MeshObjective::new(me, &x0).unwrap();
    let n = obj.num_dofs();
    let nnz = obj.hessian_pattern().unwrap().nnz();
    for (k, x) in [x0.clone(), x0.iter().enumerate().map(|(i, v)| v + 1e-3 * ((i * 7 % 5) as f64 - 2.0)).collect()]
        .iter()
        .enumerate()
    {
        for project in [false, true] {
            let (mut g1, mut h1) = (vec![0.0; n], vec![0.0; nnz]);
            let e1 = obj.value_grad(x, &mut g1).unwrap();
            obj.hessian_values(x, project, &mut h1).unwrap();
            let (mut g2, mut h2) = (vec![0.0; n], vec![0.0; nnz]);
            let e2 = obj
                .value_grad_hessian(x, &mut g2, project, &mut h2)
                .unwrap()
                .expect("offered for plain mesh energies");
            assert_eq!(e1.to_bits(), e2.to_bits(), "point {k}, project {project}: energy");
            assert!(g1.iter().zip(&g2).all(|(a, b)| a.to_bits() == b.to_bits()), "point {k}: gradient");
            assert!(h1.iter().zip(&h2).all(|(a, b)| a.to_bits() == b.to_bits()), "point {k}: Hessian");
            assert!(h2.iter().any(|&v| v != 0.0));
            // Plain mesh energies overwrite their values: a buffer of stale values gives
            // the same bits as a zeroed one (Newton skips zeroing it).
            assert!(obj.hessian_values_overwrite());
            let mut h3 = vec![1.0e3; nnz];
            obj.hessian_values(x, project, &mut h3).unwrap();
            assert!(h1.iter().zip(&h3).all(|(a, b)| a.to_bits() == b.to_bits()), "point {k}: stale values");
            let (mut g4, mut h4) = (vec![0.0; n], vec![-7.0; nnz]);
            obj.value_grad_hessian(x, &mut g4, project, &mut h4).unwrap();
            assert!(h1.iter().zip(&h4).all(|(a, b)| a.to_bits() == b.to_bits()), "point {k}: stale combined");
        }
    }
}

#[test]
fn the_parameterization_gets_the_same_bits() {
    check_same_bits(&example("param.mad"), "disk:6");
}

#[test]
fn the_cloth_on_a_sphere_gets_the_same_bits() {
    check_same_bits(&example("cloth_sphere.mad"), "grid:8x8");
}

#[test]
fn moving_patterns_and_residuals_decline() {
    for (src, mesh) in [
        (example("contact_barrier.mad"), "grid:4x4"),
        (example("fit_residual.mad"), "grid:4x4"),
    ] {
        let prog = EnergyProgram::compile_str("t.mad", &src).unwrap();
        let mesh = load_mesh(mesh).unwrap();
        let me = prog.bind(&mesh).unwrap();
        let x0 = me.initial_x().unwrap();
        let mut obj = MeshObjective::new(me, &x0).unwrap();
        let n = obj.num_dofs();
        let mut g = vec![0.0; n];
        let mut h = vec![0.0; obj.hessian_pattern().map_or(0, |p| p.nnz())];
        assert_eq!(obj.value_grad_hessian(&x0, &mut g, true, &mut h).unwrap(), None);
        assert!(!obj.hessian_values_overwrite(), "values merged into a pattern, or none: added");
        assert!(g.iter().all(|&v| v == 0.0), "nothing written");
    }
}
