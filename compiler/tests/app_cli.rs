//! The application examples run from `madc run FILE` with small meshes: exit
//! code 0, the expected number of time steps in the JSON log, and (standard error
//! not being a terminal here) no progress-bar control characters on it;
//! Levenberg–Marquardt (`--solver lm`, `solver = ...` in `solve` blocks) against
//! Gauss-Newton on the embedded deformation.

use crate::cli_common;
use cli_common::madc;

/// A number field of a flat JSON line (`null` is NaN).
fn field(line: &str, key: &str) -> f64 {
    let pat = format!("\"{key}\":");
    let at = line
        .find(&pat)
        .unwrap_or_else(|| panic!("no `{key}` in {line}"))
        + pat.len();
    let rest = &line[at..];
    let v = &rest[..rest.find([',', '}']).unwrap()];
    if v == "null" {
        f64::NAN
    } else {
        v.parse().unwrap_or_else(|_| panic!("{key}: {v}"))
    }
}

/// The iteration records and the summary line of a `--json` run.
fn records(json: &str) -> (Vec<&str>, &str) {
    let its = json
        .lines()
        .filter(|l| l.starts_with("{\"type\":\"iteration\""))
        .collect();
    let summary = json
        .lines()
        .find(|l| l.starts_with("{\"type\":\"summary\""))
        .expect("a summary line");
    (its, summary)
}

fn steps_in(json: &str) -> usize {
    json.lines()
        .filter(|l| l.starts_with("{\"type\":\"step\""))
        .count()
}

#[test]
fn cloth_sphere_runs_from_its_solve_block() {
    let (code, out, err) = madc(&[
        "run",
        "examples/cloth_sphere.mad",
        "--mesh",
        "grid:6x6",
        "--steps",
        "3",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(steps_in(&out), 3);
    assert!(!err.contains('\r') && !err.contains('\u{1b}'), "{err:?}");
}

#[test]
fn shells_contact_runs_with_the_broad_phase() {
    let (code, out, err) = madc(&[
        "run",
        "examples/shells_contact.mad",
        "--mesh",
        "spheres2:0",
        "--steps",
        "3",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(steps_in(&out), 3);
}

#[test]
fn embedded_deformation_converges_from_the_command_line() {
    let (code, out, err) = madc(&[
        "run",
        "examples/embedded_deformation.mad",
        "--mesh",
        "grid:6x6",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"converged\":true"), "{out}");
}

#[test]
fn levenberg_marquardt_reaches_the_gauss_newton_minimum() {
    let run = |solver: &str| {
        let (code, out, err) = madc(&[
            "run",
            "examples/embedded_deformation.mad",
            "--mesh",
            "grid:8x8",
            "--solver",
            solver,
            "--max-iters",
            "100",
            "--json",
        ]);
        assert_eq!(code, 0, "{solver}: {err}");
        out
    };
    let gn = run("gauss-newton");
    let (gn_its, gn_sum) = records(&gn);
    assert!(gn_its.iter().all(|l| field(l, "mu").is_nan()));
    for solver in ["lm", "levenberg-marquardt-cg"] {
        let out = run(solver);
        let (its, sum) = records(&out);
        assert!(sum.contains("\"converged\":true"), "{solver}: {sum}");
        assert!(sum.contains(&format!("\"solver\":\"{solver}\"")), "{sum}");
        // Every accepted step lowers the energy and reports its damping.
        let mut last = field(sum, "initial_energy");
        for l in &its {
            let (e, mu) = (field(l, "energy"), field(l, "mu"));
            assert!(e < last, "{solver}: {l}");
            assert!(mu > 0.0 && mu.is_finite(), "{solver}: {l}");
            last = e;
        }
        // The same minimum as undamped Gauss-Newton.
        let (a, b) = (field(sum, "energy"), field(gn_sum, "energy"));
        assert!(
            (a - b).abs() <= 1e-6 * b,
            "{solver}: {a} vs gauss-newton {b}"
        );
    }
}

#[test]
fn solve_blocks_name_levenberg_marquardt() {
    let dir = std::env::temp_dir().join(format!("mad-app-cli-lm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, solver) in [
        ("bare.mad", "lm"),
        ("string.mad", "\"levenberg-marquardt\""),
    ] {
        let file = dir.join(name);
        std::fs::write(
            &file,
            format!(
                "dof x: vertex -> vec3;\n\
                 residual pull(v: vertex) -> vec3 {{ let p = x[v.v0]; vec3(p.x - 1.0, 10.0 * (p.y - p.x * p.x), p.z) }}\n\
                 solve {{ mesh = \"grid:3x3\"; solver = {solver}; tol = 1e-10; }}\n"
            ),
        )
        .unwrap();
        let (code, out, err) = madc(&["run", file.to_str().unwrap(), "--json"]);
        assert_eq!(code, 0, "{solver}: {err}");
        let (its, sum) = records(&out);
        assert!(!its.is_empty() && its.iter().all(|l| field(l, "mu") > 0.0));
        assert!(field(sum, "energy") < 1e-20, "{sum}");
    }
}

#[test]
fn a_broadphase_distance_param_must_be_positive() {
    let dir = std::env::temp_dir().join(format!("mad-app-cli-d-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("vf.mad");
    std::fs::write(
        &file,
        "dof x: vertex -> vec3;\n\
         param dhat: f64 = 0.1;\n\
         energy near(e: pair) { let d = x[e.v0] - (x[e.v1] + x[e.v2] + x[e.v3]) / 3.0; 1.0 / dot(d, d) }\n\
         broadphase vertex_face within dhat;\n\
         solve { mesh = \"spheres2:0\"; }\n",
    )
    .unwrap();
    let (code, _, err) = madc(&["run", file.to_str().unwrap(), "--set", "dhat=0"]);
    assert_eq!(code, 1);
    assert!(err.contains("contact distance"), "{err}");
}

#[test]
fn pair_terms_must_read_the_declared_tuples() {
    let dir = std::env::temp_dir().join(format!("mad-app-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("vv.mad");
    std::fs::write(
        &file,
        "dof x: vertex -> vec3;\n\
         energy near(e: pair) { let d = x[e.v0] - x[e.v1]; 1.0 / dot(d, d) }\n\
         broadphase vertex_face within 0.1;\n\
         solve { mesh = \"spheres2:0\"; }\n",
    )
    .unwrap();
    // A compile error (E0146) at the declaration's kind: `madc check` reports it too.
    for cmd in ["run", "check"] {
        let (code, _, err) = madc(&[cmd, file.to_str().unwrap()]);
        assert_eq!(code, 1);
        assert!(
            err.contains("error[E0146]")
                && err.contains("`vertex_face` pairs have 4 vertices, but the pair terms read up to `e.v1`")
                && err.contains("vv.mad:3:12"),
            "{err}"
        );
    }
}
