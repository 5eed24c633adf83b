//! Binding with the vertices renumbered for locality (`EnergyProgram::bind_local`, what
//! `madc run` does): on a large mesh with a scattered numbering the binding renumbers, its
//! results are those of the plain binding mapped through the renumbering (up to summation
//! order), the `tutte` start is the plain one's, run-time errors name the file's vertex, and
//! `madc run` reads `--fix` ids and writes `--out` in the file's numbering.

use mad::energy::EnergyProgram;
use mad::front::state::Init;
use mad_runtime::mesh::{Mesh, load_mesh, save_mesh};

use crate::cli_common;
use cli_common::madc;

/// A permutation of 0..n from a fixed seed (Fisher–Yates on an LCG).
fn permutation(n: usize, seed: u64) -> Vec<usize> {
    let mut s = seed;
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        p.swap(i, ((s >> 11) % (i as u64 + 1)) as usize);
    }
    p
}

/// `mesh` with vertex v renamed `vmap[v]` (faces in their order).
fn renamed(mesh: &Mesh, vmap: &[usize]) -> Mesh {
    let mut pos = vec![[0.0; 3]; mesh.num_vertices()];
    for (v, &w) in vmap.iter().enumerate() {
        pos[w] = mesh.positions[v];
    }
    let tris = mesh
        .triangles
        .iter()
        .map(|t| t.map(|v| vmap[v as usize] as u32))
        .collect();
    Mesh::new(pos, tris).unwrap()
}

/// A 70×70 grid (4,900 vertices, above the renumbering's minimum) with scattered ids.
fn scattered_grid() -> (Mesh, Mesh, Vec<usize>) {
    let tidy = load_mesh("grid:70x70").unwrap();
    let vmap = permutation(tidy.num_vertices(), 3);
    let mesh = renamed(&tidy, &vmap);
    (tidy, mesh, vmap)
}

fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

#[test]
fn a_scattered_mesh_is_renumbered_and_evaluates_as_the_plain_binding() {
    let path = format!("{}/../examples/param.mad", env!("CARGO_MANIFEST_DIR"));
    let prog = EnergyProgram::compile_file(&path).unwrap();
    let (tidy, mesh, _) = scattered_grid();
    let plain = prog.bind(&mesh).unwrap();
    let local = prog.bind_local(&mesh).unwrap();
    assert!(plain.renumbering().is_none());
    let r = local
        .renumbering()
        .expect("a scattered mesh is renumbered")
        .clone();
    assert_eq!(local.mesh(), &r.apply(&mesh));
    // A tidy numbering is kept.
    assert!(prog.bind_local(&tidy).unwrap().renumbering().is_none());

    // The `tutte` start is the plain binding's, renumbered.
    let xp = plain.initial_x().unwrap();
    let xl = local.initial_x().unwrap();
    let back = r.rows_to_original(&xl, 2);
    let d = xp
        .iter()
        .zip(&back)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(d <= 1e-12, "tutte starts differ by {d}");

    // Initializer files are read in the file's numbering: a mesh and a `.npy` array.
    let shifted: Vec<f64> = (0..mesh.num_vertices())
        .flat_map(|v| [mesh.positions[v][0] + 0.25, mesh.positions[v][1] - 0.5])
        .collect();
    let obj = tmp("init.obj");
    let moved = Mesh::new(
        (0..mesh.num_vertices())
            .map(|v| [shifted[2 * v], shifted[2 * v + 1], 7.0])
            .collect(),
        mesh.triangles.clone(),
    )
    .unwrap();
    save_mesh(&moved, &obj).unwrap();
    let npy = tmp("init.npy");
    let mut bytes = Vec::new();
    mad_runtime::npy::write_npy(&[mesh.num_vertices(), 2], &shifted, &mut bytes).unwrap();
    std::fs::write(&npy, bytes).unwrap();
    for file in [obj, npy] {
        let mut e = prog.bind_local(&mesh).unwrap();
        e.set_init("u", Init::File(file.clone())).unwrap();
        let x = r.rows_to_original(&e.initial_x().unwrap(), 2);
        assert_eq!(x, shifted, "{file}");
    }

    // Energy, gradient and projected Hessian at the same point.
    let n = xp.len();
    let (mut gp, mut gl) = (vec![0.0; n], vec![0.0; n]);
    let mut hp = vec![0.0; plain.nnz()];
    let mut hl = vec![0.0; local.nnz()];
    let ep = plain.hessian(&xp, &mut gp, &mut hp, true).unwrap();
    let el = local
        .hessian(&r.rows_to_new(&xp, 2), &mut gl, &mut hl, true)
        .unwrap();
    assert!((ep - el).abs() <= 1e-12 * ep.abs(), "energy {ep} vs {el}");
    let gback = r.rows_to_original(&gl, 2);
    let gs = max_abs(&gp);
    for (i, (a, b)) in gp.iter().zip(&gback).enumerate() {
        assert!(
            (a - b).abs() <= 1e-11 * gs,
            "gradient entry {i}: {a} vs {b}"
        );
    }
    let (pp, pl) = (plain.pattern(), local.pattern());
    let hs = max_abs(&hp);
    for row in 0..n {
        for (k, &col) in pp.row(row).iter().enumerate() {
            let map = |i: usize| 2 * r.new_id(i / 2) + i % 2;
            let kl = pl
                .find(map(row), map(col as usize) as u32)
                .expect("the same pattern");
            let (a, b) = (hp[pp.row_ptr[row] + k], hl[kl]);
            assert!((a - b).abs() <= 1e-11 * hs, "H[{row},{col}]: {a} vs {b}");
        }
    }
}

const FAILING: &str = "
dof x: vertex -> vec2;
data w: vertex -> f64;
energy pick(v: vertex) {
    let a = [1.0, 2.0];
    let i = w[v.v0] as i64;
    x[v.v0].x * a[i]
}
";

#[test]
fn errors_name_the_vertex_by_its_file_id() {
    let prog = EnergyProgram::compile_str("pick.mad", FAILING).unwrap();
    let (_, mesh, _) = scattered_grid();
    let bad = 1234;
    for (threads, batched) in [(1, true), (2, true), (1, false)] {
        let mut e = prog.bind_local(&mesh).unwrap();
        let r = e.renumbering().expect("renumbered").clone();
        e.set_threads(threads).unwrap();
        // Every colour of two chunks or more on the workers, however small the mesh.
        e.set_min_parallel_work(0);
        e.set_batched(batched);
        // Host data is in the bound mesh's numbering.
        let mut w = vec![0.0; mesh.num_vertices()];
        w[r.new_id(bad)] = 5.0;
        e.set_data("w", &w).unwrap();
        let x = vec![0.5; e.ndofs()];
        let mut g = vec![0.0; e.ndofs()];
        let msg = e.gradient(&x, &mut g).unwrap_err().to_string();
        assert!(
            msg.contains("index 5 is out of bounds for length 2"),
            "{msg}"
        );
        assert!(
            msg.contains(&format!("element {bad}:")),
            "{msg} (threads {threads}, batched {batched}) does not name file vertex {bad}"
        );
    }
}

/// Terms that are not symmetric in their vertices: which end of an edge is `e.v0`, which
/// corners of a diamond are which, and where a ring starts.
const ORIENTED: &str = "
dof x: vertex -> vec3;
energy along(e: edge) { x[e.v0].x - x[e.v1].x + 2.0 * (x[e.v0].y - x[e.v1].y) }
energy across(d: diamond) { x[d.v0].x - x[d.v1].x + 3.0 * x[d.v2].y - 5.0 * x[d.v3].z }
energy first(r: ring) { x[r.nbrs[0]].x }
";

/// A renumbered binding keeps the file's elements: the energy and its gradient are those
/// of the plain binding on the same scattered mesh (mapped through the renumbering), for
/// terms whose value depends on the roles of their vertices.
#[test]
fn oriented_terms_evaluate_as_on_the_file_numbering() {
    let prog = EnergyProgram::compile_str("oriented.mad", ORIENTED).unwrap();
    let (_, mesh, _) = scattered_grid();
    let plain = prog.bind(&mesh).unwrap();
    let local = prog.bind_local(&mesh).unwrap();
    let r = local.renumbering().expect("renumbered").clone();
    let x: Vec<f64> = (0..plain.ndofs()).map(|i| ((i as f64) * 0.37).sin()).collect();
    let n = x.len();
    let (mut gp, mut gl) = (vec![0.0; n], vec![0.0; n]);
    let ep = plain.gradient(&x, &mut gp).unwrap();
    let el = local.gradient(&r.rows_to_new(&x, 3), &mut gl).unwrap();
    assert!((ep - el).abs() <= 1e-9 * (1.0 + ep.abs()), "energy {ep} (file numbering) vs {el} (renumbered)");
    assert_eq!(r.rows_to_original(&gl, 3), gp, "gradients (sums of ±1, 2, 3, 5: exact)");
    // The element lists are the file's, renamed.
    let file = mad_runtime::mesh::Topology::new(&mesh).unwrap();
    let t = local.topology();
    assert_eq!(t.edges.len(), file.edges.len());
    for (a, b) in t.edges.iter().zip(&file.edges) {
        assert_eq!(a.map(|v| r.original_id(v as usize) as u32), *b);
    }
    for (a, b) in t.diamonds.iter().zip(&file.diamonds) {
        assert_eq!(a.map(|v| r.original_id(v as usize) as u32), *b);
    }
    for (e, &[a, b]) in t.edges.iter().enumerate().step_by(97) {
        assert_eq!(t.edge_index(a, b), Some(e));
        assert_eq!(t.edge_index(b, a), Some(e));
    }
}

const FAILING_EDGE: &str = "
dof x: vertex -> vec2;
data w: vertex -> f64;
energy pick(e: edge) {
    let a = [1.0, 2.0];
    let i = (w[e.v0] + w[e.v1]) as i64;
    dot(x[e.v0] - x[e.v1], x[e.v0] - x[e.v1]) * a[i]
}
";

/// An edge has no id in the file: errors in edge terms name its vertices, in the file's
/// numbering, on the plain and the renumbered binding alike.
#[test]
fn errors_name_an_edge_by_its_file_vertices() {
    let prog = EnergyProgram::compile_str("pick_edge.mad", FAILING_EDGE).unwrap();
    let (_, mesh, _) = scattered_grid();
    let f = mesh.triangles[0];
    let (a, b) = (f[0] as usize, f[1] as usize);
    let named = |msg: &str| msg.contains(&format!("(vertices {a}, {b}):")) || msg.contains(&format!("(vertices {b}, {a}):"));
    for local in [false, true] {
        for (threads, batched) in [(1, true), (2, true), (1, false)] {
            let mut e = if local { prog.bind_local(&mesh).unwrap() } else { prog.bind(&mesh).unwrap() };
            assert_eq!(e.renumbering().is_some(), local);
            e.set_threads(threads).unwrap();
            e.set_min_parallel_work(0);
            e.set_batched(batched);
            // Host data is in the bound mesh's numbering.
            let id = |v: usize| e.renumbering().map_or(v, |r| r.new_id(v));
            let mut w = vec![0.0; mesh.num_vertices()];
            w[id(a)] = 1.0;
            w[id(b)] = 1.0;
            e.set_data("w", &w).unwrap();
            let x = vec![0.5; e.ndofs()];
            let mut g = vec![0.0; e.ndofs()];
            let msg = e.gradient(&x, &mut g).unwrap_err().to_string();
            assert!(msg.contains("index 2 is out of bounds for length 2"), "{msg}");
            assert!(named(&msg), "{msg} (local {local}, threads {threads}, batched {batched}) does not name file vertices {a} and {b}");
        }
    }
}

fn tmp(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("mad-renumber-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name).display().to_string()
}

/// Springs that keep each edge's rest vector, and a pull along z: quadratic, so Newton
/// lands on the minimizer whatever the numbering.
const SAG: &str = "
dof x: vertex -> vec3 = positions;
data X: vertex -> vec3;
energy spring(e: edge) {
    let d = (x[e.v0] - x[e.v1]) - (X[e.v0] - X[e.v1]);
    0.5 * dot(d, d)
}
energy pull(e: vertex) {
    0.001 * x[e.v0].z
}
";

#[test]
fn madc_run_reads_and_writes_the_file_numbering() {
    let (tidy, mesh, vmap) = scattered_grid();
    let (tidy_path, mesh_path, src) = (tmp("tidy.obj"), tmp("scattered.obj"), tmp("sag.mad"));
    save_mesh(&tidy, &tidy_path).unwrap();
    save_mesh(&mesh, &mesh_path).unwrap();
    std::fs::write(&src, SAG).unwrap();
    // Pinned: the two corners of the x = 0 edge (tidy ids 0 and 69·70) and one inner vertex.
    let pins = [0usize, 69 * 70, 2485];
    let run = |path: &str, ids: Vec<usize>, out: &str| {
        let fix = ids
            .iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let (rc, _, err) = madc(&["run", &src, "--mesh", path, "--fix", &fix, "--out", out]);
        assert_eq!(rc, 0, "{err}");
        load_mesh(out).unwrap()
    };
    let (a_out, b_out) = (tmp("tidy_out.obj"), tmp("scattered_out.obj"));
    let a = run(&tidy_path, pins.to_vec(), &a_out);
    let b = run(&mesh_path, pins.iter().map(|&p| vmap[p]).collect(), &b_out);
    assert_eq!(b.triangles, mesh.triangles, "faces are written as read");
    for &p in &pins {
        assert_eq!(
            b.positions[vmap[p]], mesh.positions[vmap[p]],
            "pinned vertex {p} moved"
        );
    }
    let mut moved = 0.0f64;
    for (v, &w) in vmap.iter().enumerate() {
        for c in 0..3 {
            let (p, q) = (a.positions[v][c], b.positions[w][c]);
            assert!(
                (p - q).abs() <= 1e-9,
                "vertex {v} (file id {w}): {p} vs {q}"
            );
            moved = moved.max((p - tidy.positions[v][c]).abs());
        }
    }
    assert!(moved > 1e-3, "nothing moved");
}

/// The initial energy `madc run` reports (it renumbers a scattered mesh) and the energy
/// `madc eval` gives (it does not).
fn run_and_eval_energies(src_text: &str, name: &str) -> (f64, f64) {
    let (_, mesh, _) = scattered_grid();
    let (mesh_path, src) = (tmp(&format!("{name}.obj")), tmp(&format!("{name}.mad")));
    save_mesh(&mesh, &mesh_path).unwrap();
    std::fs::write(&src, src_text).unwrap();
    let (rc, out, err) = madc(&["eval", &src, "--mesh", &mesh_path, "--energy"]);
    assert_eq!(rc, 0, "{err}");
    let eval: f64 = out.split_whitespace().nth(1).unwrap().parse().unwrap();
    let (rc, out, err) = madc(&["run", &src, "--mesh", &mesh_path, "--max-iters", "0", "--json"]);
    assert_eq!(rc, 0, "{err}");
    let summary = out.lines().last().unwrap();
    let key = "\"initial_energy\":";
    let at = summary.find(key).unwrap() + key.len();
    let run: f64 = summary[at..].split([',', '}']).next().unwrap().parse().unwrap();
    (eval, run)
}

/// Broad-phase tuples keep the file numbering's roles on a renumbered mesh: (v, w) with
/// v < w and edge pairs (a, b, c, d) with a < b, c < d, the first edge first, all in file
/// ids, so terms that are not symmetric in their vertices give `madc eval`'s energy.
#[test]
fn broad_phase_pairs_keep_the_file_roles() {
    // The grid's spacing is 1/69; the diagonals that are not mesh edges are 0.0205 long.
    for (kind, term, name) in [
        ("vertex_vertex within 0.025", "X[e.v0].x - 2.0 * X[e.v1].y", "vv"),
        (
            "edge_edge within 0.016",
            "X[e.v0].x + 2.0 * X[e.v1].y - 3.0 * X[e.v2].x + 5.0 * X[e.v3].y",
            "ee",
        ),
    ] {
        let src = format!(
            "dof x: vertex -> vec3 = positions;\ndata X: vertex -> vec3;\nbroadphase {kind};\n\
             energy c(e: pair) {{ {term} + 0.0 * dot(x[e.v0], x[e.v1]) }}\n"
        );
        let (eval, run) = run_and_eval_energies(&src, name);
        assert!(eval.abs() > 1.0, "{name}: too few pairs to tell ({eval})");
        assert!((eval - run).abs() <= 1e-9 * eval.abs(), "{name}: eval {eval} vs run {run}");
    }
}
