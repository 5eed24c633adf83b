//! Updates that read only data, params and the mesh ("static" updates: a rest frame, say):
//! computed when the mesh is bound and again whenever `set_data`, `set_param` or `set_init`
//! changes their inputs, left alone by `update`; and the energy reads their per-face values.

use mad::energy::EnergyProgram;
use mad::front::state::Init;
use mad_runtime::mesh::load_mesh;

/// a_f = s·‖(X₁ − X₀) × (X₂ − X₀)‖ per face (twice s times the area), read by a spring.
const REST: &str = "
dof   x: vertex -> vec2 = zeros;
data  X: vertex -> vec3;
param s: f64 = 2.0;
state a: face -> f64;
update a(e: face) { s * norm(cross(X[e.v1] - X[e.v0], X[e.v2] - X[e.v0])) }
energy spring(e: face) { a[e] * dot(x[e.v0] - x[e.v1], x[e.v0] - x[e.v1]) }
";

fn doubled_areas(pos: &[[f64; 3]], faces: &[[u32; 3]], s: f64) -> Vec<f64> {
    faces
        .iter()
        .map(|f| {
            let [p, q, r] = f.map(|v| pos[v as usize]);
            let (u, w) = (
                [q[0] - p[0], q[1] - p[1], q[2] - p[2]],
                [r[0] - p[0], r[1] - p[1], r[2] - p[2]],
            );
            let c = [
                u[1] * w[2] - u[2] * w[1],
                u[2] * w[0] - u[0] * w[2],
                u[0] * w[1] - u[1] * w[0],
            ];
            s * (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt()
        })
        .collect()
}

fn close(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x - y).abs() <= 1e-12 * y.abs().max(1.0))
}

#[test]
fn static_updates_follow_data_and_params_and_feed_the_energy() {
    let prog = EnergyProgram::compile_str("rest.mad", REST).unwrap();
    let mut mesh = load_mesh("grid:5x4").unwrap();
    // Heights, so that the faces differ.
    for (i, p) in mesh.positions.iter_mut().enumerate() {
        p[2] = 0.1 * (i % 3) as f64;
    }
    let faces = mesh.triangles.clone();
    let mut me = prog.bind(&mesh).unwrap();
    // Current from the start, and `update` leaves it (no change reported).
    let want = doubled_areas(&mesh.positions, &faces, 2.0);
    assert!(close(me.state("a").unwrap(), &want));
    let mut x = me.initial_x().unwrap();
    assert!(!me.update(&mut x).unwrap());
    assert!(close(me.state("a").unwrap(), &want));

    // The energy reads the state.
    let x: Vec<f64> = (0..me.ndofs())
        .map(|i| ((i * 7919) % 13) as f64 * 0.1)
        .collect();
    let e = me.energy(&x).unwrap();
    let manual: f64 = faces
        .iter()
        .zip(&want)
        .map(|(f, a)| {
            let (i, j) = (f[0] as usize, f[1] as usize);
            let d = [x[2 * i] - x[2 * j], x[2 * i + 1] - x[2 * j + 1]];
            a * (d[0] * d[0] + d[1] * d[1])
        })
        .sum();
    assert!(
        (e - manual).abs() <= 1e-12 * manual.abs(),
        "{e} vs {manual}"
    );

    // A param change: computed again at once, and the energy follows.
    let mut x0 = me.initial_x().unwrap();
    me.set_param("s", 3.0).unwrap();
    assert!(close(
        me.state("a").unwrap(),
        &doubled_areas(&mesh.positions, &faces, 3.0)
    ));
    assert!(!me.update(&mut x0).unwrap());
    let e3 = me.energy(&x).unwrap();
    assert!(
        (e3 - 1.5 * manual).abs() <= 1e-12 * manual.abs(),
        "{e3} vs {}",
        1.5 * manual
    );

    // New data: computed again.
    let scaled: Vec<[f64; 3]> = mesh.positions.iter().map(|p| p.map(|c| 2.0 * c)).collect();
    let flat: Vec<f64> = scaled.iter().flatten().copied().collect();
    me.set_data("X", &flat).unwrap();
    assert!(close(
        me.state("a").unwrap(),
        &doubled_areas(&scaled, &faces, 3.0)
    ));

    // A state re-initialized by the host is its update's again: the update owns it.
    me.set_init("a", Init::Zeros).unwrap();
    assert!(close(
        me.state("a").unwrap(),
        &doubled_areas(&scaled, &faces, 3.0)
    ));
}

/// A static update that reads data the host must give: the state waits for it.
const GIVEN: &str = "
dof   x: vertex -> vec2 = zeros;
data  w: face -> f64;
param s: f64;
state a: face -> f64;
update a(e: face) { s * w[e] }
energy spring(e: face) { a[e] * dot(x[e.v0] - x[e.v1], x[e.v0] - x[e.v1]) }
";

#[test]
fn a_static_update_waits_for_data_and_params_the_host_gives() {
    let prog = EnergyProgram::compile_str("given.mad", GIVEN).unwrap();
    let mesh = load_mesh("grid:3x3").unwrap();
    let mut me = prog.bind(&mesh).unwrap();
    let nf = mesh.triangles.len();
    assert!(me.state("a").unwrap().iter().all(|&v| v == 0.0));
    let w: Vec<f64> = (0..nf).map(|f| f as f64 + 1.0).collect();
    me.set_data("w", &w).unwrap();
    // The param is still missing.
    assert!(me.state("a").unwrap().iter().all(|&v| v == 0.0));
    me.set_param("s", 0.5).unwrap();
    let want: Vec<f64> = w.iter().map(|v| 0.5 * v).collect();
    assert!(close(me.state("a").unwrap(), &want));
}
