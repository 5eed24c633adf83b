//! `madc run` on a file with mesh energies: minimize them over a mesh (a static
//! solve, or implicit Euler time steps), log every iteration, write the result.
//!
//! Settings come from the file's `solve { ... }` block, overridden by flags.
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
//! renumbered for locality ([`EnergyProgram::bind_local`]); `--fix` ids, initializer
//! files and the written meshes use the file's numbering all the same.
//!
//! Dynamics (`--steps N --dt H`): implicit Euler with a lumped mass of 1 per
//! vertex (every dof component of a vertex has mass 1), starting at rest.
//!
//! Exit codes: 0 when the solve converged (`gradient_tolerance`,
//! `newton_decrement` or `step_tolerance`; for dynamics, every step ran), 1 for bad input, 2 when the
//! solver failed or did not converge. With `--json`, a failure after the settings
//! were read ends standard output with a `{"type":"error",…}` line.

use super::commands;
use super::progress::Progress;
use super::svg_plot;
use crate::api::Program;
use crate::energy::{EnergyProgram, MeshEnergy, MeshObjective};
use crate::front::solve::{FixSpec, SolveSettings};
use crate::front::state::Init;
use mad_runtime::mesh::{Mesh, MeshFormat, save_mesh};
use mad_runtime::solve::{
    Control, ImplicitEuler, IterationInfo, SolveOptions, SolveReport, Solver, Status,
};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::time::Instant;

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
}

/// Everything a solve needs, after merging the file's block and the flags.
#[derive(Clone, Debug)]
struct Settings {
    mesh: String,
    solver: String,
    max_iters: usize,
    tol: f64,
    project_psd: bool,
    steps: Option<usize>,
    dt: f64,
    fix: Option<FixSpec>,
    /// Whether `fix` came from `--fix` (else from the solve block): errors name it so.
    fix_from_flag: bool,
    /// Whether the mesh came from `--mesh` (else from the solve block: messages say so).
    mesh_from_flag: bool,
    set: Vec<(String, f64)>,
    out: Option<String>,
    json: bool,
    plot: Option<String>,
    threads: usize,
    init: Vec<(String, Init)>,
    step: Option<f64>,
    out_field: Option<String>,
    data: Vec<String>,
    pairs: Option<std::path::PathBuf>,
}

/// The solver a run takes when neither `--solver` nor the solve block names one: Newton for
/// energies, Gauss-Newton for residuals alone, and Newton-CG (½‖r‖² plus the energies) for
/// both or for residuals stepped in time (the residual solvers run no time steps).
fn default_solver(mesh: &crate::front::mesh::MeshDecls, steps: bool) -> &'static str {
    match (mesh.residuals.is_empty(), mesh.energies.is_empty()) {
        (true, _) => "newton",
        (false, true) if !steps => "gauss-newton",
        (false, _) => "newton-cg",
    }
}

fn merge(
    file: Option<&SolveSettings>,
    a: &SolveArgs,
    decls: &crate::front::mesh::MeshDecls,
) -> Result<Settings, String> {
    let d = SolveSettings::default();
    let f = file.unwrap_or(&d);
    let mesh = a.mesh.clone().or_else(|| f.mesh.clone()).ok_or_else(|| {
        "no mesh: pass `--mesh MESH` or add `solve { mesh = \"grid:10x10\"; }` to the file"
            .to_string()
    })?;
    let mut set = Vec::new();
    for s in &a.set {
        set.push(super::mesh_commands::parse_set(s)?);
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
        max_iters: a.max_iters.or(f.max_iters).unwrap_or(200),
        tol: a.tol.or(f.tol).unwrap_or(1e-6),
        project_psd: a.project_psd || f.project_psd.unwrap_or(false),
        steps: a.steps.or(f.steps),
        dt: a.dt.or(f.dt).unwrap_or(0.01),
        fix: a
            .fix
            .as_deref()
            .map(FixSpec::parse)
            .or_else(|| f.fix.clone()),
        fix_from_flag: a.fix.is_some(),
        mesh_from_flag: a.mesh.is_some(),
        set,
        out: a.out.clone().or_else(|| f.out.clone()),
        json: a.json,
        plot: a.plot.clone().or_else(|| f.plot.clone()),
        threads: a.threads.unwrap_or_else(super::args::default_threads),
        init,
        step: a.step.or(f.step),
        out_field: f.out_field.clone(),
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
        eprintln!(
            "warning: the solve block's `step` applies to the `gd` solver; ignored for solver `{}`",
            s.solver
        );
    }
    if !a.project_psd && f.project_psd == Some(true) && s.solver != "newton" {
        eprintln!(
            "warning: the solve block's `project_psd` applies to the `newton` solver; ignored for \
             solver `{}`",
            s.solver
        );
    }
    if a.dt.is_none() && f.dt.is_some() && s.steps.is_none() {
        eprintln!("warning: the solve block's `dt` applies to dynamics; ignored without `steps`");
    }
    if s.threads == 0 {
        return Err("--threads 0: the number of worker threads must be at least 1".into());
    }
    if s.threads > super::args::MAX_THREADS {
        return Err(format!(
            "--threads {}: at most {} worker threads",
            s.threads,
            super::args::MAX_THREADS
        ));
    }
    if s.steps == Some(0) {
        return Err("--steps 0: the number of time steps must be positive".into());
    }
    if !(s.dt > 0.0 && s.dt.is_finite()) {
        return Err(format!("{}: the time step must be a positive finite number", origin("dt", a.dt.is_some(), s.dt)));
    }
    Ok(s)
}

/// `madc run FILE [flags] [-- args]`: solve the energies, or run a function.
pub fn run(
    file: &Path,
    entry: Option<&str>,
    a: &SolveArgs,
    interp: bool,
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
        return commands::run_program(&program, file, entry.unwrap_or("main"), interp, args, color);
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
    let settings = match merge(mesh.solve.as_ref(), a, mesh).and_then(|s| solver_fits_terms(mesh, s)) {
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
    match solve(&eprog, &settings) {
        Ok(true) => 0,
        Ok(false) => 2,
        Err(Failure::Input(m)) => json_error(a.json, fail(&m), &m),
        Err(Failure::Solver(m)) => {
            eprintln!("error: {m}");
            json_error(a.json, 2, &m)
        }
    }
}

/// `s` if its solver can minimize the file's terms, before anything is bound or solved
/// (a solve of no iterations would not find out): Newton needs the energies' Hessian, which
/// `residual` terms do not assemble, and the residual solvers run no time steps.
fn solver_fits_terms(mesh: &crate::front::mesh::MeshDecls, s: Settings) -> Result<Settings, String> {
    let residuals = !mesh.residuals.is_empty();
    // What implicit Euler (`steps`) can use on this file.
    let stepping = if residuals { "newton-cg, lbfgs or gd" } else { "newton, newton-cg, lbfgs or gd" };
    if residuals && s.solver == "newton" {
        return Err(format!(
            "solver `newton` needs the Hessian of the energies, and `residual` terms assemble \
             none: for a file with `residual` terms use {}",
            if s.steps.is_some() || !mesh.energies.is_empty() {
                // Residual solvers refuse `energy` terms and time steps.
                stepping
            } else {
                "gauss-newton, levenberg-marquardt, their -cg forms, newton-cg, lbfgs or gd"
            }
        ));
    }
    if s.steps.is_some() && crate::front::solve::RESIDUAL_SOLVERS.contains(&s.solver.as_str()) {
        return Err(format!(
            "solver `{}` minimizes residuals and does not run time steps: implicit Euler \
             (`steps`) minimizes an energy; use {stepping}",
            s.solver
        ));
    }
    Ok(s)
}

/// With `--json`, a run that fails after its settings were read ends its standard output
/// with `{"type":"error","message":…,"exit_status":…}` instead of the summary (the message
/// also goes to standard error). Returns the exit status `code`.
fn json_error(json: bool, code: i32, message: &str) -> i32 {
    if json {
        let line = format!(
            "{{\"type\":\"error\",\"message\":{},\"exit_status\":{code}}}\n",
            json_str(message)
        );
        super::stdout::write(line.as_bytes());
    }
    code
}

/// Why a solve ended without a result: bad input (exit status 1) or a solver
/// that failed on valid input (exit status 2).
enum Failure {
    Input(String),
    Solver(String),
}

impl From<String> for Failure {
    fn from(m: String) -> Failure {
        Failure::Input(m)
    }
}

/// A solver error: a solver the file's terms cannot serve is bad input, any
/// other error a failure of the solver.
fn solver_failure(context: &str, solver: &str, e: mad_runtime::solve::SolveError) -> Failure {
    use mad_runtime::solve::SolveError as E;
    match e {
        E::Unsupported(what) => {
            let hint = if what.contains("`energy` terms too") {
                "for a file with both `energy` and `residual` terms use newton-cg, lbfgs or gd, \
                 which minimize ½‖r‖² plus the energies"
            } else if what.contains("Jacobian") {
                "it minimizes the `residual` terms of a file, and this file has none"
            } else {
                "for a file with `residual` terms use gauss-newton, levenberg-marquardt, \
                 their -cg forms, newton-cg, lbfgs or gd"
            };
            Failure::Input(format!("{context}solver `{solver}`: {e}: {hint}"))
        }
        e => Failure::Solver(format!("{context}solver: {e}")),
    }
}

fn fail(msg: impl std::fmt::Display) -> i32 {
    eprintln!("error: {msg}");
    1
}

/// Why `value`, written with digits, signs, dots, commas and spaces only (a list of ids, not a
/// file name), is not a list of vertex ids: its first entry that is empty or not a
/// non-negative integer. `None` for anything else.
fn id_list_problem(value: &str) -> Option<String> {
    let id_like = |c: char| c.is_ascii_digit() || matches!(c, ',' | '-' | '+' | '.' | ' ');
    if value.is_empty() || !value.chars().all(id_like) {
        return None;
    }
    value.split(',').map(str::trim).find_map(|t| match t {
        "" => Some("an empty entry in the list of vertex ids (write ids separated by single commas)".to_string()),
        _ if t.parse::<usize>().is_err() => Some(format!("`{t}` is not a vertex id (a non-negative integer)")),
        _ => None,
    })
}

/// The fixed-dof mask of a fix spec; errors name the setting as written (`--fix VALUE`, or
/// the solve block's `fix = VALUE` when `from_flag` is false), and an id read from a file its
/// line. A file of ids separates them by whitespace, commas or lines; `#` starts a comment
/// that runs to the end of its line. What fixes nothing — `boundary` on a mesh without
/// boundary, a file without ids — does so with a warning; a program without dofs on vertices
/// cannot have vertices fixed: an error for the flag, a warning for the solve block's setting
/// (which is then dropped, as other settings the solve ignores are).
fn fixed_mask(me: &MeshEnergy, spec: &FixSpec, from_flag: bool) -> Result<Vec<bool>, String> {
    let origin = |value: &str, quoted: bool| match (from_flag, quoted) {
        (true, _) => format!("--fix {value}"),
        (false, true) => format!("the solve block's `fix = \"{value}\"`"),
        (false, false) => format!("the solve block's `fix = {value}`"),
    };
    let setting = match spec {
        FixSpec::File(path) => origin(path, true),
        FixSpec::Boundary => origin("boundary", false),
        _ if from_flag => "--fix".to_string(),
        _ => "the solve block's `fix`".to_string(),
    };
    let mut mask = vec![false; me.ndofs()];
    // Every vertex has the same vertex fields: vertex 0 tells.
    if me.num_vertices() == 0 || me.vertex_dofs(0).is_empty() {
        let message = format!("{setting}: this program has no `dof` on vertices, so no vertex can be fixed");
        if from_flag {
            return Err(message);
        }
        eprintln!("warning: {message}; the setting is dropped");
        return Ok(mask);
    }
    let nv = me.num_vertices();
    // Each id with the line of the file it was read from.
    let ids: Vec<(usize, Option<usize>)> = match spec {
        FixSpec::Boundary => {
            let ids: Vec<_> = (0..nv).filter(|&i| me.topology().vertex_boundary[i]).map(|i| (i, None)).collect();
            if ids.is_empty() {
                eprintln!("warning: {setting}: the mesh has no boundary; no vertex is fixed");
            }
            ids
        }
        FixSpec::Ids(ids) => ids.iter().map(|&i| (i, None)).collect(),
        FixSpec::File(path) => {
            let bytes = std::fs::read(path).map_err(|e| {
                // What was meant as a list of ids gets a message about its ids.
                if e.kind() == std::io::ErrorKind::NotFound
                    && let Some(problem) = id_list_problem(path)
                {
                    return format!("{setting}: {problem}");
                }
                format!(
                    "{setting}: not `boundary` or comma-separated vertex ids, and not a readable \
                     file of ids: {e}"
                )
            })?;
            let text = String::from_utf8(bytes).map_err(|e| {
                let at = e.utf8_error().valid_up_to();
                let line = 1 + e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count();
                format!("{setting}: line {line}: not text (invalid UTF-8 at byte {at})")
            })?;
            let mut ids = Vec::new();
            for (line, row) in text.lines().enumerate() {
                let row = row.split('#').next().unwrap_or("");
                for t in row.split(|c: char| c.is_whitespace() || c == ',').filter(|t| !t.is_empty()) {
                    let id = t
                        .parse::<usize>()
                        .map_err(|_| format!("{setting}: line {}: `{t}` is not a vertex id", line + 1))?;
                    ids.push((id, Some(line + 1)));
                }
            }
            if ids.is_empty() {
                eprintln!("warning: {setting}: the file lists no vertex id; no vertex is fixed");
            }
            ids
        }
    };
    for (i, line) in ids {
        if i >= nv {
            let at = line.map(|l| format!("line {l}: ")).unwrap_or_default();
            return Err(format!(
                "{setting}: {at}fixed vertex {i} is out of range (the mesh has {nv} vertices)"
            ));
        }
        // Ids are the file's; the boundary's are the bound mesh's already.
        let v = match (spec, me.renumbering()) {
            (FixSpec::Boundary, _) | (_, None) => i,
            (_, Some(r)) => r.new_id(i),
        };
        for d in me.vertex_dofs(v) {
            mask[d] = true;
        }
    }
    Ok(mask)
}

/// A JSON number (`null` when not finite).
fn num(x: f64) -> String {
    if x.is_finite() {
        format!("{x:?}")
    } else {
        "null".into()
    }
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A JSON string literal.
fn json_str(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn status_name(s: Status) -> &'static str {
    match s {
        Status::GradientTolerance => "gradient_tolerance",
        Status::NewtonDecrement => "newton_decrement",
        Status::StepTolerance => "step_tolerance",
        Status::MaxIterations => "max_iterations",
        Status::Stopped => "stopped",
        Status::Stalled => "stalled",
    }
}

/// Writes one log record: a JSON line on stdout, or a text line on stderr.
struct Log {
    json: bool,
    progress: Progress,
    /// (energy, ‖g‖) of every iteration of every solve, for the plot.
    points: Vec<(f64, f64)>,
}

impl Log {
    fn line(&self, text: String) {
        if self.json {
            super::stdout::note(writeln!(std::io::stdout().lock(), "{text}"));
        } else {
            self.progress.line(&text);
        }
    }

    fn iteration(&mut self, time_step: Option<usize>, it: &IterationInfo) {
        self.points.push((it.energy, it.grad_norm));
        if time_step.is_none() {
            self.progress.set(
                it.iteration as u64,
                format!("energy {:.6e}  |g| {:.2e}", it.energy, it.grad_norm),
            );
        }
        let t = &it.timings;
        if self.json {
            let ts = time_step.map_or(String::new(), |s| format!("\"time_step\":{s},"));
            self.line(format!(
                "{{\"type\":\"iteration\",{ts}\"iteration\":{},\"energy\":{},\"grad_norm\":{},\"step\":{},\"step_norm\":{},\"backtracks\":{},\"shift\":{},\"mu\":{},\"linear_iterations\":{},\"time_ms\":{},\"derivatives_ms\":{},\"assembly_ms\":{},\"linear_solve_ms\":{},\"line_search_ms\":{}}}",
                it.iteration,
                num(it.energy),
                num(it.grad_norm),
                num(it.step),
                num(it.step_norm),
                it.backtracks,
                num(it.shift),
                it.mu.map_or("null".into(), num),
                it.linear_iterations,
                num(ms(t.total())),
                num(ms(t.derivatives)),
                num(ms(t.assembly)),
                num(ms(t.linear_solve)),
                num(ms(t.line_search)),
            ));
        } else if time_step.is_none() {
            self.line(format!(
                "iter {:4}  energy {:<22}  |g| {:.3e}  step {:.3e}  time {:.3} ms{}",
                it.iteration,
                format!("{:.12e}", it.energy),
                it.grad_norm,
                it.step,
                ms(t.total()),
                it.mu.map_or(String::new(), |m| format!("  mu {m:.2e}"))
            ));
        }
    }
}

/// Binds the mesh, applies the params; returns the objective and the start.
fn setup<'p>(
    prog: &'p EnergyProgram,
    s: &Settings,
) -> Result<(MeshObjective<'p>, Vec<f64>, Mesh), String> {
    let mesh = super::mesh_commands::load_mesh_warning(&s.mesh).map_err(|e| {
        if s.mesh_from_flag { e } else { format!("the solve block's `mesh = \"{}\"`: {e}", s.mesh) }
    })?;
    // Renumbered for locality where that pays; results are written in the file's numbering.
    // Arrays given by `--data` or `--pairs` are in the file's numbering: no renumbering then.
    let given_arrays = !s.data.is_empty() || s.pairs.is_some();
    let mut me = if given_arrays { prog.bind(&mesh) } else { prog.bind_local(&mesh) }
        .map_err(|e| e.to_string())?;
    super::mesh_commands::warn_empty_terms(&s.mesh, &me);
    me.set_threads(s.threads).map_err(|e| e.to_string())?;
    let broadphase = prog.decls().broadphase.is_some();
    if s.pairs.is_some() && broadphase {
        return Err("--pairs: the file's `broadphase` declaration finds the pairs itself".into());
    }
    super::mesh_commands::set_data_and_pairs(&mut me, &s.data, s.pairs.as_deref())?;
    if me.pair_arity() > 0 && !broadphase && s.pairs.is_none() {
        eprintln!(
            "warning: the `pair` terms have no pairs (no `broadphase` declaration and no \
             --pairs): they add nothing"
        );
    }
    for (k, v) in &s.set {
        me.set_param(k, *v).map_err(|e| e.to_string())?;
    }
    for (k, v) in &s.init {
        me.set_init(k, v.clone())
            .map_err(|e| format!("--init {k}: {e}"))?;
    }
    let x = me.initial_x().map_err(|e| e.to_string())?;
    if x.is_empty() {
        eprintln!("warning: this program declares no `dof`: there is nothing to solve (the energy is evaluated once)");
    }
    let obj = MeshObjective::new(me, &x).map_err(|e| e.to_string())?;
    Ok((obj, x, mesh))
}

fn write_mesh_at(
    me: &MeshEnergy,
    mesh: &Mesh,
    x: &[f64],
    path: &str,
    field: Option<&str>,
) -> Result<(), String> {
    let positions = match field {
        Some(f) => me.field_positions(x, f).map_err(|e| e.to_string())?,
        None => me
            .positions_of(x)
            .ok_or("the program has no dofs to write as a mesh")?,
    };
    let positions = match me.renumbering() {
        Some(r) if positions.len() == r.len() => r.rows_to_original(&positions, 1),
        _ => positions,
    };
    let out = Mesh {
        positions,
        triangles: mesh.triangles.clone(),
    };
    // `--out frames/cloth.ply` creates `frames/` as needed.
    output_directory(path).map_err(|e| format!("cannot write the result mesh {path}: {e}"))?;
    save_mesh(&out, path).map_err(|e| format!("cannot write the result mesh: {}", super::mesh_commands::mesh_error(path, e)))
}

/// Creates the directory that `path` (an output file) lies in, as needed; an error names
/// the part of it that is a file rather than a directory.
fn output_directory(path: &str) -> Result<(), String> {
    let Some(dir) = Path::new(path).parent().filter(|d| !d.as_os_str().is_empty()) else {
        return Ok(());
    };
    if let Some(file) = dir.ancestors().find(|a| a.is_file()) {
        return Err(format!("{}: is a file, not a directory", file.display()));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create the directory: {e}", dir.display()))
}

/// `OUT_0001.EXT` for frame 1 of `OUT.EXT`.
fn frame_path(out: &str, k: usize) -> String {
    let p = Path::new(out);
    let stem = p.with_extension("");
    let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("ply");
    format!("{}_{k:04}.{ext}", stem.display())
}

/// Runs the solve; `Ok(true)` when it converged (static) or every step ran (dynamics).
fn solve(prog: &EnergyProgram, s: &Settings) -> Result<bool, Failure> {
    let (mut obj, mut x, mesh) = setup(prog, s)?;
    // Missing params or data, or an `out_field` that names no field, are bad
    // input, not a failure of the solver.
    obj.energy().check_data().map_err(|e| e.to_string())?;
    if let Some(f) = &s.out_field {
        obj.energy()
            .field_positions(&x, f)
            .map_err(|e| format!("out_field: {e}"))?;
    } else if let Some(out) = &s.out
        && obj.energy().positions_of(&x).is_none()
    {
        return Err(Failure::Input(format!(
            "--out {out}: the mesh written takes its positions from the first vertex `dof` \
             field, and this program's dofs are not on vertices; set `out_field` in the solve \
             block to a vertex `state` to write, or leave out --out"
        )));
    }
    let mut opts = SolveOptions {
        max_iters: s.max_iters,
        grad_abs_tol: s.tol,
        ..SolveOptions::default()
    };
    if let Some(spec) = &s.fix {
        opts.fixed = Some(fixed_mask(obj.energy(), spec, s.fix_from_flag)?);
    }
    let mut solver =
        Solver::from_name(&s.solver).ok_or_else(|| format!("unknown solver `{}`", s.solver))?;
    if let Solver::Newton(n) = &mut solver {
        n.project_psd = s.project_psd;
    }
    if let Solver::GradientDescent(g) = &mut solver {
        g.step = s.step;
    }
    let progress = match s.steps {
        Some(n) => Progress::new(n as u64, "steps"),
        None => Progress::new(s.max_iters as u64, "iterations"),
    };
    let mut log = Log {
        json: s.json,
        progress,
        points: Vec::new(),
    };
    let start = Instant::now();
    // The summary is printed last, after the plot is written: a run that fails writing it
    // ends with the error alone (and its `--json` error line), not a summary and an error.
    let (ok, report, steps_done, potentials) = match s.steps {
        None => {
            let mut cb = |it: &IterationInfo| {
                log.iteration(None, it);
                Control::Continue
            };
            let report = solver
                .solve(&mut obj, &mut x, &opts, Some(&mut cb))
                .map_err(|e| solver_failure("", &s.solver, e))?;
            if let Some(out) = &s.out {
                write_mesh_at(obj.energy(), &mesh, &x, out, s.out_field.as_deref())?;
            }
            // A fixed-step gradient descent is a fixed number of iterations (smoothing).
            let fixed_run =
                s.step.is_some() && s.solver == "gd" && report.status == Status::MaxIterations;
            (report.status.converged() || fixed_run, Some(report), 1, None)
        }
        Some(steps) => {
            let n = x.len();
            let mut euler =
                ImplicitEuler::new(&mut obj, vec![1.0; n], s.dt, x.clone(), vec![0.0; n])
                    .map_err(|e| e.to_string())?;
            let mut last = None;
            let first_potential = euler.potential_mut().value(&x).map_err(|e| e.to_string())?;
            let mut last_potential = first_potential;
            // Gradient norms are shown as the residual of the equations of motion, the
            // incremental potential's over h², the quantity `tol` bounds
            // (`ImplicitEuler::step_options`).
            let h2 = s.dt * s.dt;
            for k in 1..=steps {
                let mut cb = |it: &IterationInfo| {
                    log.iteration(Some(k), &IterationInfo { grad_norm: it.grad_norm / h2, ..it.clone() });
                    Control::Continue
                };
                let mut report = euler
                    .step(&mut solver, &opts, Some(&mut cb))
                    .map_err(|e| solver_failure(&format!("time step {k}: "), &s.solver, e))?;
                report.grad_norm /= h2;
                report.initial_grad_norm /= h2;
                let pos = euler.positions().to_vec();
                let potential = euler
                    .potential_mut()
                    .value(&pos)
                    .map_err(|e| e.to_string())?;
                if s.json {
                    log.line(format!(
                        "{{\"type\":\"step\",\"time_step\":{k},\"time\":{},\"iterations\":{},\"status\":\"{}\",\"potential\":{},\"grad_norm\":{}}}",
                        num(k as f64 * s.dt),
                        report.iterations,
                        status_name(report.status),
                        num(potential),
                        num(report.grad_norm)
                    ));
                } else {
                    log.line(format!(
                        "step {k:4}  t {:.4}  iters {:3}  potential {:.12e}  |g| {:.3e}  {}",
                        k as f64 * s.dt,
                        report.iterations,
                        potential,
                        report.grad_norm,
                        status_name(report.status)
                    ));
                }
                log.progress
                    .set(k as u64, format!("{} iterations", report.iterations));
                if let Some(out) = &s.out {
                    write_mesh_at(
                        euler.potential().energy(),
                        &mesh,
                        euler.positions(),
                        &frame_path(out, k),
                        s.out_field.as_deref(),
                    )?;
                }
                last = Some(report);
                last_potential = potential;
            }
            x.copy_from_slice(euler.positions());
            (true, last, steps, Some((first_potential, last_potential)))
        }
    };
    if let Some(path) = &s.plot {
        let svg = svg_plot::convergence(&log.points, &format!("{} on {}", s.solver, s.mesh));
        // Like `--out`, `--plot plots/conv.svg` creates `plots/` as needed.
        output_directory(path)?;
        std::fs::write(path, svg).map_err(|e| format!("cannot write {path}: {e}"))?;
    }
    if let Some(r) = &report {
        summary(&log, s, r, start, steps_done, potentials);
    }
    Ok(ok)
}

use mad_runtime::solve::Objective as _;

/// The final line. A dynamics run (`potentials`: the potential energy E at the start and
/// after the last step) reports E from start to end in the human line, the quantity its step
/// lines print; the JSON summary keeps `initial_energy`/`energy` for the objective of the last
/// minimization (the last step's incremental potential) and adds `initial_potential` and
/// `potential` (`null` for a static solve).
fn summary(log: &Log, s: &Settings, r: &SolveReport, start: Instant, steps: usize, potentials: Option<(f64, f64)>) {
    log.progress.finish();
    let elapsed = ms(start.elapsed());
    let total_iters = log.points.len();
    if s.json {
        // The file holding the result: in a dynamics run, the last frame written.
        let out = match (s.out.as_deref(), s.steps.is_some()) {
            (None, _) | (Some(_), true) if steps == 0 => "null".to_string(),
            (Some(o), true) => json_str(&frame_path(o, steps)),
            (Some(o), false) => json_str(o),
            (None, _) => "null".into(),
        };
        let (p0, p1) = potentials.map_or(("null".to_string(), "null".to_string()), |(a, b)| (num(a), num(b)));
        log.line(format!(
            "{{\"type\":\"summary\",\"solver\":{},\"mesh\":{},\"status\":\"{}\",\"converged\":{},\"iterations\":{},\"total_iterations\":{total_iters},\"time_steps\":{},\"initial_energy\":{},\"energy\":{},\"initial_grad_norm\":{},\"grad_norm\":{},\"initial_potential\":{p0},\"potential\":{p1},\"time_ms\":{},\"out\":{out}}}",
            json_str(&s.solver),
            json_str(&s.mesh),
            status_name(r.status),
            r.status.converged(),
            r.iterations,
            if s.steps.is_some() { steps } else { 0 },
            num(r.initial_energy),
            num(r.energy),
            num(r.initial_grad_norm),
            num(r.grad_norm),
            num(elapsed),
        ));
    } else if let Some((p0, p1)) = potentials {
        log.line(format!(
            "{}: {steps} time steps, {total_iters} iterations, potential {p0:.12e} -> {p1:.12e}, last step |g| {:.3e}, {elapsed:.1} ms",
            status_name(r.status),
            r.grad_norm,
        ));
    } else {
        log.line(format!(
            "{}: {} iterations, energy {:.12e} -> {:.12e}, |g| {:.3e}, {:.1} ms",
            status_name(r.status),
            r.iterations,
            r.initial_energy,
            r.energy,
            r.grad_norm,
            elapsed
        ));
    }
}
