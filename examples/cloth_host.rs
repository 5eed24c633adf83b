//! A Rust host that drives the cloth-on-a-sphere application
//! (`examples/cloth_sphere.mad`) through the embedding API: it compiles the file,
//! binds its energy to a generated grid, runs implicit Euler time steps with
//! projected Newton and a per-iteration callback, and writes one PLY frame per step.
//!
//! Run: `cargo run -p mad --example cloth_host -- [OUT_DIR] [STEPS] [GRID_N]`
//! (defaults: `cloth_frames`, 40 steps, a 16×16 grid; STEPS ≥ 1, GRID_N ≥ 2). Frames:
//! `OUT_DIR/cloth_0001.ply …`.

use mad::Program;
use mad::energy::{EnergyProgram, MeshObjective};
use mad::runtime::mesh::{Mesh, generators::grid, save_mesh};
use mad::runtime::solve::{Control, ImplicitEuler, IterationInfo, Newton, SolveOptions, Solver};
use std::error::Error;

/// The positional argument `i` as a count of at least `min` (`default` when absent).
fn count_arg(args: &[String], i: usize, name: &str, default: usize, min: usize) -> Result<usize, String> {
    match args.get(i) {
        None => Ok(default),
        Some(s) => match s.parse::<usize>() {
            Ok(v) if v >= min => Ok(v),
            _ => Err(format!("{name}: expected a whole number of at least {min}, got `{s}`")),
        },
    }
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out_dir = args
        .first()
        .cloned()
        .unwrap_or_else(|| "cloth_frames".into());
    let steps = count_arg(&args, 1, "STEPS", 40, 1)?;
    // A grid needs 2×2 vertices at least (one has no springs, and no cloth).
    let n = count_arg(&args, 2, "GRID_N", 16, 2)?;

    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/cloth_sphere.mad");
    let program = Program::compile_file(path)?;
    // `of_program` keeps the sources, so a run-time error in a term names its line.
    let energy_program = EnergyProgram::of_program(&program)?;
    let mesh = grid(n, n);
    let mut energy = energy_program.bind(&mesh)?;
    energy.set_param("g", 9.8)?;
    let x0 = energy.default_x();
    let dofs = x0.len();
    let objective = MeshObjective::new(energy, &x0)?;

    let dt = 0.01;
    let mut euler = ImplicitEuler::new(objective, vec![1.0; dofs], dt, x0, vec![0.0; dofs])?;
    let mut newton = Newton::new();
    newton.project_psd = true;
    let mut solver = Solver::Newton(newton);
    // `ImplicitEuler::step` applies the tolerance to each step's residual of the equations of
    // motion, ‖M(x − x̂)/h² + ∇E‖ (the forces left over), as `examples/cloth_sphere.mad` does.
    let options = SolveOptions {
        max_iters: 50,
        grad_abs_tol: 1e-2,
        ..SolveOptions::default()
    };

    std::fs::create_dir_all(&out_dir)?;
    for step in 1..=steps {
        let mut callback = |it: &IterationInfo| {
            println!(
                "step {step:3}  iteration {:2}  energy {:.9e}  residual {:.2e}",
                it.iteration,
                it.energy,
                it.grad_norm / (dt * dt)
            );
            Control::Continue
        };
        let report = euler.step(&mut solver, &options, Some(&mut callback))?;
        let positions = euler
            .potential()
            .energy()
            .positions_of(euler.positions())
            .ok_or("no positions")?;
        let frame = format!("{out_dir}/cloth_{step:04}.ply");
        save_mesh(
            &Mesh {
                positions,
                triangles: mesh.triangles.clone(),
            },
            &frame,
        )?;
        println!(
            "step {step:3}: {:?} after {} iterations -> {frame}",
            report.status, report.iterations
        );
    }
    Ok(())
}
