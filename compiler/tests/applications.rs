//! The applications in `examples/` solved by `madc run` on small meshes, each
//! with its own correctness check (no flipped triangle, points on the sphere,
//! a plain reference iteration, handles reached, monotone decrease).

use mad_runtime::mesh::{Mesh, load_mesh, save_mesh};

use crate::cli_common;
use cli_common::madc;

fn tmp(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("mad-apps-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name).display().to_string()
}

/// A number field of a flat JSON line (`null` is NaN).
fn field(line: &str, key: &str) -> f64 {
    let pat = format!("\"{key}\":");
    let at = line
        .find(&pat)
        .unwrap_or_else(|| panic!("no `{key}` in {line}"))
        + pat.len();
    let rest = &line[at..];
    let end = rest.find([',', '}']).unwrap();
    let v = &rest[..end];
    if v == "null" {
        f64::NAN
    } else {
        v.parse().unwrap_or_else(|_| panic!("{key}: {v}"))
    }
}

/// (per-iteration energies, summary line) of a `--json` run.
fn log(out: &str) -> (Vec<f64>, String) {
    let mut energies = Vec::new();
    let mut summary = String::new();
    for l in out.lines() {
        if l.contains("\"type\":\"iteration\"") {
            energies.push(field(l, "energy"));
        } else if l.contains("\"type\":\"summary\"") {
            summary = l.to_string();
        }
    }
    (energies, summary)
}

fn monotone(e: &[f64]) -> bool {
    e.windows(2).all(|w| w[1] <= w[0] * (1.0 + 1e-12))
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[test]
fn parameterization_of_a_curved_disk_has_no_flips() {
    // A paraboloid cap: a disk lifted to z = 0.6·(x² + y²).
    let mut m = load_mesh("disk:6").unwrap();
    for p in &mut m.positions {
        p[2] = 0.6 * (p[0] * p[0] + p[1] * p[1]);
    }
    let input = tmp("cap.obj");
    save_mesh(&m, &input).unwrap();
    let out = tmp("cap_uv.obj");
    let (rc, stdout, err) = madc(&[
        "run",
        "examples/param.mad",
        "--mesh",
        &input,
        "--out",
        &out,
        "--json",
    ]);
    assert_eq!(rc, 0, "{err}");
    let (energies, summary) = log(&stdout);
    assert!(energies.len() <= 15, "{} iterations", energies.len());
    assert!(monotone(&energies), "{energies:?}");
    assert!(field(&summary, "energy") < field(&summary, "initial_energy"));
    // The symmetric Dirichlet energy is at least 4 · (surface area), reached only by an isometry.
    let area: f64 = m
        .triangles
        .iter()
        .map(|t| {
            let p = |i: u32| m.positions[i as usize];
            0.5 * dot(
                cross(sub(p(t[1]), p(t[0])), sub(p(t[2]), p(t[0]))),
                cross(sub(p(t[1]), p(t[0])), sub(p(t[2]), p(t[0]))),
            )
            .sqrt()
        })
        .sum();
    let e = field(&summary, "energy");
    assert!(
        e >= 4.0 * area * (1.0 - 1e-12) && e < 4.5 * area,
        "energy {e}, 4·area {}",
        4.0 * area
    );
    let uv = load_mesh(&out).unwrap();
    for t in &uv.triangles {
        let p = |i: u32| uv.positions[i as usize];
        let n = cross(sub(p(t[1]), p(t[0])), sub(p(t[2]), p(t[0])));
        assert!(n[2] > 0.0, "flipped triangle {t:?}");
    }
}

#[test]
fn bad_initializers_are_errors() {
    let (rc, _, err) = madc(&["run", "examples/param.mad", "--mesh", "sphere:1"]);
    assert_eq!(rc, 1);
    assert!(err.contains("no boundary"), "{err}");
    let (rc, _, err) = madc(&["run", "examples/param.mad", "--init", "q=zeros"]);
    assert_eq!(rc, 1);
    assert!(err.contains("no dof or state named `q`"), "{err}");
    let (rc, _, err) = madc(&["run", "examples/param.mad", "--init", "u=missing_start.obj"]);
    assert_eq!(rc, 1);
    assert!(err.contains("missing_start.obj"), "{err}");
    let (rc, _, err) = madc(&["run", "examples/param.mad", "--init", "u="]);
    assert_eq!(rc, 1);
    assert!(err.contains("no initializer after `=`") && !err.contains(": :"), "{err}");
}

#[test]
fn sphere_map_from_a_perturbed_embedding_stays_on_the_sphere() {
    // Start from a jittered (still embedded) icosphere: positions moved tangentially, normalized.
    let mesh = load_mesh("sphere:2").unwrap();
    let mut start = mesh.clone();
    for (i, p) in start.positions.iter_mut().enumerate() {
        let j = [
            (i as f64 * 1.7).sin(),
            (i as f64 * 2.3).cos(),
            (i as f64 * 0.7).sin(),
        ];
        let q = [p[0] + 0.03 * j[0], p[1] + 0.03 * j[1], p[2] + 0.03 * j[2]];
        let n = dot(q, q).sqrt();
        *p = [q[0] / n, q[1] / n, q[2] / n];
    }
    let init = tmp("sphere_start.obj");
    save_mesh(&start, &init).unwrap();
    let out = tmp("sphere_out.obj");
    let init_arg = format!("s={init}");
    let (rc, stdout, err) = madc(&[
        "run",
        "examples/sphere_map.mad",
        "--init",
        &init_arg,
        "--out",
        &out,
        "--json",
    ]);
    assert_eq!(rc, 0, "{err}");
    let (energies, summary) = log(&stdout);
    assert!(energies.len() <= 20, "{} iterations", energies.len());
    assert!(monotone(&energies), "{energies:?}");
    assert!(field(&summary, "energy") < field(&summary, "initial_energy"));
    let res = load_mesh(&out).unwrap();
    assert!(
        res.positions
            .iter()
            .all(|p| (dot(*p, *p).sqrt() - 1.0).abs() < 1e-12)
    );
    for t in &res.triangles {
        let p = |i: u32| res.positions[i as usize];
        assert!(
            dot(p(t[0]), cross(p(t[1]), p(t[2]))) > 0.0,
            "flipped face {t:?}"
        );
    }
    // The optimum moved the points away from the jittered start.
    let moved = res
        .positions
        .iter()
        .zip(&start.positions)
        .map(|(a, b)| dot(sub(*a, *b), sub(*a, *b)).sqrt())
        .fold(0.0, f64::max);
    assert!(moved > 1e-3);
}

fn edge_reference(mesh: &Mesh, lambda: f64, iters: usize) -> Vec<[f64; 3]> {
    let topo = mad_runtime::mesh::Topology::new(mesh).unwrap();
    let mut x = mesh.positions.clone();
    for _ in 0..iters {
        let mut g = vec![[0.0; 3]; x.len()];
        for e in &topo.edges {
            let (a, b) = (e[0] as usize, e[1] as usize);
            for c in 0..3 {
                let d = 2.0 * (x[a][c] - x[b][c]);
                g[a][c] += d;
                g[b][c] -= d;
            }
        }
        for (p, gi) in x.iter_mut().zip(&g) {
            for c in 0..3 {
                p[c] -= lambda * gi[c];
            }
        }
    }
    x
}

#[test]
fn smoothing_matches_a_plain_gradient_descent() {
    let out = tmp("smooth_edge.obj");
    let (rc, stdout, err) = madc(&[
        "run",
        "examples/smooth_gd.mad",
        "--set",
        "w_area=0",
        "--out",
        &out,
        "--json",
    ]);
    assert_eq!(rc, 0, "{err}");
    let (energies, _) = log(&stdout);
    assert_eq!(energies.len(), 100);
    assert!(monotone(&energies));
    let want = edge_reference(&load_mesh("sphere:2").unwrap(), 0.01, 100);
    let got = load_mesh(&out).unwrap();
    for (a, b) in got.positions.iter().zip(&want) {
        for c in 0..3 {
            assert!((a[c] - b[c]).abs() < 1e-10, "{a:?} vs {b:?}");
        }
    }
    // Both terms: 100 monotone steps.
    let (rc, stdout, err) = madc(&["run", "examples/smooth_gd.mad", "--json"]);
    assert_eq!(rc, 0, "{err}");
    let (energies, summary) = log(&stdout);
    assert_eq!(energies.len(), 100);
    assert!(monotone(&energies));
    assert!(field(&summary, "energy") < 0.5 * field(&summary, "initial_energy"));
}

#[test]
fn arap_reaches_the_handles_and_decreases_monotonically() {
    let out = tmp("arap.obj");
    let (rc, stdout, err) = madc(&["run", "examples/arap.mad", "--out", &out, "--json"]);
    assert_eq!(rc, 0, "{err}");
    let (energies, _) = log(&stdout);
    assert!(energies.len() <= 60, "{} iterations", energies.len());
    assert!(monotone(&energies), "{energies:?}");
    let rest = load_mesh("sphere:2").unwrap();
    let res = load_mesh(&out).unwrap();
    let (mut fixed, mut moved) = (0, 0);
    for (p, q) in rest.positions.iter().zip(&res.positions) {
        let d = sub(*q, *p);
        if p[1] < -0.8 {
            assert!(dot(d, d).sqrt() < 1e-3 * 0.4, "anchor moved by {d:?}");
            fixed += 1;
        } else if p[1] > 0.8 {
            let e = sub(d, [0.4, 0.0, 0.0]);
            assert!(
                dot(e, e).sqrt() < 1e-3 * 0.4,
                "handle off its target by {e:?}"
            );
            moved += 1;
        }
    }
    assert!(fixed > 0 && moved > 0);
}

#[test]
fn arap_with_one_handle_group_is_a_rigid_translation() {
    // No anchors: the minimizer is the rest shape translated with the handles (E = 0).
    let out = tmp("arap_rigid.obj");
    let (rc, stdout, err) = madc(&[
        "run",
        "examples/arap.mad",
        "--set",
        "y_fix=-2",
        "--set",
        "dz=0.3",
        "--out",
        &out,
        "--json",
        "--tol",
        "1e-8",
    ]);
    assert_eq!(rc, 0, "{err}");
    let (_, summary) = log(&stdout);
    assert!(field(&summary, "energy") < 1e-10, "{summary}");
    let rest = load_mesh("sphere:2").unwrap();
    let res = load_mesh(&out).unwrap();
    for (p, q) in rest.positions.iter().zip(&res.positions) {
        let e = sub(sub(*q, *p), [0.4, 0.0, 0.3]);
        assert!(dot(e, e).sqrt() < 1e-6, "{e:?}");
    }
}

#[test]
fn arap_with_fixed_displaced_handles_reaches_them_exactly() {
    // Hard handles: a start mesh with the top cap moved, every handle fixed, no handle energy.
    let rest = load_mesh("sphere:2").unwrap();
    let mut start = rest.clone();
    let mut ids = Vec::new();
    for (i, p) in start.positions.iter_mut().enumerate() {
        if p[1] > 0.8 {
            p[0] += 0.4;
        }
        if p[1] > 0.8 || p[1] < -0.8 {
            ids.push(i.to_string());
        }
    }
    let (start_path, ids_path, out) = (
        tmp("arap_start.obj"),
        tmp("arap_ids.txt"),
        tmp("arap_hard.obj"),
    );
    save_mesh(&start, &start_path).unwrap();
    std::fs::write(&ids_path, ids.join(" ")).unwrap();
    let init = format!("x={start_path}");
    let (rc, stdout, err) = madc(&[
        "run",
        "examples/arap.mad",
        "--set",
        "k_handle=0",
        "--init",
        &init,
        "--fix",
        &ids_path,
        "--out",
        &out,
        "--json",
    ]);
    assert_eq!(rc, 0, "{err}");
    let (energies, _) = log(&stdout);
    assert!(monotone(&energies), "{energies:?}");
    let res = load_mesh(&out).unwrap();
    for (i, (a, b)) in res.positions.iter().zip(&start.positions).enumerate() {
        if rest.positions[i][1].abs() > 0.8 {
            assert_eq!(a, b, "handle {i} moved");
        }
    }
    // The free vertices did move away from the start.
    assert!(
        res.positions
            .iter()
            .zip(&start.positions)
            .any(|(a, b)| dot(sub(*a, *b), sub(*a, *b)) > 1e-6)
    );
}
