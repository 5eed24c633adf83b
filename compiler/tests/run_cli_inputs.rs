//! `madc run` as a user meets it at its edges: usage errors and their exit status, negative
//! numbers given to flags, output into a closed pipe, `--data` and `--pairs`, the `--json`
//! error line, settings of the `solve` block that a flag makes inapplicable, and `--fix`
//! errors and warnings.

use crate::cli_common;
use cli_common::madc;
use std::process::{Command, Stdio};

/// Writes `text` to `name` in this process's scratch directory: tests run in parallel, so
/// each test names its own files.
fn tmp(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("mad-run-cli-inputs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn npy(name: &str, shape: &[usize], values: &[f64]) -> String {
    let mut bytes = Vec::new();
    mad_runtime::npy::write_npy(shape, values, &mut bytes).unwrap();
    let dir = std::env::temp_dir().join(format!("mad-run-cli-inputs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.display().to_string()
}

const QUADRATIC: &str = "dof x: vertex -> vec3;\nenergy e(v: vertex) { 0.5 * dot(x[v.v0], x[v.v0]) }\n";

#[test]
fn usage_errors_exit_with_status_1_and_help_with_0() {
    let file = tmp("q_usage.mad", QUADRATIC);
    for bad in [&["--bogus"][..], &["--max-iters", "abc"], &["--max-iters", "-1"]] {
        let mut args = vec!["run", file.as_str(), "--mesh", "grid:3x3"];
        args.extend_from_slice(bad);
        let (rc, _, err) = madc(&args);
        assert_eq!(rc, 1, "{bad:?}: {err}");
        assert!(err.contains("error"), "{err}");
    }
    let (rc, out, _) = madc(&["run", "--help"]);
    assert_eq!(rc, 0);
    assert!(out.contains("--max-iters"));
    let (rc, out, _) = madc(&["--version"]);
    assert_eq!((rc, out.starts_with("madc ")), (0, true));
}

#[test]
fn negative_numbers_reach_the_checks_that_explain_them() {
    let file = tmp("q_negative.mad", QUADRATIC);
    for (flag, value, says) in [
        ("--tol", "-1", "--tol -1: the tolerance must be a finite number ≥ 0"),
        ("--step", "-0.1", "--step -0.1: the gradient-descent step must be a positive finite number"),
        ("--step", "0", "--step 0: the gradient-descent step must be a positive finite number"),
        // Values that overflow are refused as typed, not as the `inf` they parse to.
        ("--tol", "1e400", "'1e400' is not a finite number"),
        ("--step", "inf", "'inf' is not a finite number"),
        ("--fix", "-1", "--fix -1: `-1` is not a vertex id (a non-negative integer)"),
    ] {
        let (rc, _, err) = madc(&["run", &file, "--mesh", "grid:3x3", "--solver", "gd", flag, value]);
        assert_eq!(rc, 1, "{flag} {value}: {err}");
        assert!(err.contains(says), "{flag} {value}: {err}");
    }
    let (rc, _, err) = madc(&["run", &file, "--mesh", "grid:3x3", "--steps", "2", "--dt", "-1"]);
    assert_eq!(rc, 1);
    assert!(err.contains("--dt -1: the time step must be a positive finite number"), "{err}");
    let (rc, _, err) = madc(&["run", &file, "--mesh", "grid:3x3", "--steps", "2", "--dt", "1e400"]);
    assert_eq!(rc, 1);
    assert!(err.contains("'1e400' is not a finite number"), "{err}");
}

#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_madc_quietly() {
    // `madc emit clif … | head -1`: the reader goes away after one line.
    let mut child = Command::new(env!("CARGO_BIN_EXE_madc"))
        .args(["emit", "clif", "examples/param.mad"])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    std::io::Read::read_exact(&mut stdout, &mut first).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked") && !err.contains("failed unexpectedly"), "{err}");
    use std::os::unix::process::ExitStatusExt;
    // Either it finished writing before the pipe closed, or SIGPIPE ended it.
    assert!(out.status.success() || out.status.signal() == Some(13), "{:?} {err}", out.status);
}

#[test]
fn data_and_pairs_are_given_on_the_command_line() {
    // E = Σ_f w_f · x_{f.v0}: the data field is required (no rest-geometry default).
    let file = tmp("d.mad", "dof x: vertex -> vec3;\ndata w: face -> vec3;\nenergy e(f: face) { dot(w[f], x[f.v0]) }\n");
    let mesh = tmp("tri.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
    let (rc, _, err) = madc(&["run", &file, "--mesh", &mesh, "--max-iters", "0"]);
    assert_eq!(rc, 1);
    assert!(err.contains("data `w` (face -> vec3) has no values: set it (`--data w=FILE.npy`"), "{err}");
    let w = npy("w.npy", &[1, 3], &[1.0, 2.0, 3.0]);
    let (rc, out, err) = madc(&["run", &file, "--mesh", &mesh, "--max-iters", "0", "--json", "--data", &format!("w={w}")]);
    assert_eq!(rc, 2, "{err}");
    // x starts at the positions: w · x_0 = 0 at the origin, and the gradient is w.
    assert!(out.contains("\"initial_energy\":0.0"), "{out}");
    assert!(out.contains(&format!("\"initial_grad_norm\":{:?}", 14f64.sqrt())), "{out}");

    // A pair term without `broadphase`: pairs from --pairs, else a warning.
    let pairs_src = "dof x: vertex -> vec3;\nenergy p(e: pair) { let d = x[e.v1] - x[e.v0]; dot(d, d) }\n";
    let pfile = tmp("p.mad", pairs_src);
    let (rc, out, err) = madc(&["run", &pfile, "--mesh", &mesh, "--max-iters", "0", "--json"]);
    assert_eq!(rc, 0, "{err}");
    assert!(err.contains("warning: the `pair` terms have no pairs"), "{err}");
    assert!(out.contains("\"initial_energy\":0.0"), "{out}");
    let p = npy("pairs.npy", &[2, 2], &[0.0, 1.0, 0.0, 2.0]);
    let (rc, out, err) = madc(&["run", &pfile, "--mesh", &mesh, "--max-iters", "0", "--json", "--pairs", &p]);
    assert_eq!(rc, 2, "{err}");
    assert!(!err.contains("warning"), "{err}");
    assert!(out.contains("\"initial_energy\":2.0"), "|v1 − v0|² + |v2 − v0|² = 2: {out}");
    // With a `broadphase` declaration the pairs are found, not given.
    let bfile = tmp("b.mad", &format!("{pairs_src}broadphase vertex_vertex within 0.5;\n"));
    let (rc, _, err) = madc(&["run", &bfile, "--mesh", &mesh, "--pairs", &p]);
    assert_eq!(rc, 1);
    assert!(err.contains("--pairs: the file's `broadphase` declaration finds the pairs"), "{err}");
}

#[test]
fn json_runs_that_fail_end_with_an_error_line() {
    let file = tmp("g.mad", "dof x: vertex -> vec3;\nparam g: f64 = 1.0;\nenergy e(v: vertex) { g * x[v.v0][2] }\n");
    let (rc, out, err) = madc(&["run", &file, "--mesh", "grid:3x3", "--set", "g=nan", "--json"]);
    assert_eq!(rc, 2, "{err}");
    let last = out.lines().last().unwrap();
    assert!(last.starts_with("{\"type\":\"error\",\"message\":\"solver: the energy at the starting point is NaN\""), "{last}");
    assert!(last.ends_with("\"exit_status\":2}"), "{last}");
    // Bad input after the settings were read: status 1, and the line says so.
    let (rc, out, _) = madc(&["run", &file, "--mesh", "grid:3x3", "--fix", "99", "--json"]);
    assert_eq!(rc, 1);
    let last = out.lines().last().unwrap();
    assert!(last.contains("fixed vertex 99 is out of range") && last.ends_with("\"exit_status\":1}"), "{last}");
}

#[test]
fn fixing_the_boundary_of_a_closed_mesh_warns() {
    let file = tmp("q_json.mad", QUADRATIC);
    let (rc, _, err) = madc(&["run", &file, "--mesh", "sphere:1", "--fix", "boundary"]);
    assert_eq!(rc, 0, "{err}");
    assert!(err.contains("warning: --fix boundary: the mesh has no boundary; no vertex is fixed"), "{err}");
    let (rc, _, err) = madc(&["run", &file, "--mesh", "grid:3x3", "--fix", "boundary"]);
    assert_eq!(rc, 0, "{err}");
    assert!(!err.contains("warning"), "{err}");
}

#[test]
fn a_flag_that_makes_a_block_setting_inapplicable_drops_it_with_a_warning() {
    let file = tmp(
        "blk.mad",
        &format!("{QUADRATIC}solve {{ mesh = \"grid:3x3\"; project_psd = true; fix = \"no-such-ids.txt\"; }}\n"),
    );
    let (rc, _, err) = madc(&["run", &file, "--solver", "lbfgs", "--fix", "0"]);
    assert_eq!(rc, 0, "{err}");
    assert!(err.contains("warning: the solve block's `project_psd` applies to the `newton` solver"), "{err}");
    // Settings the solve ignores without the block naming a solver: warnings.
    let loose = tmp("loose.mad", &format!("{QUADRATIC}solve {{ mesh = \"grid:3x3\"; step = 0.5; dt = 0.1; }}\n"));
    let (rc, _, err) = madc(&["run", &loose]);
    assert_eq!(rc, 0, "{err}");
    assert!(err.contains("warning: the solve block's `step` applies to the `gd` solver; ignored for solver `newton`"), "{err}");
    assert!(err.contains("warning: the solve block's `dt` applies to dynamics; ignored without `steps`"), "{err}");
    let (rc, _, err) = madc(&["run", &loose, "--solver", "gd", "--steps", "2"]);
    assert_eq!(rc, 0, "{err}");
    assert!(!err.contains("warning"), "{err}");
    // The block's own fix file is named as the block writes it.
    let (rc, _, err) = madc(&["run", &file]);
    assert_eq!(rc, 1);
    assert!(err.contains("the solve block's `fix = \"no-such-ids.txt\"`: not `boundary`"), "{err}");
}

#[test]
fn paths_from_the_solve_block_and_initializers_say_where_they_came_from() {
    // A mesh named by the solve block that cannot be read says it came from the block.
    let file = tmp(
        "q_block_mesh.mad",
        &format!("{QUADRATIC}solve {{ mesh = \"no-such-mesh.off\"; }}\n"),
    );
    let (rc, _, err) = madc(&["run", &file]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("the solve block's `mesh = \"no-such-mesh.off\"`: no-such-mesh.off"), "{err}");
    // An initializer mesh without faces says what to give instead.
    let file = tmp("q_init_points.mad", QUADRATIC);
    let points = tmp("q_points.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n");
    let (rc, _, err) = madc(&["run", &file, "--mesh", "grid:2x2", "--init", &format!("x={points}")]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("the file has no faces"), "{err}");
    assert!(err.contains("give positions alone as an (n, d) .npy file"), "{err}");
}
