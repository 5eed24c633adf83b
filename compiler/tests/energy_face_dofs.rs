//! Dofs on faces (`dof u: face -> vec2;`): layout, the faces of a diamond
//! (`e.f0`, `e.f1`), derivatives against central finite differences, a Newton
//! solve against a minimizer computed here by a dense linear solve, and
//! `madc eval` output shapes.

// Dense reference computations index their matrices by row and column.
#![allow(clippy::needless_range_loop)]

use mad::energy::{EnergyProgram, MeshEnergy, MeshObjective};
use mad_runtime::mesh::{Mesh, load_mesh};
use mad_runtime::solve::{SolveOptions, Solver};
use std::collections::HashMap;

fn compile(src: &str) -> EnergyProgram {
    match EnergyProgram::compile_str("faces.mad", src) {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}

/// A deterministic pseudo-random value in [-1, 1).
fn rnd(seed: &mut u64) -> f64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
}

/// Pairs of faces sharing an edge that exactly two faces have, with the
/// vertex of each face opposite that edge: (f, g, opposite in f, opposite in g).
fn face_neighbours(mesh: &Mesh) -> Vec<(usize, usize, usize, usize)> {
    let mut by_edge: HashMap<(u32, u32), Vec<(usize, u32)>> = HashMap::new();
    for (f, t) in mesh.triangles.iter().enumerate() {
        for k in 0..3 {
            let (a, b, c) = (t[k], t[(k + 1) % 3], t[(k + 2) % 3]);
            by_edge
                .entry((a.min(b), a.max(b)))
                .or_default()
                .push((f, c));
        }
    }
    let mut out: Vec<_> = by_edge
        .values()
        .filter(|v| v.len() == 2)
        .map(|v| (v[0].0, v[1].0, v[0].1 as usize, v[1].1 as usize))
        .collect();
    out.sort_unstable();
    out
}

fn dense_hessian(me: &MeshEnergy, vals: &[f64]) -> Vec<Vec<f64>> {
    let n = me.ndofs();
    let p = me.pattern();
    let mut h = vec![vec![0.0; n]; n];
    for r in 0..n {
        for k in p.row_ptr[r]..p.row_ptr[r + 1] {
            h[r][p.col_idx[k] as usize] = vals[k];
        }
    }
    h
}

const COUPLED: &str = "
dof x: vertex -> vec2;
dof u: face -> vec2;
energy couple(e: diamond) {
    let d = x[e.v2] - x[e.v3];
    (1.0 + 0.5 * norm2(d)) * norm2(u[e.f0] - u[e.f1]) + sin(dot(u[e.f0], d))
}
energy own(f: face) {
    let a = x[f.v1] - x[f.v0];
    exp(0.3 * dot(u[f], a)) + 0.1 * norm2(u[f])^2
}
";

#[test]
fn layout_puts_face_fields_after_vertex_fields_with_zero_defaults() {
    let prog = compile(COUPLED);
    let mesh = load_mesh("grid:3x4").unwrap();
    let me = prog.bind(&mesh).unwrap();
    let (nv, nf) = (mesh.num_vertices(), mesh.triangles.len());
    assert_eq!(me.ndofs(), 2 * nv + 2 * nf);
    assert_eq!(me.dof_fields(), vec![("x", nv, 2, 0), ("u", nf, 2, 2 * nv)]);
    let x = me.default_x();
    assert!(x[2 * nv..].iter().all(|&v| v == 0.0));
    assert_eq!(x[2], mesh.positions[1][0]);
    assert_eq!(x[3], mesh.positions[1][1]);
}

#[test]
fn diamond_faces_hold_the_opposite_vertices() {
    // ∂/∂u[f] of Σ_diamonds u[f0]·x[v2] + u[f1]·x[v3] is, for each interior
    // edge of f, x at f's vertex opposite that edge.
    let prog = compile(
        "dof x: vertex -> vec2;  dof u: face -> vec2;
         energy probe(e: diamond) { dot(u[e.f0], x[e.v2]) + dot(u[e.f1], x[e.v3]) }",
    );
    let mesh = load_mesh("grid:4x5").unwrap();
    let me = prog.bind(&mesh).unwrap();
    let nv = mesh.num_vertices();
    let mut s = 7u64;
    let x: Vec<f64> = (0..me.ndofs()).map(|_| rnd(&mut s)).collect();
    let mut g = vec![0.0; me.ndofs()];
    me.gradient(&x, &mut g).unwrap();
    let mut want = vec![0.0; me.ndofs()];
    for (f, h, of, oh) in face_neighbours(&mesh) {
        for c in 0..2 {
            want[2 * nv + 2 * f + c] += x[2 * of + c];
            want[2 * nv + 2 * h + c] += x[2 * oh + c];
            want[2 * of + c] += x[2 * nv + 2 * f + c];
            want[2 * oh + c] += x[2 * nv + 2 * h + c];
        }
    }
    for (i, (a, b)) in g.iter().zip(&want).enumerate() {
        assert!(
            (a - b).abs() <= 1e-14 * (1.0 + b.abs()),
            "dof {i}: {a} vs {b}"
        );
    }
}

#[test]
fn derivatives_match_central_differences() {
    let prog = compile(COUPLED);
    let mesh = load_mesh("grid:3x3").unwrap();
    let me = prog.bind(&mesh).unwrap();
    let n = me.ndofs();
    let mut s = 11u64;
    let x: Vec<f64> = me
        .default_x()
        .iter()
        .map(|v| v + 0.3 * rnd(&mut s))
        .collect();
    let v: Vec<f64> = (0..n).map(|_| rnd(&mut s)).collect();
    let mut g = vec![0.0; n];
    let mut hv = vec![0.0; me.nnz()];
    let e = me.hessian(&x, &mut g, &mut hv, false).unwrap();
    assert!((e - me.energy(&x).unwrap()).abs() <= 1e-12 * (1.0 + e.abs()));
    let h = dense_hessian(&me, &hv);
    let eps = 1e-5;
    let mut xp = x.clone();
    for i in 0..n {
        xp[i] = x[i] + eps;
        let ep = me.energy(&xp).unwrap();
        let mut gp = vec![0.0; n];
        me.gradient(&xp, &mut gp).unwrap();
        xp[i] = x[i] - eps;
        let em = me.energy(&xp).unwrap();
        let mut gm = vec![0.0; n];
        me.gradient(&xp, &mut gm).unwrap();
        xp[i] = x[i];
        let fd = (ep - em) / (2.0 * eps);
        assert!(
            (g[i] - fd).abs() <= 1e-6 * (1.0 + fd.abs()),
            "gradient {i}: {} vs {fd}",
            g[i]
        );
        for j in 0..n {
            let fd = (gp[j] - gm[j]) / (2.0 * eps);
            assert!(
                (h[j][i] - fd).abs() <= 1e-6 * (1.0 + fd.abs()),
                "Hessian ({j}, {i}): {} vs {fd}",
                h[j][i]
            );
        }
    }
    // Face dofs of neighbouring faces are coupled in the pattern.
    let nv = mesh.num_vertices();
    let (f, gf, _, _) = face_neighbours(&mesh)[0];
    assert!(
        me.pattern()
            .find(2 * nv + 2 * f, (2 * nv + 2 * gf + 1) as u32)
            .is_some()
    );
    // Matrix-free HVP against the assembled Hessian.
    let mut out = vec![0.0; n];
    me.hvp(&x, &v, &mut out).unwrap();
    let mut want = vec![0.0; n];
    me.pattern().spmv(&hv, &v, &mut want);
    for (a, b) in out.iter().zip(&want) {
        assert!((a - b).abs() <= 1e-10 * (1.0 + b.abs()), "{a} vs {b}");
    }
}

/// Solves the dense system `a y = b` by Gaussian elimination with partial pivoting.
fn dense_solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Vec<f64> {
    let n = b.len();
    for c in 0..n {
        let p = (c..n)
            .max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))
            .unwrap();
        a.swap(c, p);
        b.swap(c, p);
        for r in c + 1..n {
            let m = a[r][c] / a[c][c];
            for k in c..n {
                a[r][k] -= m * a[c][k];
            }
            b[r] -= m * b[c];
        }
    }
    let mut y = vec![0.0; n];
    for r in (0..n).rev() {
        let s: f64 = (r + 1..n).map(|k| a[r][k] * y[k]).sum();
        y[r] = (b[r] - s) / a[r][r];
    }
    y
}

#[test]
fn newton_finds_the_smoothed_field() {
    // E(u) = ½ w Σ_interior edges |u_f − u_g|² + ½ Σ_f |u_f − t_f|²:
    // the minimizer solves (I + w L) u = t, L the face-adjacency Laplacian.
    let prog = compile(
        "dof u: face -> vec2;  data t: face -> vec2;  param w: f64 = 1.0;
         energy smooth(e: diamond) { 0.5 * w * norm2(u[e.f0] - u[e.f1]) }
         energy close(f: face) { 0.5 * norm2(u[f] - t[f]) }",
    );
    let mesh = load_mesh("grid:5x4").unwrap();
    let nf = mesh.triangles.len();
    let mut me = prog.bind(&mesh).unwrap();
    me.set_param("w", 2.5).unwrap();
    let mut s = 3u64;
    let t: Vec<f64> = (0..2 * nf).map(|_| rnd(&mut s)).collect();
    me.set_data("t", &t).unwrap();
    assert_eq!(me.ndofs(), 2 * nf);

    let mut a = vec![vec![0.0; nf]; nf];
    for (f, row) in a.iter_mut().enumerate() {
        row[f] = 1.0;
    }
    for (f, g, _, _) in face_neighbours(&mesh) {
        a[f][f] += 2.5;
        a[g][g] += 2.5;
        a[f][g] -= 2.5;
        a[g][f] -= 2.5;
    }
    let mut want = vec![0.0; 2 * nf];
    for c in 0..2 {
        let y = dense_solve(a.clone(), (0..nf).map(|f| t[2 * f + c]).collect());
        for f in 0..nf {
            want[2 * f + c] = y[f];
        }
    }

    let mut x = me.default_x();
    assert!(x.iter().all(|&v| v == 0.0));
    let mut obj = MeshObjective::new(me, &x).unwrap();
    let mut solver = Solver::from_name("newton").unwrap();
    let opts = SolveOptions {
        grad_abs_tol: 1e-12,
        ..SolveOptions::default()
    };
    let report = solver.solve(&mut obj, &mut x, &opts, None).unwrap();
    assert!(report.iterations <= 3, "{report:?}");
    for (i, (a, b)) in x.iter().zip(&want).enumerate() {
        assert!((a - b).abs() <= 1e-10, "u {i}: {a} vs {b}");
    }
}

#[test]
fn face_handles_are_checked() {
    let bad = [
        // A face term reads its own face as `u[e]`, not through `e.f0`.
        "dof u: face -> vec2; energy a(f: face) { norm2(u[f.f0]) }",
        // Diamonds have two faces.
        "dof u: face -> vec2; energy a(e: diamond) { norm2(u[e.f2]) }",
        // Face handles index face fields only.
        "dof x: vertex -> vec2; energy a(e: diamond) { norm2(x[e.f0]) }",
        // Edges reach no faces.
        "dof u: face -> vec2; energy a(e: edge) { norm2(u[e]) }",
    ];
    for src in bad {
        assert!(EnergyProgram::compile_str("bad.mad", src).is_err(), "{src}");
    }
    // Face data read through a diamond's face is a compile error at the read.
    let e = EnergyProgram::compile_str(
        "bad.mad",
        "dof u: face -> vec2; data a: face -> f64; energy s(e: diamond) { a[e.f0] * norm2(u[e.f0] - u[e.f1]) }",
    )
    .err()
    .expect("face data through e.f0 is refused");
    assert!(e.to_string().contains("E0121") && e.to_string().contains("cannot be read through a diamond"), "{e}");
}

#[test]
fn madc_eval_writes_face_arrays_as_faces_by_components() {
    let dir = std::env::temp_dir().join(format!("mad-face-dofs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("faces.mad");
    std::fs::write(
        &file,
        "dof u: face -> vec2;
         energy smooth(e: diamond) { 0.5 * norm2(u[e.f0] - u[e.f1] - vec2(1.0, 0.0)) }",
    )
    .unwrap();
    let g = dir.join("g.npy");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_madc"))
        .args([
            "eval",
            &file.display().to_string(),
            "--mesh",
            "grid:3x3",
            "--energy",
            "--grad",
            &g.display().to_string(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let nf = load_mesh("grid:3x3").unwrap().triangles.len();
    let interior = face_neighbours(&load_mesh("grid:3x3").unwrap()).len();
    // At the default u = 0 every diamond contributes ½.
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("energy {:?}\n", 0.5 * interior as f64)
    );
    let a = mad_runtime::npy::read_npy(&std::fs::read(&g).unwrap()).unwrap();
    assert_eq!(a.shape, vec![nf, 2]);
}

/// Updates read face dofs as terms do: `w[e]` on a face update, `w[e.f0]`, `w[e.f1]` on
/// a diamond update (the update's local dofs are laid out like a term's).
#[test]
fn updates_read_face_dofs() {
    let prog = compile(
        "dof x: vertex -> vec2;  dof w: face -> f64;
         state q: face -> f64;  state r: diamond -> f64;
         update q(e: face) { 2.0 * w[e] + x[e.v1].y }
         update r(e: diamond) { w[e.f0] - 3.0 * w[e.f1] }
         energy b(f: face) { (w[f] - 3.0)^2 + q[f] }",
    );
    let mesh = load_mesh("grid:4x5").unwrap();
    let mut me = prog.bind(&mesh).unwrap();
    let nv = mesh.num_vertices();
    let mut s = 3u64;
    let mut x: Vec<f64> = (0..me.ndofs()).map(|_| rnd(&mut s)).collect();
    me.update(&mut x).unwrap();
    let w = |f: usize| x[2 * nv + f];
    let q = me.state("q").unwrap().to_vec();
    assert_eq!(q.len(), mesh.triangles.len());
    for (f, t) in mesh.triangles.iter().enumerate() {
        let want = 2.0 * w(f) + x[2 * t[1] as usize + 1];
        assert!((q[f] - want).abs() <= 1e-15, "face {f}: {} vs {want}", q[f]);
    }
    // Diamonds in edge order; each interior edge's two faces as `face_neighbours` finds
    // them, up to which is f0: the set of values {w[f] − 3w[g]} or {w[g] − 3w[f]}.
    let r = me.state("r").unwrap().to_vec();
    let pairs = face_neighbours(&mesh);
    assert_eq!(r.len(), pairs.len());
    for v in &r {
        let found = pairs.iter().any(|&(f, g, _, _)| {
            (v - (w(f) - 3.0 * w(g))).abs() <= 1e-15 || (v - (w(g) - 3.0 * w(f))).abs() <= 1e-15
        });
        assert!(found, "diamond value {v} is no pair's");
    }
}
