//! The embedded-deformation application (`examples/embedded_deformation.mad`) on
//! grid:10x10 through the Rust API: Gauss-Newton and Levenberg–Marquardt from the rest shape
//! with every R = I. Checks: convergence within 10 Gauss-Newton iterations (5 when written)
//! or 20 Levenberg–Marquardt iterations (11 when written: on small grids the damping slows the
//! last iterations), the objective drops by more than 100×, the handles reach their targets
//! (bottom row in place, top row lifted by `lift` along z) to 2% of the lift, and each R ends
//! close to a rotation.

use mad::Program;
use mad::energy::{EnergyProgram, MeshObjective};
use mad_runtime::mesh::load_mesh;
use mad_runtime::solve::{SolveOptions, Solver};

#[test]
fn gauss_newton_reaches_the_handles() {
    reaches_the_handles("gauss-newton", 10);
}

#[test]
fn levenberg_marquardt_reaches_the_handles() {
    reaches_the_handles("levenberg-marquardt", 20);
}

fn reaches_the_handles(solver_name: &str, max_iterations: usize) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/embedded_deformation.mad"
    );
    let program = Program::compile_file(path).expect("compiles");
    let eprog = EnergyProgram::new(program.compiled()).expect("energy program");
    let mesh = load_mesh("grid:10x10").unwrap();
    let me = eprog.bind(&mesh).unwrap();
    let lift = me.param("lift").unwrap();
    let nv = me.num_vertices();
    // x at the rest positions, the c fields at zero (R = I).
    let mut x = vec![0.0; me.ndofs()];
    for (i, p) in mesh.positions.iter().enumerate() {
        let d = me.vertex_dofs(i);
        assert_eq!(d.len(), 12);
        x[d[0]] = p[0];
        x[d[1]] = p[1];
        x[d[2]] = p[2];
    }
    let mut obj = MeshObjective::new(me, &x).unwrap();
    let mut solver = Solver::from_name(solver_name).unwrap();
    let opts = SolveOptions {
        max_iters: 40,
        grad_abs_tol: 1e-6,
        ..SolveOptions::default()
    };
    let report = solver.solve(&mut obj, &mut x, &opts, None).expect("solves");
    eprintln!(
        "{solver_name}: {} iterations, energy {:e} -> {:e}",
        report.iterations, report.initial_energy, report.energy
    );
    assert!(
        report.status.converged(),
        "{:?} after {} iterations",
        report.status,
        report.iterations
    );
    assert!(
        report.iterations <= max_iterations,
        "{solver_name}: {} iterations",
        report.iterations
    );
    assert!(
        report.energy < 1e-2 * report.initial_energy,
        "{} -> {}",
        report.initial_energy,
        report.energy
    );
    let me = obj.energy();
    let mut handles = 0;
    for (i, p) in mesh.positions.iter().enumerate() {
        let d = me.vertex_dofs(i);
        let q = [x[d[0]], x[d[1]], x[d[2]]];
        let target = if p[1] > 0.95 {
            Some([p[0], p[1], p[2] + lift])
        } else if p[1] < 0.05 {
            Some(*p)
        } else {
            None
        };
        if let Some(t) = target {
            handles += 1;
            let err =
                ((q[0] - t[0]).powi(2) + (q[1] - t[1]).powi(2) + (q[2] - t[2]).powi(2)).sqrt();
            assert!(
                err < 0.02 * lift,
                "vertex {i}: {err} from its handle target"
            );
        }
        // R = I + [c0 c1 c2] close to orthonormal.
        let r: Vec<[f64; 3]> = (0..3)
            .map(|k| {
                let mut c = [x[d[3 + 3 * k]], x[d[4 + 3 * k]], x[d[5 + 3 * k]]];
                c[k] += 1.0;
                c
            })
            .collect();
        for a in 0..3 {
            for b in 0..3 {
                let dot: f64 = (0..3).map(|j| r[a][j] * r[b][j]).sum();
                let want = if a == b { 1.0 } else { 0.0 };
                assert!(
                    (dot - want).abs() < 0.05,
                    "vertex {i}: RᵀR[{a},{b}] = {dot}"
                );
            }
        }
    }
    assert_eq!(handles, 20);
    assert!(nv == 100);
}
