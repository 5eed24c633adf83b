//! `madc run` on files with mesh energies: solves, logs, outputs.

use std::collections::BTreeMap;

use crate::cli_common;
use cli_common::madc;

fn tmp(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("mad-solve-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name).display().to_string()
}

/// A JSON value (enough for the log lines: flat objects of numbers, strings, bools, null).
#[derive(Debug, Clone, PartialEq)]
enum J {
    Num(f64),
    Str(String),
    Bool(bool),
    Null,
}

/// Parses one flat JSON object; panics on anything malformed.
fn parse_object(line: &str) -> BTreeMap<String, J> {
    let b = line.trim().as_bytes();
    let mut i = 0;
    let ws = |i: &mut usize| {
        while *i < b.len() && (b[*i] as char).is_whitespace() {
            *i += 1;
        }
    };
    let string = |i: &mut usize| -> String {
        assert_eq!(b[*i], b'"', "expected a string in {line}");
        *i += 1;
        let mut s = String::new();
        while b[*i] != b'"' {
            if b[*i] == b'\\' {
                *i += 1;
                s.push(match b[*i] {
                    b'n' => '\n',
                    c => c as char,
                });
            } else {
                s.push(b[*i] as char);
            }
            *i += 1;
        }
        *i += 1;
        s
    };
    let mut m = BTreeMap::new();
    ws(&mut i);
    assert_eq!(b[i], b'{', "{line}");
    i += 1;
    loop {
        ws(&mut i);
        let k = string(&mut i);
        ws(&mut i);
        assert_eq!(b[i], b':', "{line}");
        i += 1;
        ws(&mut i);
        let v = if b[i] == b'"' {
            J::Str(string(&mut i))
        } else {
            let start = i;
            while i < b.len() && !matches!(b[i], b',' | b'}') {
                i += 1;
            }
            match line.trim()[start..i].trim() {
                "true" => J::Bool(true),
                "false" => J::Bool(false),
                "null" => J::Null,
                t => J::Num(
                    t.parse()
                        .unwrap_or_else(|_| panic!("bad number `{t}` in {line}")),
                ),
            }
        };
        assert!(m.insert(k, v).is_none(), "duplicate key in {line}");
        ws(&mut i);
        if b[i] == b',' {
            i += 1;
        } else {
            assert_eq!(b[i], b'}', "{line}");
            assert_eq!(i + 1, b.len(), "trailing text in {line}");
            break;
        }
    }
    m
}

fn num(m: &BTreeMap<String, J>, k: &str) -> f64 {
    match m.get(k) {
        Some(J::Num(x)) => *x,
        other => panic!("{k}: {other:?}"),
    }
}

#[test]
fn json_log_parses_and_energy_decreases_monotonically() {
    let (rc, out, err) = madc(&[
        "run",
        "examples/smooth.mad",
        "--mesh",
        "sphere:2",
        "--solver",
        "gd",
        "--tol",
        "1e-6",
        "--json",
    ]);
    assert_eq!(rc, 0, "{err}");
    let lines: Vec<_> = out.lines().map(parse_object).collect();
    let (summary, iters) = lines.split_last().unwrap();
    assert_eq!(summary.get("type"), Some(&J::Str("summary".into())));
    assert_eq!(summary.get("converged"), Some(&J::Bool(true)));
    assert!(
        iters.len() >= 2
            && iters
                .iter()
                .all(|m| m.get("type") == Some(&J::Str("iteration".into())))
    );
    let energies: Vec<f64> = iters.iter().map(|m| num(m, "energy")).collect();
    assert!(energies.windows(2).all(|w| w[1] <= w[0]), "{energies:?}");
    assert!(num(summary, "energy") < num(summary, "initial_energy"));
    assert!(num(summary, "grad_norm") <= 1e-6);
    assert_eq!(num(summary, "iterations") as usize, iters.len());
}

#[test]
fn fixed_boundary_stays_put_and_the_result_is_written() {
    let out_path = tmp("smooth.obj");
    let plot = tmp("conv.svg");
    let (rc, _, err) = madc(&[
        "run",
        "examples/smooth.mad",
        "--mesh",
        "disk:8",
        "--solver",
        "lbfgs",
        "--fix",
        "boundary",
        "--out",
        &out_path,
        "--plot",
        &plot,
    ]);
    assert_eq!(rc, 0, "{err}");
    assert!(err.contains("gradient_tolerance"), "{err}");
    let before = mad_runtime::mesh::load_mesh("disk:8").unwrap();
    let after = mad_runtime::mesh::load_mesh(&out_path).unwrap();
    let topo = mad_runtime::mesh::Topology::new(&before).unwrap();
    assert_eq!(after.triangles, before.triangles);
    let mut moved_interior = false;
    for (i, (a, b)) in before.positions.iter().zip(&after.positions).enumerate() {
        let d = (0..3).map(|c| (a[c] - b[c]).abs()).fold(0.0, f64::max);
        if topo.vertex_boundary[i] {
            assert!(d < 1e-12, "boundary vertex {i} moved by {d}");
        } else if d > 1e-6 {
            moved_interior = true;
        }
    }
    assert!(moved_interior);
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(svg.matches("<polyline").count(), 2);
}

#[test]
fn flag_static_newton_converges_with_pins_in_place() {
    let out_path = tmp("flag.obj");
    let (rc, out, err) = madc(&[
        "run",
        "examples/flag.mad",
        "--mesh",
        "grid:8x8",
        "--solver",
        "newton",
        "--project-psd",
        "--fix",
        "0,56",
        "--tol",
        "1e-7",
        "--json",
        "--out",
        &out_path,
    ]);
    assert_eq!(rc, 0, "{err}\n{out}");
    let summary = parse_object(out.lines().last().unwrap());
    assert_eq!(summary.get("converged"), Some(&J::Bool(true)));
    assert!(num(&summary, "energy") < num(&summary, "initial_energy"));
    let before = mad_runtime::mesh::load_mesh("grid:8x8").unwrap();
    let after = mad_runtime::mesh::load_mesh(&out_path).unwrap();
    for i in [0, 56] {
        assert_eq!(after.positions[i], before.positions[i], "pinned vertex {i}");
    }
    // The free corner opposite the pole hangs below where it started.
    assert!(after.positions[7][1] < before.positions[7][1] - 1e-4);
}

#[test]
fn flag_dynamics_writes_frames_and_keeps_pins() {
    let out_path = tmp("flagdyn.ply");
    let (rc, out, err) = madc(&[
        "run",
        "examples/flag.mad",
        "--mesh",
        "grid:6x6",
        "--fix",
        "0,30",
        "--steps",
        "3",
        "--dt",
        "0.05",
        "--out",
        &out_path,
        "--json",
    ]);
    assert_eq!(rc, 0, "{err}");
    let steps: Vec<_> = out
        .lines()
        .map(parse_object)
        .filter(|m| m.get("type") == Some(&J::Str("step".into())))
        .collect();
    assert_eq!(steps.len(), 3);
    // The summary's `out` is the file holding the result: the last frame.
    let summary = out.lines().map(parse_object).find(|m| m.get("type") == Some(&J::Str("summary".into()))).unwrap();
    let last = out_path.replace(".ply", "_0003.ply");
    assert_eq!(summary.get("out"), Some(&J::Str(last.clone())), "{out}");
    assert!(std::path::Path::new(&last).exists());
    let keys: Vec<&str> = steps[0].keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "grad_norm",
            "iterations",
            "potential",
            "status",
            "time",
            "time_step",
            "type"
        ],
        "the fields §14 lists"
    );
    let potentials: Vec<f64> = steps.iter().map(|m| num(m, "potential")).collect();
    assert!(
        potentials.windows(2).all(|w| w[1] < w[0]),
        "the flag falls: {potentials:?}"
    );
    // The summary reports the potential from the start to the last step's (the step lines'
    // quantity), beside the last minimization's objective.
    let summary = out
        .lines()
        .map(parse_object)
        .find(|m| m.get("type") == Some(&J::Str("summary".into())))
        .expect("a summary line");
    assert_eq!(num(&summary, "potential"), potentials[2]);
    assert!(num(&summary, "initial_potential") > potentials[0]);
    assert_eq!(num(&summary, "time_steps"), 3.0);
    let before = mad_runtime::mesh::load_mesh("grid:6x6").unwrap();
    for k in 1..=3 {
        let frame = out_path.replace(".ply", &format!("_{k:04}.ply"));
        let m = mad_runtime::mesh::load_mesh(&frame).unwrap();
        assert_eq!(m.positions[0], before.positions[0]);
        assert_eq!(m.positions[30], before.positions[30]);
    }
}

#[test]
fn the_dynamics_summary_line_reports_the_potential_of_the_steps() {
    let (rc, _, err) = madc(&[
        "run", "examples/flag.mad", "--mesh", "grid:6x6", "--fix", "0,30", "--steps", "3", "--dt", "0.05",
    ]);
    assert_eq!(rc, 0, "{err}");
    let last_step = err.lines().rfind(|l| l.starts_with("step ")).expect("step lines");
    let potential = last_step.split("potential ").nth(1).and_then(|r| r.split_whitespace().next()).expect("a potential");
    let summary = err.lines().last().expect("a summary line");
    assert!(summary.contains("3 time steps"), "{summary}");
    assert!(summary.contains(&format!("-> {potential},")), "{summary} / {last_step}");
}

#[test]
fn bad_solver_and_missing_mesh_are_errors() {
    let (rc, _, err) = madc(&[
        "run",
        "examples/smooth.mad",
        "--mesh",
        "disk:4",
        "--solver",
        "simplex",
    ]);
    assert_eq!(rc, 1);
    assert!(err.contains("unknown solver `simplex`"), "{err}");
    let (rc, _, err) = madc(&["run", "examples/mass_spring.mad"]);
    assert_eq!(rc, 1);
    assert!(err.contains("no mesh"), "{err}");
    let (rc, _, err) = madc(&[
        "run",
        "examples/smooth.mad",
        "--mesh",
        "disk:4",
        "--fix",
        "0,99999",
    ]);
    assert_eq!(rc, 1);
    assert!(err.contains("out of range"), "{err}");
    // Flags the chosen solve would ignore.
    for (args, msg) in [
        (
            &["--solver", "newton", "--step", "0.1"][..],
            "--step applies to the `gd` solver, not `newton`",
        ),
        (
            &["--solver", "lbfgs", "--project-psd"][..],
            "--project-psd applies to the `newton` solver",
        ),
        (&["--dt", "0.1"][..], "--dt applies to dynamics"),
        (&["--threads", "100000"][..], "--threads 100000: at most 1024 worker threads"),
        (
            &["--solver", "lm", "--steps", "2"][..],
            "solver `lm` minimizes residuals and does not run time steps",
        ),
    ] {
        let mut cmd = vec!["run", "examples/smooth.mad", "--mesh", "disk:2"];
        cmd.extend_from_slice(args);
        let (rc, _, err) = madc(&cmd);
        assert_eq!(rc, 1, "{args:?}");
        assert!(err.contains(msg), "{args:?}: {err}");
    }
    // As in the solve block (`steps` must be a positive integer).
    let (rc, _, err) = madc(&[
        "run",
        "examples/smooth.mad",
        "--mesh",
        "disk:2",
        "--steps",
        "0",
    ]);
    assert_eq!(rc, 1);
    assert!(
        err.contains("--steps 0: the number of time steps must be positive"),
        "{err}"
    );
}

#[test]
fn entry_runs_a_function_of_an_energy_file() {
    let (rc, _, err) = madc(&["run", "examples/smooth.mad", "--entry", "main"]);
    assert_eq!(rc, 1);
    assert!(err.contains("no function `main`"), "{err}");
}

#[test]
fn flag_runs_from_its_solve_block_without_flags() {
    let (rc, out, err) = madc(&["run", "examples/flag.mad", "--json"]);
    assert_eq!(rc, 0, "{err}");
    let summary = parse_object(out.lines().last().unwrap());
    assert_eq!(summary.get("mesh"), Some(&J::Str("grid:16x16".into())));
    assert_eq!(summary.get("solver"), Some(&J::Str("newton".into())));
    assert_eq!(summary.get("converged"), Some(&J::Bool(true)));
    assert!(num(&summary, "energy") < num(&summary, "initial_energy"));
}

#[test]
fn flags_override_the_solve_block() {
    // One L-BFGS iteration instead of the block's Newton solve: not converged, exit 2.
    let (rc, out, err) = madc(&[
        "run",
        "examples/flag.mad",
        "--solver",
        "lbfgs",
        "--max-iters",
        "1",
        "--mesh",
        "grid:5x5",
        "--fix",
        "0,20",
        "--json",
    ]);
    assert_eq!(rc, 2, "{err}");
    let summary = parse_object(out.lines().last().unwrap());
    assert_eq!(summary.get("solver"), Some(&J::Str("lbfgs".into())));
    assert_eq!(summary.get("mesh"), Some(&J::Str("grid:5x5".into())));
    assert_eq!(
        summary.get("status"),
        Some(&J::Str("max_iterations".into()))
    );
    assert_eq!(num(&summary, "iterations"), 1.0);
}

#[test]
fn cloth_falls_from_its_solve_block_into_a_new_frames_directory() {
    // `examples/cloth.mad` needs no flags; a short run on a small grid checks
    // that the pinned corners stay, the rest falls, and `--out` creates the
    // frames' directory.
    let dir = tmp("cloth-frames");
    let _ = std::fs::remove_dir_all(&dir);
    let out_path = format!("{dir}/cloth.ply");
    let (rc, out, err) = madc(&[
        "run",
        "examples/cloth.mad",
        "--mesh",
        "grid:6x6",
        "--fix",
        "0,30",
        "--steps",
        "4",
        "--out",
        &out_path,
        "--json",
    ]);
    assert_eq!(rc, 0, "{err}");
    let summary = parse_object(out.lines().last().unwrap());
    assert_eq!(summary.get("converged"), Some(&J::Bool(true)));
    let before = mad_runtime::mesh::load_mesh("grid:6x6").unwrap();
    let last = mad_runtime::mesh::load_mesh(&format!("{dir}/cloth_0004.ply")).unwrap();
    assert_eq!(last.positions[0], before.positions[0]);
    assert_eq!(last.positions[30], before.positions[30]);
    assert!(
        last.positions[35][2] < -1e-3,
        "the free corner falls: {:?}",
        last.positions[35]
    );
}

#[test]
fn a_failing_solver_exits_with_status_2() {
    // §14: 1 for bad input, 2 when the solver fails or stops without converging.
    let file = tmp("nan_start.mad");
    std::fs::write(
        &file,
        "dof x: vertex -> vec3;\n\
         energy e(v: vertex) { sqrt(x[v.v0].x - 0.5) + dot(x[v.v0], x[v.v0]) }\n",
    )
    .unwrap();
    for extra in [&[][..], &["--steps", "2"][..]] {
        let mut args = vec!["run", &file, "--mesh", "grid:3x3"];
        args.extend_from_slice(extra);
        let (rc, _, err) = madc(&args);
        assert_eq!(rc, 2, "{extra:?}: {err}");
        assert!(
            err.contains("the energy at the starting point is NaN"),
            "{err}"
        );
    }
    // A solver that cannot serve the file's terms is bad input.
    let (rc, _, err) = madc(&["run", "examples/fit_residual.mad", "--mesh", "grid:4x4", "--solver", "newton"]);
    assert_eq!(rc, 1, "{err}");
    assert!(
        err.contains("solver `newton`") && err.contains("gauss-newton"),
        "{err}"
    );
    let (rc, _, err) = madc(&["run", "examples/flag.mad", "--solver", "lm"]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("`residual` terms"), "{err}");
    // A param with no value is bad input, found before the solver starts.
    let file = tmp("unset_param.mad");
    std::fs::write(
        &file,
        "dof x: vertex -> vec3;\nparam w: f64;\n\
         energy e(v: vertex) { w * dot(x[v.v0], x[v.v0]) }\n",
    )
    .unwrap();
    let (rc, _, err) = madc(&["run", &file, "--mesh", "grid:3x3"]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.starts_with("error: param `w` has no default"), "{err}");
}

#[test]
fn an_unknown_out_format_is_reported_before_the_solve() {
    // §14: `--out OUT.obj|.ply|.off`; a wrong extension is bad input, found up front
    // (not after the solve, nor after the first time step).
    for extra in [&[][..], &["--steps", "3"][..]] {
        let out = tmp("result.stl");
        let mut args = vec!["run", "examples/flag.mad", "--out", &out];
        args.extend_from_slice(extra);
        let (rc, stdout, err) = madc(&args);
        assert_eq!(rc, 1, "{extra:?}: {err}");
        assert_eq!(
            err.trim_end(),
            format!("error: --out {out}: unknown mesh format (expected .obj, .off or .ply)"),
            "{extra:?}"
        );
        assert!(stdout.is_empty());
    }
    // A mesh error names the file once.
    let (rc, _, err) = madc(&["run", "examples/smooth.mad", "--mesh", "nowhere.obj"]);
    assert_eq!(rc, 1);
    assert_eq!(err.matches("nowhere.obj").count(), 1, "{err}");
}

#[test]
fn an_out_field_that_names_no_field_is_reported_before_the_solve() {
    let file = tmp("out_field.mad");
    std::fs::write(
        &file,
        "dof x: vertex -> vec3;\nenergy e(v: vertex) { dot(x[v.v0], x[v.v0]) }\n\
         solve { mesh = \"grid:3x3\"; out_field = \"nope\"; }\n",
    )
    .unwrap();
    let (rc, _, err) = madc(&["run", &file]);
    assert_eq!(rc, 1, "{err}");
    // A compile error at the value (E0140), before any mesh is read.
    assert!(err.contains("error[E0140]") && err.contains("declares no `nope`"), "{err}");
    assert!(!err.contains("iter"), "{err}");
}

#[test]
fn an_init_that_is_neither_a_name_nor_a_file_says_so() {
    // §12.2: INIT is `positions`, `zeros`, `tutte` or a mesh / .npy file.
    let (rc, _, err) = madc(&[
        "run",
        "examples/smooth.mad",
        "--mesh",
        "disk:2",
        "--init",
        "x=tutt",
    ]);
    assert_eq!(rc, 1, "{err}");
    assert_eq!(
        err.trim_end(),
        "error: field `x`: `tutt` is neither an initializer (positions, zeros, tutte) nor a .obj, \
         .off, .ply or .npy file"
    );
    let (rc, _, err) = madc(&[
        "run",
        "examples/smooth.mad",
        "--mesh",
        "disk:2",
        "--init",
        "x=none.obj",
    ]);
    assert_eq!(rc, 1, "{err}");
    assert_eq!(err.matches("none.obj").count(), 1, "{err}");
}

#[test]
fn solve_flags_on_a_function_run_are_errors_not_ignored() {
    // §14: a file without terms runs `main`; the solve flags have nothing to apply to.
    let (rc, out, err) = madc(&["run", "examples/newton_sqrt.mad", "--mesh", "grid:3x3"]);
    assert_eq!(rc, 1, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("--mesh applies to solving") && err.contains("declares no `energy`"),
        "{err}"
    );
    let (rc, _, err) = madc(&["run", "examples/smooth.mad", "--entry", "f", "--json"]);
    assert_eq!(rc, 1, "{err}");
    assert!(
        err.contains("--json applies to solving") && err.contains("`--entry` runs a function"),
        "{err}"
    );
    let (rc, _, err) = madc(&["run", "examples/smooth.mad", "--interp"]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("--interp runs a function"), "{err}");
    let (rc, out, err) = madc(&["run", "examples/newton_sqrt.mad"]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.starts_with("1.4142135623730951\n"), "{out}");
}

#[test]
fn plot_creates_its_directory_like_out() {
    let plot = tmp("plots/nested/conv.svg");
    let out = tmp("outs/nested/smooth.obj");
    let (rc, _, err) = madc(&[
        "run",
        "examples/smooth.mad",
        "--mesh",
        "disk:2",
        "--plot",
        &plot,
        "--out",
        &out,
    ]);
    assert_eq!(rc, 0, "{err}");
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(svg.starts_with("<svg"), "{svg}");
    assert!(std::fs::read_to_string(&out).unwrap().starts_with("v "));
}

#[test]
fn fix_forms_ids_boundary_and_file() {
    // §14: comma-separated ids, `boundary`, or a file of ids separated by whitespace or commas.
    let ids = tmp("ids.txt");
    std::fs::write(&ids, "0 1\n2,3\n").unwrap();
    for fix in ["0,1", "0, 1", "boundary", ids.as_str()] {
        let (rc, _, err) = madc(&[
            "run",
            "examples/smooth.mad",
            "--mesh",
            "disk:2",
            "--fix",
            fix,
        ]);
        assert_eq!(rc, 0, "{fix}: {err}");
    }
    // Anything else names the forms it is not.
    let (rc, _, err) = madc(&[
        "run",
        "examples/smooth.mad",
        "--mesh",
        "disk:2",
        "--fix",
        "0;1",
    ]);
    assert_eq!(rc, 1);
    assert!(
        err.contains("--fix 0;1: not `boundary` or comma-separated vertex ids"),
        "{err}"
    );
    let bad = tmp("bad_ids.txt");
    std::fs::write(&bad, "0\n1, 2\n3 x\n").unwrap();
    let (rc, _, err) = madc(&[
        "run",
        "examples/smooth.mad",
        "--mesh",
        "disk:2",
        "--fix",
        &bad,
    ]);
    assert_eq!(rc, 1);
    assert!(err.contains("line 3: `x` is not a vertex id"), "{err}");
}

/// A face that repeats a vertex (`f 1 1 4`): projected Newton assembles the same Hessian as
/// plain Newton on a convex quadratic, so both take one step (the upper-triangle scatter lost
/// an entry of such faces, and the projected solve did not converge in 20 iterations).
#[test]
fn projected_newton_on_a_face_with_a_repeated_vertex() {
    let file = tmp("repeated_vertex.mad");
    std::fs::write(
        &file,
        "dof u: vertex -> vec2;\n\
         energy shape(f: face) {\n\
             let a = u[f.v1] - u[f.v0];\n\
             let b = u[f.v2] - u[f.v0];\n\
             (a[0] + a[1] - 1.0)^2 + (b[0] + 2.0 * b[1] - 0.5)^2 + 0.3 * (a[0] - b[1])^2\n\
         }\n\
         energy anchor(v: vertex) { 0.1 * dot(u[v], u[v]) }\n\
         solve { solver = \"newton\"; max_iters = 20; tol = 1e-10; }\n",
    )
    .unwrap();
    let mesh = tmp("repeated_vertex.obj");
    std::fs::write(&mesh, "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\nf 2 4 3\nf 1 1 4\n").unwrap();
    for extra in [None, Some("--project-psd")] {
        let mut args = vec!["run", file.as_str(), "--mesh", mesh.as_str()];
        args.extend(extra);
        let (rc, _, err) = madc(&args);
        assert_eq!(rc, 0, "{extra:?}: {err}");
        assert!(err.contains("gradient_tolerance: 1 iterations"), "{extra:?}: {err}");
    }
}

/// A file without dofs has nothing to solve: it says so, and its gradient norm is 0, not −0
/// (the float sum of no entries).
#[test]
fn a_file_without_dofs_says_there_is_nothing_to_solve() {
    let file = tmp("no_dofs.mad");
    std::fs::write(&file, "energy c(e: vertex) { 1.0 }\n").unwrap();
    let (rc, out, err) = madc(&["run", &file, "--mesh", "grid:2x2", "--json"]);
    assert_eq!(rc, 0, "{err}");
    assert!(err.contains("warning: this program declares no `dof`: there is nothing to solve"), "{err}");
    let summary = out.lines().last().unwrap();
    assert!(summary.contains("\"grad_norm\":0.0") && summary.contains("\"initial_grad_norm\":0.0"), "{summary}");
    assert!(summary.contains("\"energy\":4.0"), "{summary}");
}

#[test]
fn fix_files_take_comments_and_what_fixes_nothing_says_so() {
    let run = |mesh: &str, file: &str, fix: &str| madc(&["run", file, "--mesh", mesh, "--fix", fix]);
    // `#` comments; an out-of-range id names its line.
    let ids = tmp("ids_comments.txt");
    std::fs::write(&ids, "# handles\n0, 1 # a corner\n\n99\n").unwrap();
    let (rc, _, err) = run("disk:2", "examples/smooth.mad", &ids);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("line 4: fixed vertex 99 is out of range (the mesh has 19 vertices)"), "{err}");
    std::fs::write(&ids, "# handles\n0, 1 # a corner\n").unwrap();
    let (rc, _, err) = run("disk:2", "examples/smooth.mad", &ids);
    assert_eq!(rc, 0, "{err}");
    assert!(!err.contains("warning"), "{err}");
    // A file that is not text names the line.
    std::fs::write(&ids, b"0\n1 \xff\n").unwrap();
    let (rc, _, err) = run("disk:2", "examples/smooth.mad", &ids);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("line 2: not text (invalid UTF-8 at byte 4)"), "{err}");
    // A file without ids warns (it fixed nothing silently).
    let empty = tmp("ids_empty.txt");
    std::fs::write(&empty, "\n# none\n").unwrap();
    let (rc, _, err) = run("disk:2", "examples/smooth.mad", &empty);
    assert_eq!(rc, 0, "{err}");
    assert!(err.contains("the file lists no vertex id; no vertex is fixed"), "{err}");
    // A program without dofs on vertices: the flag is an error, the block's setting is
    // dropped with a warning.
    let faces = tmp("face_dofs.mad");
    std::fs::write(&faces, "dof u: face -> f64;\nenergy s(f: face) { (u[f] - 1.0)^2 }\n").unwrap();
    let (rc, _, err) = run("grid:3x3", &faces, "0");
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("--fix: this program has no `dof` on vertices, so no vertex can be fixed"), "{err}");
    std::fs::write(
        &faces,
        "dof u: face -> f64;\nenergy s(f: face) { (u[f] - 1.0)^2 }\nsolve { mesh = \"grid:3x3\"; fix = boundary; }\n",
    )
    .unwrap();
    let (rc, _, err) = madc(&["run", &faces]);
    assert_eq!(rc, 0, "{err}");
    assert!(err.contains("warning: the solve block's `fix = boundary`: this program has no `dof` on vertices"), "{err}");
    // What was meant as a list of ids names its bad entry (not a missing file).
    for (fix, want) in [
        ("0,", "an empty entry in the list of vertex ids"),
        ("0,,1", "an empty entry in the list of vertex ids"),
        ("-1", "`-1` is not a vertex id (a non-negative integer)"),
        ("1.5", "`1.5` is not a vertex id (a non-negative integer)"),
    ] {
        let (rc, _, err) = run("disk:2", "examples/smooth.mad", fix);
        assert_eq!(rc, 1, "{fix}: {err}");
        assert!(err.contains(&format!("--fix {fix}: {want}")), "{fix}: {err}");
    }
}

#[test]
fn a_plot_path_that_is_not_svg_is_reported_before_the_solve() {
    let dir = std::env::temp_dir().join(format!("mad_plot_ext_{}", std::process::id()));
    let png = dir.join("conv.png");
    let (rc, _, err) = madc(&[
        "run",
        "examples/smooth.mad",
        "--mesh",
        "disk:4",
        "--plot",
        png.to_str().unwrap(),
    ]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("written as SVG"), "{err}");
    assert!(!png.exists(), "nothing is written");
    let svg = dir.join("conv.SVG");
    let (rc, _, err) = madc(&[
        "run",
        "examples/smooth.mad",
        "--mesh",
        "disk:4",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(rc, 0, "{err}");
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_set_value_out_of_the_f64_range_is_an_error() {
    let (rc, _, err) = madc(&[
        "run",
        "examples/smooth.mad",
        "--mesh",
        "disk:3",
        "--set",
        "lambda=1e400",
    ]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("out of the range of f64"), "{err}");
    // Spelled out, an infinite value is taken as written.
    let (rc, out, err) = madc(&[
        "eval",
        "examples/smooth.mad",
        "--mesh",
        "disk:3",
        "--set",
        "lambda=inf",
        "--energy",
    ]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("energy"), "{out}");
}

#[test]
fn mesh_warnings_are_printed_and_the_mesh_is_used() {
    let dir = std::env::temp_dir().join(format!("mad_mesh_warn_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let obj = dir.join("degenerate.obj");
    std::fs::write(
        &obj,
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 2 2 0\nv 5 5 5\nf 1 2 3\nf 2 4 3\nf 1 2 2\n",
    )
    .unwrap();
    let path = obj.to_str().unwrap();
    let (rc, _, err) = madc(&["run", "examples/smooth.mad", "--mesh", path, "--max-iters", "2"]);
    // The solve runs (2: it stops at the iteration cap before converging).
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("max_iterations: 2 iterations"), "{err}");
    assert!(
        err.contains(&format!("warning: {path}: 1 face(s) with a repeated vertex")),
        "{err}"
    );
    assert!(err.contains("1 vertex/vertices referenced by no face"), "{err}");
    let (rc, _, err) = madc(&["eval", "examples/smooth.mad", "--mesh", path, "--energy"]);
    assert_eq!(rc, 0, "{err}");
    assert!(err.contains("repeated vertex"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Gauss-Newton and Levenberg–Marquardt minimize ½‖r‖² alone: on a file with `energy` terms
/// too they are an error, where lbfgs minimizes ½‖r‖² plus the energies (x = 4 here, the
/// minimizer of ½(x − 2)² + (x − 5)²).
#[test]
fn residual_solvers_refuse_a_file_with_energies_too() {
    let f = tmp("mixed.mad");
    std::fs::write(
        &f,
        "dof x: vertex -> vec3;\nresidual r(e: vertex) -> f64 { x[e.v0].x - 2.0 }\n\
         energy b(e: vertex) { (x[e.v0].x - 5.0)^2 + x[e.v0].y^2 + x[e.v0].z^2 }\n",
    )
    .unwrap();
    for solver in ["gauss-newton", "gauss-newton-cg", "lm", "lm-cg"] {
        let (rc, _, err) = madc(&["run", &f, "--mesh", "grid:2x2", "--solver", solver]);
        assert_eq!(rc, 1, "{solver}: {err}");
        assert!(err.contains("`energy` terms too") && err.contains("use newton-cg, lbfgs or gd"), "{solver}: {err}");
    }
    let out = tmp("mixed.obj");
    let (rc, _, err) = madc(&["run", &f, "--mesh", "grid:2x2", "--solver", "lbfgs", "--out", &out]);
    assert_eq!(rc, 0, "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    for line in text.lines().filter(|l| l.starts_with("v ")) {
        let xv: f64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        assert!((xv - 4.0).abs() < 1e-5, "{line}");
    }
}

/// Newton on a file with `residual` terms is refused before anything runs (a solve of no
/// iterations, or one whose start already meets the tolerance, would not find out), and
/// the residual solvers' `--steps` error suggests what can step such a file.
#[test]
fn newton_refuses_residual_terms_up_front() {
    let f = tmp("fit_only.mad");
    std::fs::write(
        &f,
        "dof x: vertex -> vec3;\nresidual r(e: vertex) -> f64 { x[e.v0].x - 2.0 }\n",
    )
    .unwrap();
    for extra in [&[][..], &["--max-iters", "0"], &["--fix", "0,1,2,3"]] {
        let mut args = vec!["run", f.as_str(), "--mesh", "grid:2x2", "--solver", "newton"];
        args.extend_from_slice(extra);
        let (rc, _, err) = madc(&args);
        assert_eq!(rc, 1, "{extra:?}: {err}");
        assert!(err.contains("`residual` terms assemble none") && err.contains("gauss-newton"), "{err}");
    }
    let (rc, _, err) = madc(&["run", &f, "--mesh", "grid:2x2", "--solver", "newton", "--steps", "2"]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("use newton-cg, lbfgs or gd"), "{err}");
    let (rc, _, err) = madc(&["run", &f, "--mesh", "grid:2x2", "--solver", "lm", "--steps", "2"]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("use newton-cg, lbfgs or gd") && !err.contains("newton,"), "{err}");
    let (rc, _, err) = madc(&["run", &f, "--mesh", "grid:2x2", "--solver", "newton-cg", "--steps", "2"]);
    assert_eq!(rc, 0, "{err}");
    // Without a solver named, a residual file takes Gauss-Newton (Newton-CG to step in time).
    let (rc, out, err) = madc(&["run", &f, "--mesh", "grid:2x2", "--json"]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("\"solver\":\"gauss-newton\""), "{out}");
    let (rc, out, err) = madc(&["run", &f, "--mesh", "grid:2x2", "--steps", "2", "--json"]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("\"solver\":\"newton-cg\""), "{out}");
    // With energies too, the message suggests only what takes both.
    let both = tmp("fit_and_energy.mad");
    std::fs::write(
        &both,
        "dof x: vertex -> vec3;\nresidual r(e: vertex) -> f64 { x[e.v0].x - 2.0 }\nenergy g(e: vertex) { dot(x[e.v0], x[e.v0]) }\n",
    )
    .unwrap();
    let (rc, _, err) = madc(&["run", &both, "--mesh", "grid:2x2", "--solver", "newton"]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("use newton-cg, lbfgs or gd") && !err.contains("gauss-newton"), "{err}");
    let (rc, out, err) = madc(&["run", &both, "--mesh", "grid:2x2", "--json"]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("\"solver\":\"newton-cg\""), "{out}");
}

/// An energy unbounded below (springs and a linear pull, nothing fixed): Newton's iterates
/// grow until a step of millions is below 10⁻¹⁵·‖x‖. That is not a convergence: `stalled`,
/// exit status 2, not `step_tolerance`.
#[test]
fn an_unbounded_energy_stalls_instead_of_converging() {
    let f = tmp("unbounded.mad");
    std::fs::write(
        &f,
        "dof x: vertex -> vec3;\nenergy spring(e: edge) { let l = norm(x[e.v0] - x[e.v1]); 10.0 * (l - 1.0)^2 }\n\
         energy pull(e: vertex) { x[e.v0].z + 0.3 * x[e.v0].x }\n",
    )
    .unwrap();
    let (rc, out, err) = madc(&["run", &f, "--mesh", "grid:4x4", "--json"]);
    assert_eq!(rc, 2, "{err}\n{out}");
    let summary = out.lines().map(parse_object).find(|o| o.get("type") == Some(&J::Str("summary".into()))).unwrap();
    assert_eq!(summary.get("status"), Some(&J::Str("stalled".into())), "{out}");
    assert_eq!(summary.get("converged"), Some(&J::Bool(false)));
}

/// `--out` writes vertex positions: a program whose dofs are all on faces is told so before
/// anything runs (a dynamics run used to fail after its first step).
#[test]
fn out_with_face_dofs_only_is_refused_up_front() {
    let f = tmp("faces_only.mad");
    std::fs::write(&f, "dof u: face -> vec3;\nenergy r(e: face) { dot(u[e], u[e]) }\n").unwrap();
    let out = tmp("faces_only.obj");
    for extra in [&[][..], &["--steps", "2"]] {
        let mut args = vec!["run", f.as_str(), "--mesh", "grid:3x3", "--out", out.as_str()];
        args.extend_from_slice(extra);
        let (rc, stdout, err) = madc(&args);
        assert_eq!(rc, 1, "{extra:?}: {err}");
        assert!(err.contains("dofs are not on vertices"), "{err}");
        assert!(!stdout.contains("step    1"), "{stdout}");
    }
}

/// A last step that is below the step tolerance and also brings ‖g‖ within the gradient
/// tolerance reports `gradient_tolerance` (a stiff quadratic: the step that lands on the
/// minimizer is 1e-15 of ‖x‖ and the gradient there is 0), for every solver.
#[test]
fn a_converged_last_step_reports_the_gradient_tolerance() {
    let (mesh, src) = (tmp("quad_tri.obj"), tmp("stiff_quad.mad"));
    std::fs::write(&mesh, "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n").unwrap();
    std::fs::write(
        &src,
        "dof x: vertex -> vec3;\nparam a: f64 = 2.0;\n\
         energy q(e: vertex) { let d = x[e.v0] - vec3(1.0, 2.0, 3.0); 0.5 * a * dot(d, d) }\n",
    )
    .unwrap();
    for solver in ["lbfgs", "newton", "newton-cg", "gd"] {
        let (rc, out, err) = madc(&["run", &src, "--mesh", &mesh, "--solver", solver, "--set", "a=1e12", "--json"]);
        assert_eq!(rc, 0, "{solver}: {err}");
        let summary = parse_object(out.lines().last().unwrap());
        assert!(num(&summary, "grad_norm") <= 1e-8, "{solver}: {out}");
        assert_eq!(summary.get("status"), Some(&J::Str("gradient_tolerance".into())), "{solver}: {out}");
    }
}

/// An output path through a file (`afile/q.obj` where `afile` is a file) is an error before
/// the solve that names the file, for `--out` and `--plot`.
#[test]
fn an_output_directory_that_is_a_file_is_refused_up_front() {
    let (mesh, src, file) = (tmp("dir_tri.obj"), tmp("dir_quad.mad"), tmp("not_a_dir"));
    std::fs::write(&mesh, "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n").unwrap();
    std::fs::write(&src, "dof x: vertex -> vec3;\nenergy q(e: vertex) { dot(x[e.v0], x[e.v0]) }\n").unwrap();
    std::fs::write(&file, "").unwrap();
    for (flag, name) in [("--out", "q.obj"), ("--plot", "q.svg")] {
        let out = format!("{file}/{name}");
        let (rc, stdout, err) = madc(&["run", &src, "--mesh", &mesh, flag, &out]);
        assert_eq!(rc, 1, "{flag}: {err}");
        assert!(err.contains("is a file, not a directory") && err.contains("not_a_dir"), "{flag}: {err}");
        assert!(!stdout.contains("iter"), "{flag}: the solve ran first: {stdout}");
    }
}

#[test]
fn small_time_steps_move_and_tol_is_on_the_equations_of_motion() {
    // A constant force g per vertex from rest: implicit Euler gives z_N = −h²·g·N(N+1)/2. With
    // h = 1e-4 the objective's gradient at each prediction, h²·g, was below the default tol:
    // every step took no iteration and nothing fell.
    let f = tmp("fall.mad");
    std::fs::write(&f, "dof x: vertex -> vec3;\nparam g: f64 = 2.0;\nenergy grav(e: vertex) { g * x[e.v0].z }\n").unwrap();
    let (rc, out, err) = madc(&["run", &f, "--mesh", "grid:2x2", "--steps", "100", "--dt", "1e-4", "--json"]);
    assert_eq!(rc, 0, "{err}");
    let steps: Vec<_> = out.lines().map(parse_object).filter(|o| matches!(o.get("type"), Some(J::Str(t)) if t == "step")).collect();
    assert_eq!(steps.len(), 100);
    for s in &steps {
        assert!(num(s, "iterations") >= 1.0, "{s:?}");
        // The printed |g| is the residual tol bounds (here 0 up to rounding after one step).
        assert!(num(s, "grad_norm") <= 1e-6, "{s:?}");
    }
    let z = -1e-8 * 2.0 * 100.0 * 101.0 / 2.0;
    let potential = num(steps.last().unwrap(), "potential");
    assert!((potential - 4.0 * 2.0 * z).abs() < 1e-12, "{potential}");
}
