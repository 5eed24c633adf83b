//! The application examples run from `madc run FILE` with small meshes: exit
//! code 0, the expected number of time steps in the JSON log, and (standard error
//! not being a terminal here) no progress-bar control characters on it.


mod cli_common;
use cli_common::madc;

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
    let (code, _, err) = madc(&["run", file.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("read 2 vertices per pair but `vertex_face` pairs have 4"),
        "{err}"
    );
}
