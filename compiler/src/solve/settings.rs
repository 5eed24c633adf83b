//! The settings of a solve: a file's `solve { ... }` block with [`Overrides`] over it (what
//! `madc run`'s flags give), merged into [`Settings`] and checked before anything is bound
//! or solved.

use super::inputs::parse_set;
use super::output::output_directory;
use crate::front::mesh::MeshDecls;
use crate::front::solve::{FixSpec, RESIDUAL_SOLVERS, SolveSettings};
use crate::front::state::Init;
use mad_runtime::mesh::MeshFormat;
use mad_runtime::solve::Solver;
use std::path::PathBuf;

/// The iteration cap per solve (per time step) when neither the block nor an override gives one.
pub const DEFAULT_MAX_ITERS: usize = 200;
/// The absolute gradient-norm tolerance when neither the block nor an override gives one.
pub const DEFAULT_TOL: f64 = 1e-6;
/// The time step of dynamics when neither the block nor an override gives one.
pub const DEFAULT_DT: f64 = 0.01;

/// The most worker threads a solve or an evaluation accepts (each is an operating-system
/// thread with its own stack; a pool of a hundred thousand took minutes to start).
pub const MAX_THREADS: usize = 1024;

/// The worker threads when none are asked for: one per CPU core the process may use.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Settings given over the file's `solve` block: what `madc run`'s flags say, each named
/// here after its flag. `None` (or empty, or `false`) leaves the block's setting, or the
/// default. Errors and warnings name the flag of an override (`--tol -1: …`).
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// A mesh file (.obj, .off, .ply) or generator (`grid:NxM`, `sphere:L`, `disk:N`, `torus:N,M`).
    pub mesh: Option<String>,
    /// A solver name ([`Solver::NAMES`]).
    pub solver: Option<String>,
    /// Iteration cap per solve (per time step in dynamics).
    pub max_iters: Option<usize>,
    /// Absolute gradient-norm tolerance.
    pub tol: Option<f64>,
    /// Projected Newton: each element's Hessian block projected to positive semi-definite.
    pub project_psd: bool,
    /// Implicit Euler time steps instead of one static solve.
    pub steps: Option<usize>,
    /// The time step of `steps`.
    pub dt: Option<f64>,
    /// Fixed vertices.
    pub fix: Option<FixSpec>,
    /// Params, each `NAME=VALUE` (as after `--set`).
    pub set: Vec<String>,
    /// Initial values of dof or state fields, each `NAME=INIT` (as after `--init`).
    pub init: Vec<String>,
    /// Data fields from `.npy` files, each `NAME=FILE.npy` (as after `--data`).
    pub data: Vec<String>,
    /// Vertex tuples of the `pair` terms: an (n, arity) `.npy` of vertex ids.
    pub pairs: Option<PathBuf>,
    /// The result mesh (.obj, .ply, .off); frames `OUT_0001.EXT …` in dynamics.
    pub out: Option<String>,
    /// The vertex field (dof or state) written as the result's positions (`madc run` has
    /// no flag for it: only the solve block sets it).
    pub out_field: Option<String>,
    /// An SVG plot of energy and ‖g‖ against the iteration.
    pub plot: Option<String>,
    /// Gradient descent's fixed step λ.
    pub step: Option<f64>,
    /// Worker threads of the energy evaluation, 1 to [`MAX_THREADS`].
    pub threads: Option<usize>,
}

/// Everything a solve needs, after merging the file's block and the overrides ([`merge`]).
#[derive(Clone, Debug)]
pub struct Settings {
    /// A mesh file or generator.
    pub mesh: String,
    /// The solver's name ([`Solver::from_name`]).
    pub solver: String,
    /// Iteration cap per solve (per time step in dynamics).
    pub max_iters: usize,
    /// Absolute gradient-norm tolerance (in dynamics, on each step's residual of the
    /// equations of motion).
    pub tol: f64,
    /// Projected Newton.
    pub project_psd: bool,
    /// Implicit Euler time steps; `None` for a static solve.
    pub steps: Option<usize>,
    /// The time step of `steps`.
    pub dt: f64,
    /// Fixed vertices.
    pub fix: Option<FixSpec>,
    /// Whether `fix` is an override (`--fix`), else the solve block's: errors name it so.
    pub fix_from_flag: bool,
    /// Whether `mesh` is an override (`--mesh`), else the solve block's: messages say so.
    pub mesh_from_flag: bool,
    /// Params set before the solve.
    pub set: Vec<(String, f64)>,
    /// Initial values of dof or state fields.
    pub init: Vec<(String, Init)>,
    /// Data fields from `.npy` files, each `NAME=FILE.npy` (in the file's vertex numbering).
    pub data: Vec<String>,
    /// Vertex tuples of the `pair` terms (in the file's vertex numbering).
    pub pairs: Option<PathBuf>,
    /// Gradient descent's fixed step λ.
    pub step: Option<f64>,
    /// Worker threads of the energy evaluation.
    pub threads: usize,
    /// The result mesh (frames in dynamics).
    pub out: Option<String>,
    /// The vertex field written as the result's positions (default: the first dof field).
    pub out_field: Option<String>,
    /// The convergence plot (SVG).
    pub plot: Option<String>,
}

impl Settings {
    /// A static solve of `mesh` with `solver` and the defaults for everything else (no fixed
    /// vertices, no outputs, one worker thread per core).
    pub fn new(mesh: impl Into<String>, solver: impl Into<String>) -> Settings {
        Settings {
            mesh: mesh.into(),
            solver: solver.into(),
            max_iters: DEFAULT_MAX_ITERS,
            tol: DEFAULT_TOL,
            project_psd: false,
            steps: None,
            dt: DEFAULT_DT,
            fix: None,
            fix_from_flag: true,
            mesh_from_flag: true,
            set: Vec::new(),
            init: Vec::new(),
            data: Vec::new(),
            pairs: None,
            step: None,
            threads: default_threads(),
            out: None,
            out_field: None,
            plot: None,
        }
    }
}

/// The solver a run takes when neither an override nor the solve block names one: Newton for
/// energies, Gauss-Newton for residuals alone, and Newton-CG (½‖r‖² plus the energies) for
/// both or for residuals stepped in time (the residual solvers run no time steps).
pub fn default_solver(decls: &MeshDecls, steps: bool) -> &'static str {
    match (decls.residuals.is_empty(), decls.energies.is_empty()) {
        (true, _) => "newton",
        (false, true) if !steps => "gauss-newton",
        (false, _) => "newton-cg",
    }
}

/// The settings of a run of the file declaring `decls`: its `solve` block with `a` over it,
/// as `madc run` takes them. Out-of-range values, flags the chosen solve would ignore, outputs
/// that cannot be written (their directories are created here) and a solver that cannot
/// minimize the file's terms are errors; a block setting that the solve ignores is dropped
/// with a warning, passed to `warn`.
pub fn merge(
    decls: &MeshDecls,
    a: &Overrides,
    mut warn: impl FnMut(&str),
) -> Result<Settings, String> {
    let d = SolveSettings::default();
    let f = decls.solve.as_ref().unwrap_or(&d);
    let mesh = a.mesh.clone().or_else(|| f.mesh.clone()).ok_or_else(|| {
        "no mesh: pass `--mesh MESH` or add `solve { mesh = \"grid:10x10\"; }` to the file"
            .to_string()
    })?;
    let mut set = Vec::new();
    for s in &a.set {
        set.push(parse_set(s)?);
    }
    let mut init = Vec::new();
    for s in &a.init {
        let (k, v) = s
            .split_once('=')
            .ok_or_else(|| format!("--init {s}: expected NAME=INIT"))?;
        if v.trim().is_empty() {
            return Err(format!(
                "--init {s}: no initializer after `=` (give positions, zeros, tutte, or a mesh or .npy file)"
            ));
        }
        init.push((k.trim().to_string(), Init::parse(v)));
    }
    let s = Settings {
        mesh,
        solver: a
            .solver
            .clone()
            .or_else(|| f.solver.clone())
            .unwrap_or_else(|| default_solver(decls, a.steps.or(f.steps).is_some()).into()),
        max_iters: a.max_iters.or(f.max_iters).unwrap_or(DEFAULT_MAX_ITERS),
        tol: a.tol.or(f.tol).unwrap_or(DEFAULT_TOL),
        project_psd: a.project_psd || f.project_psd.unwrap_or(false),
        steps: a.steps.or(f.steps),
        dt: a.dt.or(f.dt).unwrap_or(DEFAULT_DT),
        fix: a.fix.clone().or_else(|| f.fix.clone()),
        fix_from_flag: a.fix.is_some(),
        mesh_from_flag: a.mesh.is_some(),
        set,
        out: a.out.clone().or_else(|| f.out.clone()),
        plot: a.plot.clone().or_else(|| f.plot.clone()),
        threads: a.threads.unwrap_or_else(default_threads),
        init,
        step: a.step.or(f.step),
        out_field: a.out_field.clone().or_else(|| f.out_field.clone()),
        data: a.data.clone(),
        pairs: a.pairs.clone(),
    };
    // The result's format is known before the solve, not found wrong after it.
    if let Some(out) = &s.out
        && MeshFormat::from_path(out).is_none()
    {
        return Err(format!(
            "--out {out}: unknown mesh format (expected .obj, .off or .ply)"
        ));
    }
    // The plot is SVG; a path that names another format would get SVG under a wrong name.
    if let Some(plot) = &s.plot
        && !std::path::Path::new(plot)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("svg"))
    {
        return Err(format!(
            "--plot {plot}: the convergence plot is written as SVG; give a path ending in .svg"
        ));
    }
    // Directories that cannot hold the outputs are found before the solve, not after it.
    for (flag, path) in [("--out", &s.out), ("--plot", &s.plot)] {
        if let Some(p) = path {
            output_directory(p).map_err(|e| format!("{flag} {p}: {e}"))?;
        }
    }
    // Values out of range name the flag, or the block's setting, that gave them.
    let origin = |flag: &str, from_flag: bool, value: f64| {
        if from_flag { format!("--{flag} {value}") } else { format!("the solve block's `{flag} = {value}`") }
    };
    if let Some(st) = s.step
        && !(st > 0.0 && st.is_finite())
    {
        return Err(format!("{}: the gradient-descent step must be a positive finite number", origin("step", a.step.is_some(), st)));
    }
    if Solver::from_name(&s.solver).is_none() {
        return Err(format!(
            "unknown solver `{}` (one of: {})",
            s.solver,
            Solver::NAMES.join(", ")
        ));
    }
    if !(s.tol >= 0.0 && s.tol.is_finite()) {
        return Err(format!("{}: the tolerance must be a finite number ≥ 0", origin("tol", a.tol.is_some(), s.tol)));
    }
    // Flags that the chosen solve would silently ignore are mistakes.
    if a.step.is_some() && s.solver != "gd" {
        return Err(format!(
            "--step applies to the `gd` solver, not `{}`",
            s.solver
        ));
    }
    if a.project_psd && s.solver != "newton" {
        return Err(format!(
            "--project-psd applies to the `newton` solver, not `{}`",
            s.solver
        ));
    }
    if a.dt.is_some() && s.steps.is_none() {
        return Err("--dt applies to dynamics: give --steps N as well".into());
    }
    // A block setting that the solve being run ignores is dropped with a warning (a block
    // that names its solver and contradicts it is E0140 when the file compiles).
    if a.step.is_none() && f.step.is_some() && s.solver != "gd" {
        warn(&format!(
            "the solve block's `step` applies to the `gd` solver; ignored for solver `{}`",
            s.solver
        ));
    }
    if !a.project_psd && f.project_psd == Some(true) && s.solver != "newton" {
        warn(&format!(
            "the solve block's `project_psd` applies to the `newton` solver; ignored for \
             solver `{}`",
            s.solver
        ));
    }
    if a.dt.is_none() && f.dt.is_some() && s.steps.is_none() {
        warn("the solve block's `dt` applies to dynamics; ignored without `steps`");
    }
    if s.threads == 0 {
        return Err("--threads 0: the number of worker threads must be at least 1".into());
    }
    if s.threads > MAX_THREADS {
        return Err(format!(
            "--threads {}: at most {} worker threads",
            s.threads, MAX_THREADS
        ));
    }
    if s.steps == Some(0) {
        return Err("--steps 0: the number of time steps must be positive".into());
    }
    if !(s.dt > 0.0 && s.dt.is_finite()) {
        return Err(format!("{}: the time step must be a positive finite number", origin("dt", a.dt.is_some(), s.dt)));
    }
    solver_fits_terms(decls, &s)?;
    Ok(s)
}

/// Whether `s`'s solver can minimize the file's terms, found before anything is bound or
/// solved (a solve of no iterations would not find out): Newton needs the energies' Hessian,
/// which `residual` terms do not assemble, and the residual solvers run no time steps.
pub fn solver_fits_terms(decls: &MeshDecls, s: &Settings) -> Result<(), String> {
    let residuals = !decls.residuals.is_empty();
    // What implicit Euler (`steps`) can use on this file.
    let stepping = if residuals { "newton-cg, lbfgs or gd" } else { "newton, newton-cg, lbfgs or gd" };
    if residuals && s.solver == "newton" {
        return Err(format!(
            "solver `newton` needs the Hessian of the energies, and `residual` terms assemble \
             none: for a file with `residual` terms use {}",
            if s.steps.is_some() || !decls.energies.is_empty() {
                // Residual solvers refuse `energy` terms and time steps.
                stepping
            } else {
                "gauss-newton, levenberg-marquardt, their -cg forms, newton-cg, lbfgs or gd"
            }
        ));
    }
    if s.steps.is_some() && RESIDUAL_SOLVERS.contains(&s.solver.as_str()) {
        return Err(format!(
            "solver `{}` minimizes residuals and does not run time steps: implicit Euler \
             (`steps`) minimizes an energy; use {stepping}",
            s.solver
        ));
    }
    Ok(())
}
