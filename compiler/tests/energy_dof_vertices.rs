//! Terms over edges, faces or diamonds that read dofs at only some of their stencil's
//! vertices (a diamond term that reads `x[d.v0]`, `x[d.v1]` and only data at the wings)
//! keep only those vertices' dofs in their local vector: smaller Hessian blocks, and no
//! Hessian pattern entries between vertices that never interact. Checked here: the local
//! dof count, the pattern against the same energy written over edges, and every Hessian
//! column against central differences of the gradient.

use mad::energy::EnergyProgram;
use mad_runtime::mesh::load_mesh;

const WINGS: &str = r#"
dof x: vertex -> vec3 = positions;
data X: vertex -> vec3;
energy wings(d: diamond) {
    let w = 1.0 + dot(X[d.v2] - X[d.v3], X[d.v2] - X[d.v3]);
    let e = x[d.v0] - x[d.v1];
    w * dot(e, e)^2 + 0.1 * x[d.v1].z^2
}
"#;

const EDGES: &str = r#"
dof x: vertex -> vec3 = positions;
energy plain(e: edge) {
    let d = x[e.v0] - x[e.v1];
    dot(d, d)^2 + 0.1 * x[e.v1].z^2
}
"#;

const WING_DOFS: &str = r#"
dof x: vertex -> vec3 = positions;
energy far(d: diamond) {
    let e = x[d.v3] - x[d.v2];
    dot(e, e) * norm(x[d.v3])
}
"#;

fn rnd(seed: &mut u64) -> f64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((*seed >> 11) as f64 / (1u64 << 53) as f64) - 0.5
}

#[test]
fn local_dofs_are_the_vertices_read() {
    let k = |src: &str| {
        let p = EnergyProgram::compile_str("k.mad", src).expect("compiles");
        p.hessian_seeds()[0].2
    };
    assert_eq!(k(WINGS), 6);
    assert_eq!(k(EDGES), 6);
    assert_eq!(k(WING_DOFS), 6);
    // Reading all four vertices keeps all four.
    assert_eq!(
        k("dof x: vertex -> vec3 = positions;\nenergy all(d: diamond) { dot(x[d.v0] - x[d.v1], x[d.v2] - x[d.v3]) }"),
        12
    );
}

#[test]
fn the_pattern_has_only_the_couplings_of_the_vertices_read() {
    let mesh = load_mesh("sphere:1").unwrap();
    let wings = EnergyProgram::compile_str("w.mad", WINGS).unwrap();
    let edges = EnergyProgram::compile_str("e.mad", EDGES).unwrap();
    let (mw, me) = (wings.bind(&mesh).unwrap(), edges.bind(&mesh).unwrap());
    assert_eq!(mw.pattern().row_ptr, me.pattern().row_ptr);
    assert_eq!(mw.pattern().col_idx, me.pattern().col_idx);
}

fn check_columns(src: &str, mesh: &str) {
    let prog = EnergyProgram::compile_str("check.mad", src).expect("compiles");
    let mesh = load_mesh(mesh).expect("mesh");
    let me = prog.bind(&mesh).expect("binds");
    let n = me.ndofs();
    let mut seed = 3;
    let x: Vec<f64> = me
        .initial_x()
        .unwrap()
        .iter()
        .map(|v| v + 0.05 * rnd(&mut seed))
        .collect();
    let mut g = vec![0.0; n];
    let mut hv = vec![0.0; me.nnz()];
    me.hessian(&x, &mut g, &mut hv, false).unwrap();
    let p = me.pattern();
    let mut dense = vec![vec![0.0; n]; n];
    for r in 0..n {
        for k in p.row_ptr[r]..p.row_ptr[r + 1] {
            dense[r][p.col_idx[k] as usize] = hv[k];
        }
    }
    let hscale = hv.iter().fold(1e-3f64, |m, v| m.max(v.abs()));
    let step = 1e-6;
    for i in 0..n {
        let (mut xp, mut xm) = (x.clone(), x.clone());
        xp[i] += step;
        xm[i] -= step;
        let (mut gp, mut gm) = (vec![0.0; n], vec![0.0; n]);
        me.gradient(&xp, &mut gp).unwrap();
        me.gradient(&xm, &mut gm).unwrap();
        for j in 0..n {
            let fd = (gp[j] - gm[j]) / (2.0 * step);
            assert!(
                (fd - dense[j][i]).abs() <= 1e-6 * hscale,
                "H[{j}][{i}] = {} vs fd {fd}",
                dense[j][i]
            );
        }
    }
    // The gradient against central differences of the energy.
    let gscale = g.iter().fold(1e-3f64, |m, v| m.max(v.abs()));
    for i in 0..n {
        let (mut xp, mut xm) = (x.clone(), x.clone());
        xp[i] += step;
        xm[i] -= step;
        let fd = (me.energy(&xp).unwrap() - me.energy(&xm).unwrap()) / (2.0 * step);
        assert!((fd - g[i]).abs() <= 1e-6 * gscale, "g[{i}] = {} vs fd {fd}", g[i]);
    }
}

#[test]
fn derivatives_match_differences_when_reading_the_edge() {
    check_columns(WINGS, "sphere:1");
}

#[test]
fn derivatives_match_differences_when_reading_the_wings() {
    check_columns(WING_DOFS, "sphere:1");
}
