//! `madc eval` and `madc bench`: mesh energies over a mesh, from the command line.

use super::args::{BenchArgs, BenchWhat, EvalArgs, MeshInputs};
use crate::api::Error;
use crate::energy::Contact;
use crate::energy::{EnergyError, EnergyProgram, MeshEnergy};
use crate::solve::inputs::{load_mesh, parse_set, read_field, set_data_and_pairs, warn_empty_terms};
use crate::solve::settings::MAX_THREADS;
use mad_runtime::npy::write_npy;
use mad_runtime::sparse::{write_matrix_market, write_matrix_market_rect};
use std::path::Path;

fn fail(msg: impl std::fmt::Display) -> i32 {
    eprintln!("error: {msg}");
    1
}

fn compile(file: &Path, color: bool) -> Result<EnergyProgram, i32> {
    let prog = EnergyProgram::compile_file(file).map_err(|e| match &e {
        Error::Compile(d) => {
            eprint!("{}", d.render(color));
            eprintln!("error: could not compile");
            1
        }
        other => fail(other),
    })?;
    let decls = prog.decls();
    if decls.energies.is_empty() && decls.residuals.is_empty() {
        return Err(fail(format_args!(
            "{} declares no `energy` or `residual` terms to evaluate over a mesh",
            file.display()
        )));
    }
    warn_prints(&prog);
    Ok(prog)
}

/// Warns about each term or update that calls `print`: mesh kernels write nothing.
pub(super) fn warn_prints(prog: &EnergyProgram) {
    for what in prog.printing_terms() {
        eprintln!(
            "warning: {what} calls `print` (itself or in a function it calls), which writes \
             nothing there: terms and updates run as compiled per-element kernels; print from \
             a function run with `madc run --entry`, or read values with `madc eval`"
        );
    }
}

/// The `(rows, cols)` of a dof-sized input array: `(V, d)` (or `(F, d)`) when the
/// program has one dof field, else `(ndofs, 1)`; the flat form is always accepted.
fn dof_dims(me: &MeshEnergy) -> (usize, usize) {
    match dof_shape(me)[..] {
        [n, d] => (n, d),
        _ => (me.ndofs(), 1),
    }
}

/// Binds the mesh, applies `--x`, `--set`, `--data`, `--threads`, runs the `update`
/// items once at x, and fills the pair list from `--pairs` or else from the file's
/// `broadphase` declaration at x. Without `--x`, x is where `madc run` starts
/// ([`MeshEnergy::initial_x`]). With `local` (`madc bench`) the mesh is bound as `madc run` binds it,
/// renumbered for locality where that pays ([`EnergyProgram::bind_local`]), unless `--x`,
/// `--data` or `--pairs` give arrays in the file's numbering.
fn setup<'p>(
    prog: &'p EnergyProgram,
    inp: &MeshInputs,
    local: bool,
) -> Result<(MeshEnergy<'p>, Vec<f64>), Fail> {
    let threads = inp.threads.unwrap_or_else(crate::solve::settings::default_threads);
    if threads == 0 {
        return Err(Fail::from("--threads 0: the number of worker threads must be at least 1".to_string()));
    }
    if threads > MAX_THREADS {
        return Err(format!("--threads {threads}: at most {} worker threads", MAX_THREADS).into());
    }
    // The loader's warnings (degenerate faces, fan-triangulated polygons, vertices in no
    // face): the mesh is accepted, but an energy may not suit it.
    let mesh_name = inp.mesh.as_deref().ok_or_else(|| Fail::from("--mesh is required: a mesh file or generator to evaluate over".to_string()))?;
    let mesh = load_mesh(mesh_name, &mut |w| eprintln!("warning: {w}"))?;
    let local = local && inp.x.is_none() && inp.data.is_empty() && inp.pairs.is_none();
    let mut me = if local { prog.bind_local(&mesh) } else { prog.bind(&mesh) }
        .map_err(|e| e.to_string())?;
    warn_empty_terms(mesh_name, &me, &mut |w| eprintln!("warning: {w}"));
    me.set_threads(threads).map_err(|e| e.to_string())?;
    for s in &inp.set {
        let (k, v) = parse_set(s)?;
        me.set_param(&k, v).map_err(|e| e.to_string())?;
    }
    set_data_and_pairs(&mut me, &inp.data, inp.pairs.as_deref())?;
    let mut x = match &inp.x {
        Some(p) => read_field(p, dof_dims(&me)).map_err(|e| format!("--x: {e}"))?,
        None => me.initial_x().map_err(|e| e.to_string())?,
    };
    // The objective a solve starts from: its `update` items run once at x first (the
    // states that terms read; an update of a dof re-assigns it), as `madc run` does.
    // A run-time error there (or one an update of a static state kept) exits with 2. Unset
    // data or params are reported first, as such (not as the updates').
    me.check_data().map_err(|e| e.to_string())?;
    me.update(&mut x).map_err(|e| {
        let Fail { code, message, snippet } = evaluation(e);
        Fail { code, message: format!("update: {message}"), snippet }
    })?;
    // A `broadphase` declaration fills the pair list at x, as every evaluation of a solve
    // does, unless `--pairs` gives the list.
    if inp.pairs.is_none()
        && let Some(mut contact) = Contact::from_program(&me).map_err(|e| e.to_string())?
    {
        contact.refresh(&mut me, &x).map_err(|e| e.to_string())?;
    }
    Ok((me, x))
}

fn write_file(
    path: &Path,
    f: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> Result<(), String> {
    let file = std::fs::File::create(path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let mut w = std::io::BufWriter::new(file);
    f(&mut w).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    std::io::Write::flush(&mut w).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

pub fn eval(a: &EvalArgs, color: bool) -> i32 {
    let nothing = !a.energy
        && a.grad.is_none()
        && a.hessian.is_none()
        && a.jacobian.is_none()
        && a.hvp.is_none()
        && a.mixed.is_empty();
    if nothing {
        return fail(
            "nothing to evaluate: pass --energy, --grad G.npy, --hessian H.mtx, --hvp \
             V.npy:OUT.npy, --mixed PARAM:OUT.npy or --jacobian J.mtx",
        );
    }
    let prog = match compile(&a.inputs.file, color) {
        Ok(p) => p,
        Err(c) => return c,
    };
    match eval_with(&prog, a) {
        Ok(()) => 0,
        Err(f) => f.report(),
    }
}

/// The shape of a dof-sized output array: `(entities, components)` when the
/// program has one dof field (`(V, d)` on vertices, `(F, d)` on faces), else flat.
fn dof_shape(me: &MeshEnergy) -> Vec<usize> {
    match me.dof_fields()[..] {
        [(_, n, d, _)] => vec![n, d],
        _ => vec![me.ndofs()],
    }
}

/// Why `madc eval` / `madc bench` stopped: an exit status and a message.
struct Fail {
    code: i32,
    message: String,
    /// A run-time error in a term shown at its source line (the rendered diagnostic), which
    /// is printed instead of `message`.
    snippet: Option<String>,
}

/// Bad input: exit status 1.
impl From<String> for Fail {
    fn from(message: String) -> Fail {
        Fail { code: 1, message, snippet: None }
    }
}

/// An error of an evaluation: a run-time error in a term exits with status 2
/// (as a run-time error of a program does), anything else is bad input.
fn evaluation(e: EnergyError) -> Fail {
    let (code, snippet) = match &e {
        EnergyError::Runtime { at, .. } => (2, at.as_ref().map(|a| a.snippet.clone())),
        _ => (1, None),
    };
    Fail {
        code,
        message: e.to_string(),
        snippet,
    }
}

impl Fail {
    fn report(self) -> i32 {
        match &self.snippet {
            Some(s) => eprint!("{s}"),
            None => eprintln!("error: {}", self.message),
        }
        self.code
    }
}

fn eval_with(prog: &EnergyProgram, a: &EvalArgs) -> Result<(), Fail> {
    // A flag that changes nothing is an error, as for `madc run`.
    if a.project_psd && a.hessian.is_none() {
        return Err("--project-psd applies to --hessian, which is not given".to_string().into());
    }
    let (me, x) = setup(prog, &a.inputs, false)?;
    let n = me.ndofs();
    let shape = dof_shape(&me);
    let mut g = vec![0.0; n];
    let mut energy = None;
    if let Some(path) = &a.hessian {
        let mut h = vec![0.0; me.nnz()];
        energy = Some(
            me.hessian(&x, &mut g, &mut h, a.project_psd)
                .map_err(evaluation)?,
        );
        let (pattern, values) = me.hessian_csr(&h).map_err(|e| e.to_string())?;
        write_file(path, |w| write_matrix_market(&pattern, &values, w))?;
    }
    if let Some(path) = &a.grad {
        energy = Some(me.gradient(&x, &mut g).map_err(evaluation)?);
        write_file(path, |w| {
            write_npy(&shape, &g, w).map_err(|e| std::io::Error::other(e.to_string()))
        })?;
    }
    if let Some(spec) = &a.hvp {
        let (vp, op) = spec
            .split_once(':')
            .ok_or_else(|| format!("--hvp {spec}: expected V.npy:OUT.npy"))?;
        let v = read_field(Path::new(vp), dof_dims(&me)).map_err(|e| format!("--hvp: {e}"))?;
        let mut out = vec![0.0; n];
        me.hvp(&x, &v, &mut out).map_err(evaluation)?;
        write_file(Path::new(op), |w| {
            write_npy(&shape, &out, w).map_err(|e| std::io::Error::other(e.to_string()))
        })?;
    }
    for spec in &a.mixed {
        let (param, op) = spec
            .split_once(':')
            .ok_or_else(|| format!("--mixed {spec}: expected PARAM:OUT.npy"))?;
        let mut out = vec![0.0; n];
        let through_states = me.states_reading_param(param.trim());
        if !through_states.is_empty() {
            eprintln!(
                "warning: --mixed {}: state(s) {} are computed from `{}` by `update`s; states are \
                 constant to differentiation, so this derivative leaves out the param's effect \
                 through them",
                param.trim(),
                through_states.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", "),
                param.trim()
            );
        }
        me.mixed(&x, param.trim(), &mut out).map_err(evaluation)?;
        write_file(Path::new(op), |w| {
            write_npy(&shape, &out, w).map_err(|e| std::io::Error::other(e.to_string()))
        })?;
    }
    if let Some(path) = &a.jacobian {
        let (_, j) = me.jacobian(&x).map_err(evaluation)?;
        write_file(path, |w| {
            write_matrix_market_rect(j.nrows, j.ncols, &j.row_ptr, &j.col_idx, &j.values, w)
        })?;
    }
    if a.energy {
        let e = match energy {
            Some(e) => e,
            None => me.energy(&x).map_err(evaluation)?,
        };
        super::stdout::write(format!("energy {e:?}\n").as_bytes());
    }
    Ok(())
}

pub fn bench(a: &BenchArgs, color: bool) -> i32 {
    if let Some(entry) = &a.entry {
        return super::run_function::bench_function(&a.inputs.file, entry, &a.args, a.runs, color);
    }
    if !a.args.is_empty() {
        return fail(format_args!("arguments after `--` are for `--entry NAME`"));
    }
    let prog = match compile(&a.inputs.file, color) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let Some(what) = a.what else {
        return fail(format_args!("--what or --entry is required"));
    };
    let what = match what {
        BenchWhat::Energy => "energy",
        BenchWhat::Grad => "grad",
        BenchWhat::Hessian => "hessian",
        BenchWhat::HessianPsd => "hessian-psd",
        BenchWhat::Hvp => "hvp",
        BenchWhat::Spmv => "spmv",
    };
    // The workloads time the energy terms; a file of residuals alone has none to time.
    if prog.decls().energies.is_empty() {
        return fail(format_args!(
            "{} has no `energy` terms to time (`madc bench` times the energy terms; \
             `madc eval --jacobian` evaluates residual terms)",
            a.inputs.file.display()
        ));
    }
    let run = || -> Result<(), Fail> {
        if a.runs == 0 {
            return Err(
                "--runs 0: the number of timed evaluations must be at least 1"
                    .to_string()
                    .into(),
            );
        }
        let (me, x) = setup(&prog, &a.inputs, true)?;
        let t = me.bench(what, &x, 3, a.runs).map_err(evaluation)?;
        let text = format!(
            "median {:.3} ms\nmin {:.3} ms\nmax {:.3} ms\nevaluations/s {:.1}\nruns {}\n",
            t.median_ms,
            t.min_ms,
            t.max_ms,
            1e3 / t.median_ms,
            t.runs
        );
        // A closed pipe (`| head -1`) ends the process quietly; another failed write is an
        // error at exit.
        super::stdout::write(text.as_bytes());
        Ok(())
    };
    match run() {
        Ok(()) => 0,
        Err(f) => f.report(),
    }
}
