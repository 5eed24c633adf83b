//! The `solve { key = value; ... }` block: how `madc run` minimizes a file's
//! energies when no flags say otherwise.
//!
//! ```text
//! solve {
//!     mesh = "grid:20x20";     // a mesh file or generator
//!     solver = "newton";       // newton | newton-cg | lbfgs | gd | gauss-newton | gauss-newton-cg |
//!                              // levenberg-marquardt (lm) | levenberg-marquardt-cg (lm-cg)
//!     max_iters = 100;         // per solve (per time step for dynamics)
//!     tol = 1e-6;              // absolute gradient-norm tolerance
//!     project_psd = true;      // projected Newton
//!     steps = 50; dt = 0.01;   // implicit Euler dynamics
//!     fix = [0, 19];           // vertex ids, "boundary", or a file of ids
//!     out = "flag.obj";        // result mesh (frames OUT_0001.EXT … with steps)
//!     plot = "conv.svg";       // convergence plot
//!     step = 0.01;             // gd: fixed first trial step λ (x ← x − λ∇E)
//!     out_field = "s";         // the vertex field (dof or state) written as positions
//! }
//! ```
//!
//! Values are literals: strings, numbers, `true`/`false`, and arrays of
//! integers; `solver`, `fix` and `out_field` also take a bare name (`solver = newton;`).
//! Relative paths are relative to the current directory, as on the command line.

/// Which vertices are fixed.
#[derive(Clone, Debug, PartialEq)]
pub enum FixSpec {
    /// Vertex ids.
    Ids(Vec<usize>),
    /// Every vertex on the mesh boundary.
    Boundary,
    /// A file of vertex ids (separated by whitespace or commas).
    File(String),
}

impl FixSpec {
    /// Parses the command-line form: `boundary`, comma-separated ids, or a file name.
    pub fn parse(text: &str) -> FixSpec {
        let t = text.trim();
        if t == "boundary" {
            return FixSpec::Boundary;
        }
        let ids: Result<Vec<usize>, _> = t.split(',').map(|s| s.trim().parse::<usize>()).collect();
        match ids {
            Ok(ids) => FixSpec::Ids(ids),
            Err(_) => FixSpec::File(t.to_string()),
        }
    }
}

/// The settings of a `solve` block (every key optional).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SolveSettings {
    pub mesh: Option<String>,
    pub solver: Option<String>,
    pub max_iters: Option<usize>,
    pub tol: Option<f64>,
    pub project_psd: Option<bool>,
    pub steps: Option<usize>,
    pub dt: Option<f64>,
    pub fix: Option<FixSpec>,
    pub out: Option<String>,
    pub plot: Option<String>,
    pub step: Option<f64>,
    pub out_field: Option<String>,
}

use super::diagnostics::ErrorKind;
use super::lower::Front;
use mad_grammar::ast::{Expr, ExprKind, UnOp};

/// A literal value of a setting.
enum Value {
    Num(f64),
    Int(i64),
    Str(String),
    Bool(bool),
    Name(String),
    Ints(Vec<i64>),
}

fn literal(e: &Expr) -> Option<Value> {
    Some(match &e.kind {
        ExprKind::Int(i) => Value::Int(*i),
        ExprKind::Float(x) => Value::Num(x.value),
        ExprKind::Bool(b) => Value::Bool(*b),
        ExprKind::Str(s) => Value::Str(s.clone()),
        ExprKind::Path(p) if p.len() == 1 => Value::Name(p[0].node.clone()),
        ExprKind::Unary {
            op: UnOp::Neg,
            operand,
        } => match literal(operand)? {
            Value::Int(i) => Value::Int(-i),
            Value::Num(x) => Value::Num(-x),
            _ => return None,
        },
        ExprKind::Array(items) => {
            let mut v = Vec::new();
            for it in items {
                match literal(it)? {
                    Value::Int(i) => v.push(i),
                    _ => return None,
                }
            }
            Value::Ints(v)
        }
        _ => return None,
    })
}

/// Checks the file's `solve` blocks (at most one) against the file's declarations and
/// returns its settings.
pub fn check(g: &mut Front, decls: &super::mesh::MeshDecls) -> Option<SolveSettings> {
    let blocks = std::mem::take(&mut g.items.solves);
    let mut result = None;
    for (k, (file, keyword, entries, span)) in blocks.iter().enumerate() {
        let bad = |g: &mut Front, detail: String, span| {
            g.error(ErrorKind::BadSolveBlock { detail }, *file, span)
        };
        if keyword.node != "solve" {
            bad(
                g,
                format!(
                    "`{}` is not an item; the only block item is `solve {{ ... }}`",
                    keyword.node
                ),
                keyword.span,
            );
            continue;
        }
        if k > 0 {
            bad(g, "there is already a solve block".into(), *span);
            continue;
        }
        let mut s = SolveSettings::default();
        let mut seen: Vec<(&str, _)> = Vec::new();
        for (key, value) in entries {
            if seen.iter().any(|(k, _)| *k == key.node.as_str()) {
                bad(g, format!("`{}` is set twice", key.node), key.span);
                continue;
            }
            seen.push((&key.node, key.span));
            let Some(v) = literal(value) else {
                let hyphenated = key.node == "solver" && matches!(value.kind, ExprKind::Binary { .. });
                let detail = if hyphenated {
                    "`solver` takes a name or a string; write a hyphenated name as a string \
                     (`solver = \"gauss-newton\";`)"
                        .to_string()
                } else if key.node == "fix" {
                    "`fix` must be an array of vertex ids (non-negative integers), `boundary`, or a \
                     file name string"
                        .to_string()
                } else {
                    format!(
                        "`{}` needs a literal value (a string, number, bool or array of integers)",
                        key.node
                    )
                };
                bad(g, detail, value.span);
                continue;
            };
            let text = |v: Value| match v {
                Value::Str(s) | Value::Name(s) => Some(s),
                _ => None,
            };
            let string = |v: Value| match v {
                Value::Str(s) => Some(s),
                _ => None,
            };
            let count = |v: &Value| match v {
                Value::Int(i) if *i >= 0 => Some(*i as usize),
                _ => None,
            };
            let number = |v: &Value| match v {
                Value::Int(i) => Some(*i as f64),
                Value::Num(x) => Some(*x),
                _ => None,
            };
            let ok = match key.node.as_str() {
                // File names and mesh specs are strings; `out_field` names a field.
                "mesh" => string(v).map(|t| s.mesh = Some(t)).is_some(),
                "out" => string(v).map(|t| s.out = Some(t)).is_some(),
                "plot" => string(v).map(|t| s.plot = Some(t)).is_some(),
                "out_field" => text(v).map(|t| s.out_field = Some(t)).is_some(),
                "step" => number(&v)
                    .filter(|x| *x > 0.0 && x.is_finite())
                    .map(|x| s.step = Some(x))
                    .is_some(),
                "solver" => match text(v) {
                    Some(t) if mad_runtime::solve::Solver::from_name(&t).is_some() => {
                        s.solver = Some(t);
                        true
                    }
                    _ => false,
                },
                "max_iters" => count(&v).map(|n| s.max_iters = Some(n)).is_some(),
                "steps" => count(&v)
                    .filter(|&n| n > 0)
                    .map(|n| s.steps = Some(n))
                    .is_some(),
                "tol" => number(&v)
                    .filter(|x| *x >= 0.0 && x.is_finite())
                    .map(|x| s.tol = Some(x))
                    .is_some(),
                "dt" => number(&v)
                    .filter(|x| *x > 0.0 && x.is_finite())
                    .map(|x| s.dt = Some(x))
                    .is_some(),
                "project_psd" => match v {
                    Value::Bool(b) => {
                        s.project_psd = Some(b);
                        true
                    }
                    _ => false,
                },
                "fix" => match v {
                    Value::Ints(ids) if ids.iter().all(|&i| i >= 0) => {
                        s.fix = Some(FixSpec::Ids(ids.iter().map(|&i| i as usize).collect()));
                        true
                    }
                    Value::Name(n) | Value::Str(n) if n == "boundary" => {
                        s.fix = Some(FixSpec::Boundary);
                        true
                    }
                    Value::Str(f) => {
                        s.fix = Some(FixSpec::File(f));
                        true
                    }
                    _ => false,
                },
                other => {
                    bad(
                        g,
                        format!("unknown setting `{other}` (one of: {})", KEYS.join(", ")),
                        key.span,
                    );
                    continue;
                }
            };
            if !ok {
                let want = match key.node.as_str() {
                    "mesh" | "out" | "plot" => "a string".to_string(),
                    "out_field" => "a field name".into(),
                    "step" => "a positive number".into(),
                    "solver" => format!("one of {}", mad_runtime::solve::Solver::NAMES.join(", ")),
                    "max_iters" => "a non-negative integer".into(),
                    "steps" => "a positive integer".into(),
                    "tol" => "a non-negative number".into(),
                    "dt" => "a positive number".into(),
                    "project_psd" => "`true` or `false`".into(),
                    _ => "an array of vertex ids, `boundary`, or a file name string".into(),
                };
                bad(g, format!("`{}` must be {want}", key.node), value.span);
            }
        }
        // Values that name something: the field written as positions, the files' formats.
        if let (Some(name), Some(sp)) = (s.out_field.as_deref(), value_span_of(entries, "out_field"))
            && let Some(why) = out_field_problem(decls, name)
        {
            bad(g, why, sp);
        }
        if let (Some(out), Some(sp)) = (s.out.as_deref(), value_span_of(entries, "out")) {
            let ext = std::path::Path::new(out).extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
            if !matches!(ext.as_deref(), Some("obj" | "ply" | "off")) {
                bad(g, format!("`out` must be a mesh file ending in .obj, .ply or .off, not \"{out}\""), sp);
            }
        }
        if let (Some(mesh), Some(sp)) = (s.mesh.as_deref(), value_span_of(entries, "mesh")) {
            if mesh.trim().is_empty() {
                bad(g, "`mesh` names no mesh: give a file (.obj, .off or .ply) or a generator such as \"grid:8x8\"".into(), sp);
            } else if mad_runtime::mesh::is_generator_spec(mesh) {
                // A generator's arguments are checked here, as `madc check` sees them.
                if let Err(e) = mad_runtime::mesh::generators::check_spec(mesh) {
                    bad(g, format!("`mesh`: {e}"), sp);
                }
            } else if mad_runtime::mesh::MeshFormat::from_path(mesh).is_none() {
                bad(
                    g,
                    format!("`mesh = \"{mesh}\"` is neither a mesh file (.obj, .off or .ply) nor a generator (grid, sphere, disk, torus, spheres2)"),
                    sp,
                );
            }
        }
        if let (Some(plot), Some(sp)) = (s.plot.as_deref(), value_span_of(entries, "plot")) {
            let ext = std::path::Path::new(plot).extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
            if ext.as_deref() != Some("svg") {
                bad(g, format!("`plot` must be an SVG file ending in .svg, not \"{plot}\""), sp);
            }
        }
        // A residual solver named in a block that it cannot serve.
        if let (Some(solver), Some(sp)) = (s.solver.as_deref(), value_span_of(entries, "solver"))
            && RESIDUAL_SOLVERS.contains(&solver)
        {
            if !decls.energies.is_empty() && !decls.residuals.is_empty() {
                bad(
                    g,
                    format!(
                        "`{solver}` minimizes ½‖r‖² alone and would leave this file's `energy` terms \
                         out; use newton-cg, lbfgs or gd"
                    ),
                    sp,
                );
            } else if decls.residuals.is_empty() {
                bad(g, format!("`{solver}` minimizes the `residual` terms of a file, and this file has none"), sp);
            } else if s.steps.is_some() {
                bad(g, format!("`{solver}` minimizes residuals and does not run time steps (`steps`)"), sp);
            }
        }
        // Newton on residual terms: they assemble no Hessian.
        if let (Some("newton"), Some(sp)) = (s.solver.as_deref(), value_span_of(entries, "solver"))
            && !decls.residuals.is_empty()
        {
            let instead = if decls.energies.is_empty() {
                "gauss-newton, levenberg-marquardt, their -cg forms, newton-cg, lbfgs or gd"
            } else {
                "newton-cg, lbfgs or gd (the residual solvers leave `energy` terms out)"
            };
            bad(
                g,
                format!(
                    "`newton` needs the Hessian of the energies, and this file's `residual` terms \
                     assemble none; use {instead}"
                ),
                sp,
            );
        }
        // A block that names its solver and also a setting that solver ignores contradicts
        // itself. (Without a `solver` key the solver may come from `--solver`: `madc run`
        // warns when the solve it runs ignores a block setting.)
        let span_of = |k: &str| seen.iter().find(|(n, _)| *n == k).map(|(_, sp)| *sp);
        if let Some(solver) = s.solver.as_deref() {
            if let (Some(_), Some(sp)) = (s.step, span_of("step"))
                && solver != "gd"
            {
                bad(g, format!("`step` applies to the `gd` solver, not `{solver}`"), sp);
            }
            if let (Some(true), Some(sp)) = (s.project_psd, span_of("project_psd"))
                && solver != "newton"
            {
                bad(g, format!("`project_psd` applies to the `newton` solver, not `{solver}`"), sp);
            }
        }
        result = Some(s);
    }
    result
}

/// The solvers that minimize `½‖r‖²` of the residual terms alone.
pub const RESIDUAL_SOLVERS: [&str; 6] =
    ["gauss-newton", "gauss-newton-cg", "levenberg-marquardt", "levenberg-marquardt-cg", "lm", "lm-cg"];

/// The span of the value given to `key` in a block's entries.
fn value_span_of(entries: &[(mad_grammar::ast::Ident, Expr)], key: &str) -> Option<mad_grammar::span::Span> {
    entries.iter().find(|(k, _)| k.node == key).map(|(_, v)| v.span)
}

/// Why `name` cannot be the `out_field` (a vertex `dof` or `state`), if it cannot.
fn out_field_problem(decls: &super::mesh::MeshDecls, name: &str) -> Option<String> {
    use super::types::StencilKind;
    let field = decls
        .dofs
        .iter()
        .map(|d| (d, "dof"))
        .chain(decls.states.iter().map(|s| (&decls.data[s.data], "state")))
        .find(|(d, _)| d.name == name);
    match field {
        None if decls.data.iter().any(|d| d.name == name) => Some(format!(
            "`out_field` must name a vertex `dof` or `state`; `{name}` is a `data` field (the \
             host's input, not something the solve changes)"
        )),
        None if decls.params.iter().any(|p| p.name == name) => Some(format!(
            "`out_field` must name a vertex `dof` or `state`; `{name}` is a `param`"
        )),
        None => Some(format!("`out_field` must name a vertex `dof` or `state`; this file declares no `{name}`")),
        Some((d, what)) if d.stencil != StencilKind::Vertex => Some(format!(
            "`out_field` must name a vertex `dof` or `state`; `{name}` is a {} {what}",
            d.stencil.name()
        )),
        // Positions are up to three numbers per vertex (zero-padded to 3D).
        Some((d, what))
            if !matches!(d.ty, super::types::SurfaceType::F64 | super::types::SurfaceType::Vec(2 | 3)) =>
        {
            Some(format!(
                "`out_field` must hold positions (`f64`, `vec2` or `vec3` per vertex); `{name}` is a `{}` {what}",
                d.ty
            ))
        }
        Some(_) => None,
    }
}

/// The keys a `solve` block accepts.
pub const KEYS: [&str; 12] = [
    "mesh",
    "solver",
    "max_iters",
    "tol",
    "project_psd",
    "steps",
    "dt",
    "fix",
    "out",
    "plot",
    "step",
    "out_field",
];
