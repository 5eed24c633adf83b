//! `madc run` on a file with mesh energies: minimize them over a mesh (a static
//! solve, or implicit Euler time steps), log every iteration, write the result.
//!
//! Settings come from the file's `solve { ... }` block, overridden by flags: the flags
//! become the library's [`Overrides`], and [`crate::solve`] merges them, binds the mesh and
//! solves; this file prints what it reports and writes the outputs.
//! Output:
//! - the per-iteration log (`iter N  energy E  |g| G  step T  time MS ms`, then
//!   `mu M` for Levenberg–Marquardt) and the
//!   final summary go to standard error; with `--json` standard output gets one
//!   JSON object per line instead: `{"type":"iteration",…}` per iteration
//!   (with `mu`, the Levenberg–Marquardt damping, `null` for other solvers),
//!   `{"type":"step",…}` after each time step, and one `{"type":"summary",…}`
//!   at the end (non-finite numbers are `null`);
//! - `--out FILE.(obj|ply|off)`: the result mesh (positions from the first dof
//!   field, or the block's `out_field`); with `--steps N`, frames
//!   `FILE_0001.EXT … FILE_N.EXT` instead;
//! - `--plot FILE.svg`: energy and ‖g‖ (log scale) against the iteration;
//! - a progress bar (time steps, or iterations of a static solve) on standard
//!   error when it is a terminal, with the text log printed above it.
//!
//! Large meshes whose file numbering is scattered are solved with their vertices
//! renumbered for locality ([`crate::solve::Problem::new`]); `--fix` ids, initializer
//! files and the written meshes use the file's numbering all the same.
//!
//! Dynamics (`--steps N --dt H`): implicit Euler with a lumped mass of 1 per
//! vertex (every dof component of a vertex has mass 1), starting at rest
//! ([`crate::solve::run`]).
//!
//! Exit codes: 0 when the solve converged (`gradient_tolerance`,
//! `newton_decrement` or `step_tolerance`; for dynamics, every step ran), 1 for bad input, 2 when the
//! solver failed or did not converge. With `--json`, a failure after the settings
//! were read ends standard output with a `{"type":"error",…}` line.

use super::commands;
use super::progress::Progress;
use super::run_function;
use super::svg_plot;
use crate::api::Program;
use crate::energy::EnergyProgram;
use crate::solve::output::{frame_path, output_directory};
use crate::solve::records::{ErrorRecord, IterationRecord, Record, StepRecord, SummaryRecord, status_name};
use crate::solve::{Event, Failure, FixSpec, Overrides, Settings};
use std::io::Write as _;
use std::path::Path;

/// The solver flags of `madc run` (each overrides the file's `solve` block).
#[derive(clap::Args, Debug, Default, Clone)]
pub struct SolveArgs {
    /// A mesh file (.obj, .off, .ply) or generator (`grid:NxM`, `sphere:L`, `disk:N`, `torus:N,M`).
    #[arg(long)]
    pub mesh: Option<String>,
    /// newton | newton-cg | lbfgs | gd | gauss-newton | gauss-newton-cg |
    /// levenberg-marquardt (lm) | levenberg-marquardt-cg (lm-cg) (default: the solve block's, else newton for energies, gauss-newton for residual terms alone, newton-cg for residuals with energies or with --steps).
    #[arg(long)]
    pub solver: Option<String>,
    /// Iteration cap per solve (per time step with `--steps`; default 200).
    #[arg(long, allow_negative_numbers = true)]
    pub max_iters: Option<usize>,
    /// Absolute gradient-norm tolerance (default 1e-6; with `--steps`, on each step's residual ‖M(x − x̂)/h² + ∇E‖).
    #[arg(long, allow_negative_numbers = true, value_parser = super::args::finite_f64)]
    pub tol: Option<f64>,
    /// Project each element's Hessian block to positive semi-definite (projected Newton).
    #[arg(long)]
    pub project_psd: bool,
    /// Implicit Euler time steps (dynamics) instead of one static solve.
    #[arg(long, allow_negative_numbers = true)]
    pub steps: Option<usize>,
    /// The time step of `--steps` (default 0.01).
    #[arg(long, allow_negative_numbers = true, value_parser = super::args::finite_f64)]
    pub dt: Option<f64>,
    /// Fixed vertices: comma-separated ids, `boundary`, or a file of ids.
    #[arg(long, allow_negative_numbers = true)]
    pub fix: Option<String>,
    /// Set a param: `NAME=VALUE` (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Write the result mesh (.obj, .ply, .off); frames `OUT_0001.EXT …` with `--steps`.
    #[arg(long)]
    pub out: Option<String>,
    /// Print JSON lines (iterations, steps, summary) on standard output.
    #[arg(long)]
    pub json: bool,
    /// Write an SVG plot of energy and ‖g‖ against the iteration.
    #[arg(long)]
    pub plot: Option<String>,
    /// Initial values of a dof or state field: `NAME=INIT` with INIT `positions`,
    /// `zeros`, `tutte` or a file (.obj/.off/.ply positions or .npy) (repeatable).
    #[arg(long = "init", value_name = "NAME=INIT")]
    pub init: Vec<String>,
    /// Fill a data field from a `.npy` file: `NAME=FILE.npy` (repeatable; arrays are in the
    /// file's vertex numbering).
    #[arg(long = "data", value_name = "NAME=FILE.npy")]
    pub data: Vec<String>,
    /// Vertex tuples for the `pair` terms of a file without a `broadphase` declaration: an
    /// (n, arity) integer or float `.npy` of vertex ids, fixed for the whole solve.
    #[arg(long, value_name = "P.npy")]
    pub pairs: Option<std::path::PathBuf>,
    /// Gradient descent: a fixed step λ (x ← x − λ∇E; backtracks only if the energy rises).
    #[arg(long, allow_negative_numbers = true, value_parser = super::args::finite_f64)]
    pub step: Option<f64>,
    /// Worker threads for the energy evaluation, 1 to 1024 (default: one per CPU core;
    /// results are identical for every count; work too small to pay for the other threads
    /// stays on the calling thread).
    #[arg(long, allow_negative_numbers = true)]
    pub threads: Option<usize>,
}

impl SolveArgs {
    /// The solve flags given on the command line.
    fn given(&self) -> Vec<&'static str> {
        let flags = [
            ("--mesh", self.mesh.is_some()),
            ("--solver", self.solver.is_some()),
            ("--max-iters", self.max_iters.is_some()),
            ("--tol", self.tol.is_some()),
            ("--project-psd", self.project_psd),
            ("--steps", self.steps.is_some()),
            ("--dt", self.dt.is_some()),
            ("--fix", self.fix.is_some()),
            ("--set", !self.set.is_empty()),
            ("--out", self.out.is_some()),
            ("--json", self.json),
            ("--plot", self.plot.is_some()),
            ("--init", !self.init.is_empty()),
            ("--step", self.step.is_some()),
            ("--data", !self.data.is_empty()),
            ("--pairs", self.pairs.is_some()),
            ("--threads", self.threads.is_some()),
        ];
        flags.iter().filter(|f| f.1).map(|f| f.0).collect()
    }

    /// The flags as overrides of the file's `solve` block.
    fn overrides(&self) -> Overrides {
        Overrides {
            mesh: self.mesh.clone(),
            solver: self.solver.clone(),
            max_iters: self.max_iters,
            tol: self.tol,
            project_psd: self.project_psd,
            steps: self.steps,
            dt: self.dt,
            fix: self.fix.as_deref().map(FixSpec::parse),
            set: self.set.clone(),
            init: self.init.clone(),
            data: self.data.clone(),
            pairs: self.pairs.clone(),
            out: self.out.clone(),
            out_field: None,
            plot: self.plot.clone(),
            step: self.step,
            threads: self.threads,
        }
    }
}

/// `madc run FILE [flags] [-- args]`: solve the energies, or run a function.
pub fn run(
    file: &Path,
    entry: Option<&str>,
    a: &SolveArgs,
    interp: bool,
    out_npy: Option<&Path>,
    args: &[String],
    color: bool,
) -> i32 {
    let program = match Program::compile_file(file) {
        Ok(p) => p,
        Err(e) => return commands::report(&e, color),
    };
    let mesh = &program.compiled().mesh;
    let has_terms = !mesh.energies.is_empty() || !mesh.residuals.is_empty();
    if entry.is_some() || !has_terms {
        if let Some(flag) = a.given().first() {
            eprintln!(
                "error: {flag} applies to solving a file's energies, but {}",
                if has_terms {
                    "`--entry` runs a function".to_string()
                } else {
                    format!(
                        "{} declares no `energy` or `residual` terms",
                        file.display()
                    )
                }
            );
            return 1;
        }
        return run_function::run_program(&program, file, entry.unwrap_or("main"), interp, args, out_npy, color);
    }
    if let Some(path) = out_npy {
        eprintln!(
            "error: --out-npy {} writes the result of a function, but {} is solved (pass \
             `--entry NAME` to run a function)",
            path.display(),
            file.display()
        );
        return 1;
    }
    if !args.is_empty() {
        eprintln!("error: arguments after `--` go to a function; pass `--entry NAME` to run one");
        return 1;
    }
    if interp {
        eprintln!(
            "error: --interp runs a function on the interpreter; solving energies always uses \
             the JIT (pass `--entry NAME` to run a function)"
        );
        return 1;
    }
    let settings = match crate::solve::merge(mesh, &a.overrides(), |w| eprintln!("warning: {w}")) {
        Ok(s) => s,
        Err(m) => return json_error(a.json, fail(&m), &m),
    };
    let eprog = match EnergyProgram::of_program(&program) {
        Ok(p) => p,
        Err(e) => {
            let code = commands::report(&e, color);
            return json_error(a.json, code, &e.to_string());
        }
    };
    super::mesh_commands::warn_prints(&eprog);
    match solve(&eprog, &settings, a.json) {
        Ok(true) => 0,
        Ok(false) => 2,
        Err(Failure::Input(m) | Failure::Handler(m)) => json_error(a.json, fail(&m), &m),
        Err(Failure::Solver(m)) => {
            eprintln!("error: {m}");
            json_error(a.json, 2, &m)
        }
    }
}

/// With `--json`, a run that fails after its settings were read ends its standard output
/// with `{"type":"error","message":…,"exit_status":…}` instead of the summary (the message
/// also goes to standard error). Returns the exit status `code`.
fn json_error(json: bool, code: i32, message: &str) -> i32 {
    if json {
        let record = Record::Error(ErrorRecord {
            message: message.to_string(),
            exit_status: code,
        });
        super::stdout::write(format!("{}\n", record.to_json()).as_bytes());
    }
    code
}

fn fail(msg: impl std::fmt::Display) -> i32 {
    eprintln!("error: {msg}");
    1
}

/// Runs the solve, printing its log and writing the result mesh (frames in dynamics) and the
/// plot; `Ok(true)` when it converged (static) or every step ran (dynamics).
fn solve(prog: &EnergyProgram, s: &Settings, json: bool) -> Result<bool, Failure> {
    let mut log = Log {
        json,
        settings: s,
        progress: None,
        points: Vec::new(),
    };
    let outcome = crate::solve::solve(prog, s, |event| log.event(event))?;
    if s.steps.is_none()
        && let Some(out) = &s.out
    {
        outcome.frame().write_mesh(out, s.out_field.as_deref())?;
    }
    // The summary is printed last, after the plot is written: a run that fails writing it
    // ends with the error alone (and its `--json` error line), not a summary and an error.
    if let Some(path) = &s.plot {
        let svg = svg_plot::convergence(&log.points, &format!("{} on {}", s.solver, s.mesh));
        // Like `--out`, `--plot plots/conv.svg` creates `plots/` as needed.
        output_directory(path)?;
        std::fs::write(path, svg).map_err(|e| format!("cannot write {path}: {e}"))?;
    }
    log.summary(&outcome.summary(s));
    Ok(outcome.success)
}

/// Prints the records of a run: JSON lines on stdout, or text lines on stderr (above the
/// progress bar, shown once the solve has started); writes the frames of a dynamics run as
/// its steps are reported.
struct Log<'s> {
    json: bool,
    settings: &'s Settings,
    progress: Option<Progress>,
    /// (energy, ‖g‖) of every iteration of every solve, for the plot.
    points: Vec<(f64, f64)>,
}

impl Log<'_> {
    fn event(&mut self, event: Event<'_>) -> Result<(), String> {
        match event {
            Event::Warning(w) => eprintln!("warning: {w}"),
            Event::Started => {
                self.progress();
            }
            Event::Iteration(it) => self.iteration(it),
            Event::Step(step, frame) => {
                self.step(step);
                if let Some(out) = &self.settings.out {
                    frame.write_mesh(&frame_path(out, step.time_step), self.settings.out_field.as_deref())?;
                }
            }
        }
        Ok(())
    }

    /// The progress bar: time steps, or iterations of a static solve.
    fn progress(&mut self) -> &Progress {
        let s = self.settings;
        self.progress.get_or_insert_with(|| match s.steps {
            Some(n) => Progress::new(n as u64, "steps"),
            None => Progress::new(s.max_iters as u64, "iterations"),
        })
    }

    fn line(&self, text: String) {
        if self.json {
            super::stdout::note(writeln!(std::io::stdout().lock(), "{text}"));
        } else if let Some(p) = &self.progress {
            p.line(&text);
        } else {
            eprintln!("{text}");
        }
    }

    fn iteration(&mut self, it: &IterationRecord) {
        self.points.push((it.energy, it.grad_norm));
        let progress = self.progress();
        if it.time_step.is_none() {
            progress.set(
                it.iteration as u64,
                format!("energy {:.6e}  |g| {:.2e}", it.energy, it.grad_norm),
            );
        }
        if self.json {
            self.line(Record::Iteration(it.clone()).to_json());
        } else if it.time_step.is_none() {
            self.line(format!(
                "iter {:4}  energy {:<22}  |g| {:.3e}  step {:.3e}  time {:.3} ms{}",
                it.iteration,
                format!("{:.12e}", it.energy),
                it.grad_norm,
                it.step,
                it.time_ms,
                it.mu.map_or(String::new(), |m| format!("  mu {m:.2e}"))
            ));
        }
    }

    fn step(&mut self, step: &StepRecord) {
        self.progress();
        if self.json {
            self.line(Record::Step(step.clone()).to_json());
        } else {
            self.line(format!(
                "step {:4}  t {:.4}  iters {:3}  potential {:.12e}  |g| {:.3e}  {}",
                step.time_step,
                step.time,
                step.iterations,
                step.potential,
                step.grad_norm,
                status_name(step.status)
            ));
        }
        self.progress()
            .set(step.time_step as u64, format!("{} iterations", step.iterations));
    }

    /// The final line. A dynamics run reports the potential energy E from start to end in
    /// the text line, the quantity its step lines print; the JSON summary has both
    /// ([`SummaryRecord`]).
    fn summary(&self, r: &SummaryRecord) {
        if let Some(p) = &self.progress {
            p.finish();
        }
        if self.json {
            self.line(Record::Summary(r.clone()).to_json());
        } else if let (Some(p0), Some(p1)) = (r.initial_potential, r.potential) {
            self.line(format!(
                "{}: {} time steps, {} iterations, potential {p0:.12e} -> {p1:.12e}, last step |g| {:.3e}, {:.1} ms",
                status_name(r.status),
                r.time_steps,
                r.total_iterations,
                r.grad_norm,
                r.time_ms,
            ));
        } else {
            self.line(format!(
                "{}: {} iterations, energy {:.12e} -> {:.12e}, |g| {:.3e}, {:.1} ms",
                status_name(r.status),
                r.iterations,
                r.initial_energy,
                r.energy,
                r.grad_norm,
                r.time_ms
            ));
        }
    }
}
