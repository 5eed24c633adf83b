//! `state` fields and `update` items through the Rust API: initial values, the
//! simultaneous update rule, updates after every accepted iteration, and dof
//! initializers.

// Dense reference computations index their matrices by row and column.
#![allow(clippy::needless_range_loop)]

use mad::energy::{EnergyProgram, MeshObjective};
use mad::front::state::Init;
use mad_runtime::mesh::load_mesh;
use mad_runtime::solve::{Control, IterationInfo, SolveOptions, Solver, Status};

/// E = Σ_v ‖x − ½(c + T)‖², T = X + (1, 0, 0); updates c ← x and d ← c.
/// Newton solves the quadratic exactly each iteration, so after k iterations
/// x = X + (1 − 2⁻ᵏ)·e₁, c = x, and d holds the previous c = X + (1 − 2¹⁻ᵏ)·e₁.
const HALFWAY: &str = "
dof   x: vertex -> vec3;
data  X: vertex -> vec3;
state c: vertex -> vec3 = positions;
state d: vertex -> vec3;
energy pull(e: vertex) {
    let t = X[e.v0] + vec3(1.0, 0.0, 0.0);
    let r = x[e.v0] - 0.5 * (c[e.v0] + t);
    dot(r, r)
}
update c(e: vertex) { x[e.v0] }
update d(e: vertex) { c[e.v0] }
";

#[test]
fn updates_run_after_every_iteration_and_read_old_values() {
    let prog = EnergyProgram::compile_str("halfway.mad", HALFWAY).unwrap();
    let mesh = load_mesh("grid:3x3").unwrap();
    let me = prog.bind(&mesh).unwrap();
    // States start from their initializers: c = positions, d = zeros.
    let flat: Vec<f64> = mesh.positions.iter().flatten().copied().collect();
    assert_eq!(me.state("c").unwrap(), &flat[..]);
    assert!(me.state("d").unwrap().iter().all(|&v| v == 0.0));
    let mut x = me.initial_x().unwrap();
    assert_eq!(x, flat);
    let mut obj = MeshObjective::new(me, &x).unwrap();
    let opts = SolveOptions {
        max_iters: 5,
        grad_abs_tol: 0.0,
        ..SolveOptions::default()
    };
    let mut energies = Vec::new();
    let mut cb = |it: &IterationInfo| {
        energies.push(it.energy);
        Control::Continue
    };
    let mut solver = Solver::from_name("newton").unwrap();
    let report = solver
        .solve(&mut obj, &mut x, &opts, Some(&mut cb))
        .unwrap();
    assert_eq!(report.status, Status::MaxIterations);
    let nv = mesh.num_vertices() as f64;
    for (k, e) in energies.iter().enumerate() {
        // After iteration k+1: x − T = −2^-(k+1) e₁ for every vertex; E = nv · ¼ · 4^-(k+1).
        let want = nv * 0.25 * 0.25f64.powi(k as i32 + 1);
        assert!(
            (e - want).abs() <= 1e-12 * want.max(1e-300) + 1e-15,
            "iteration {}: {e} vs {want}",
            k + 1
        );
    }
    let me = obj.energy();
    let c = me.state("c").unwrap();
    let d = me.state("d").unwrap();
    for (i, p) in mesh.positions.iter().enumerate() {
        for k in 0..3 {
            let shift = if k == 0 { 1.0 } else { 0.0 };
            let xw = p[k] + shift * (1.0 - 0.5f64.powi(5));
            let dw = p[k] + shift * (1.0 - 0.5f64.powi(4));
            assert!(
                (x[3 * i + k] - xw).abs() < 1e-12,
                "x[{i}][{k}] = {} vs {xw}",
                x[3 * i + k]
            );
            assert!((c[3 * i + k] - xw).abs() < 1e-12);
            assert!(
                (d[3 * i + k] - dw).abs() < 1e-12,
                "d[{i}][{k}] = {} vs {dw}",
                d[3 * i + k]
            );
        }
    }
}

/// A dof update re-assigns the unknowns; L-BFGS restarts its memory and still converges.
#[test]
fn dof_update_resets_the_unknowns() {
    let src = "
dof   t: vertex -> f64 = zeros;
state s: vertex -> f64;
energy well(e: vertex) { (s[e.v0] + t[e.v0] - 2.0)^2 }
update s(e: vertex) { s[e.v0] + t[e.v0] }
update t(e: vertex) { 0.0 }
";
    let prog = EnergyProgram::compile_str("shift.mad", src).unwrap();
    let mesh = load_mesh("grid:2x2").unwrap();
    let me = prog.bind(&mesh).unwrap();
    let mut x = me.initial_x().unwrap();
    assert!(x.iter().all(|&v| v == 0.0));
    let mut obj = MeshObjective::new(me, &x).unwrap();
    let opts = SolveOptions {
        max_iters: 50,
        grad_abs_tol: 1e-10,
        ..SolveOptions::default()
    };
    let report = Solver::from_name("lbfgs")
        .unwrap()
        .solve(&mut obj, &mut x, &opts, None)
        .unwrap();
    assert!(report.status.converged(), "{:?}", report.status);
    assert!(
        x.iter().all(|&v| v == 0.0),
        "the last update resets t: {x:?}"
    );
    assert!(
        obj.energy()
            .state("s")
            .unwrap()
            .iter()
            .all(|&v| (v - 2.0).abs() < 1e-6)
    );
}

#[test]
fn initializers_from_the_api() {
    let src = "dof u: vertex -> vec2 = tutte; dof w: vertex -> vec3; energy e(f: face) { dot(u[f.v0], u[f.v1]) + dot(w[f.v0], w[f.v0]) }";
    let prog = EnergyProgram::compile_str("init.mad", src).unwrap();
    let mesh = load_mesh("disk:3").unwrap();
    let mut me = prog.bind(&mesh).unwrap();
    let x = me.initial_x().unwrap();
    let nv = mesh.num_vertices();
    // The second field defaults to zeros; the first is a Tutte embedding inside the unit disk.
    assert!(x[2 * nv..].iter().all(|&v| v == 0.0));
    assert!((0..nv).all(|i| x[2 * i].hypot(x[2 * i + 1]) <= 1.0 + 1e-12));
    assert!((0..nv).any(|i| (x[2 * i].hypot(x[2 * i + 1]) - 1.0).abs() < 1e-12));
    me.set_init("w", Init::Positions).unwrap();
    me.set_init("u", Init::Zeros).unwrap();
    let x = me.initial_x().unwrap();
    assert!(x[..2 * nv].iter().all(|&v| v == 0.0));
    assert_eq!(&x[2 * nv..2 * nv + 3], &mesh.positions[0][..]);
    // Errors: unknown names, tutte on a vec3 dof, tutte on a closed mesh, missing files.
    assert!(
        me.set_init("q", Init::Zeros)
            .unwrap_err()
            .to_string()
            .contains("no dof or state named `q`")
    );
    assert!(
        me.set_init("w", Init::Tutte)
            .unwrap_err()
            .to_string()
            .contains("vertex -> vec2")
    );
    // A `tutte` dof on a closed mesh fails when the program is bound (§12.2).
    let closed = prog.bind(&load_mesh("sphere:1").unwrap()).err().expect("a closed mesh");
    assert!(closed.to_string().contains("no boundary"), "{closed}");
    me.set_init("w", Init::File("/nonexistent/start.obj".into()))
        .unwrap();
    assert!(me.initial_x().is_err());
}

#[test]
fn state_and_update_stay_plain_identifiers() {
    let src = "fn update(state: f64) -> f64 { let solve = state * 2.0; solve }\nfn main() { let state = 1.5; print(update(state)); }";
    assert!(mad::Program::compile_str("names.mad", src).is_ok());
}

/// Face and ring updates against values computed here from the mesh.
#[test]
fn face_and_ring_updates_compute_per_element_values() {
    let src = "
dof   x: vertex -> vec3;
data  X: vertex -> vec3;
state A: face -> f64;
state deg: vertex -> f64;
state mean: vertex -> vec3;
energy e(f: face) { A[f] * dot(x[f.v0], x[f.v0]) }
update A(f: face) { 0.5 * norm(cross(X[f.v1] - X[f.v0], X[f.v2] - X[f.v0])) }
update deg(r: ring) { len(r.nbrs) as f64 }
update mean(r: ring) {
    let mut s = vec3(0.0, 0.0, 0.0);
    for i in 0..len(r.nbrs) { s += x[r.nbrs[i]]; }
    s / (len(r.nbrs) as f64)
}
";
    let prog = EnergyProgram::compile_str("areas.mad", src).unwrap();
    let mut m = load_mesh("disk:3").unwrap();
    for p in &mut m.positions {
        p[2] = p[0] * p[1];
    }
    let mut me = prog.bind(&m).unwrap();
    let mut x = me.initial_x().unwrap();
    assert!(me.update(&mut x).unwrap());
    assert!(
        !me.update(&mut x).unwrap(),
        "a second update at the same x changes nothing"
    );
    let p = &m.positions;
    for (t, tri) in m.triangles.iter().enumerate() {
        let (a, b, c) = (p[tri[0] as usize], p[tri[1] as usize], p[tri[2] as usize]);
        let u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
        let v = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
        let n = [
            u[1] * v[2] - u[2] * v[1],
            u[2] * v[0] - u[0] * v[2],
            u[0] * v[1] - u[1] * v[0],
        ];
        let area = 0.5 * (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        assert!((me.state("A").unwrap()[t] - area).abs() < 1e-14);
    }
    let mut nbrs = vec![std::collections::BTreeSet::new(); m.num_vertices()];
    for tri in &m.triangles {
        for k in 0..3 {
            nbrs[tri[k] as usize].insert(tri[(k + 1) % 3]);
            nbrs[tri[(k + 1) % 3] as usize].insert(tri[k]);
        }
    }
    for (v, nb) in nbrs.iter().enumerate() {
        assert_eq!(me.state("deg").unwrap()[v], nb.len() as f64);
        for c in 0..3 {
            let want = nb.iter().map(|&w| p[w as usize][c]).sum::<f64>() / nb.len() as f64;
            assert!((me.state("mean").unwrap()[3 * v + c] - want).abs() < 1e-14);
        }
    }
}
