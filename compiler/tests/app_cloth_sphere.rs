//! The cloth-on-a-sphere application (`examples/cloth_sphere.mad`) on a small
//! grid through the Rust API: implicit Euler frames with projected Newton. Checks:
//! every step converges within 30 Newton iterations, no vertex is ever inside the
//! sphere, and the cloth does reach it (some vertex comes within d̂).

use mad::Program;
use mad::energy::{EnergyProgram, MeshObjective};
use mad_runtime::mesh::load_mesh;
use mad_runtime::solve::{ImplicitEuler, Newton, SolveOptions, Solver};

#[test]
fn cloth_falls_onto_the_sphere_without_entering_it() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/cloth_sphere.mad");
    let program = Program::compile_file(path).expect("compiles");
    let eprog = EnergyProgram::new(program.compiled()).expect("energy program");
    let mesh = load_mesh("grid:10x10").unwrap();
    let me = eprog.bind(&mesh).unwrap();
    let (c, r, dhat) = (
        [0.5, 0.5, -0.3],
        me.param("r").unwrap(),
        me.param("dhat").unwrap(),
    );
    let x0 = me.default_x();
    let n = x0.len();
    let obj = MeshObjective::new(me, &x0).unwrap();
    let mut euler = ImplicitEuler::new(obj, vec![1.0; n], 0.01, x0, vec![0.0; n]).unwrap();
    let mut newton = Newton::new();
    newton.project_psd = true;
    let mut solver = Solver::Newton(newton);
    let opts = SolveOptions {
        max_iters: 30,
        // On each step's residual ‖M(x − x̂)/h² + ∇E‖ (the file's `tol`).
        grad_abs_tol: 1e-2,
        ..SolveOptions::default()
    };
    let mut closest = f64::INFINITY;
    for step in 1..=25 {
        let report = euler.step(&mut solver, &opts, None).expect("step solves");
        assert!(
            report.status.converged(),
            "step {step}: {:?} after {} iterations",
            report.status,
            report.iterations
        );
        for p in euler.positions().chunks(3) {
            let d =
                ((p[0] - c[0]).powi(2) + (p[1] - c[1]).powi(2) + (p[2] - c[2]).powi(2)).sqrt() - r;
            assert!(
                d > 0.0,
                "step {step}: a vertex is inside the sphere (d = {d})"
            );
            closest = closest.min(d);
        }
    }
    assert!(
        closest < dhat,
        "the cloth never reached the sphere (closest {closest})"
    );
}

use crate::cli_common;

/// The example as `madc run` runs it, past the step (48) where the prediction x̂ = xₙ + h vₙ
/// first lands inside the barrier: each step starts at a safe point on the way to x̂
/// (`ImplicitEuler::start`), so every step solves and no frame has a vertex in the sphere.
#[test]
fn the_example_runs_60_steps_without_a_vertex_in_the_sphere() {
    let dir = std::env::temp_dir().join(format!("mad-cloth-sphere-{}", std::process::id()));
    let out = dir.join("c.obj").display().to_string();
    let (rc, _, err) = cli_common::madc(&["run", "examples/cloth_sphere.mad", "--steps", "60", "--out", &out]);
    assert_eq!(rc, 0, "{err}");
    let (c, r) = ([0.5, 0.5, -0.3], 0.25);
    let mut closest = f64::INFINITY;
    for k in 1..=60 {
        let frame = dir.join(format!("c_{k:04}.obj"));
        let mesh = load_mesh(frame.to_str().unwrap()).unwrap();
        for p in &mesh.positions {
            let d = ((p[0] - c[0]).powi(2) + (p[1] - c[1]).powi(2) + (p[2] - c[2]).powi(2)).sqrt() - r;
            assert!(d > 0.0, "frame {k}: a vertex is inside the sphere (d = {d})");
            closest = closest.min(d);
        }
    }
    assert!(closest < 0.02, "the cloth reached the sphere (closest {closest})");
}
