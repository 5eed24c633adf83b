//! Terms over edges, faces or diamonds that read dofs at only some of their stencil's
//! vertices (a diamond term that reads `x[d.v0]`, `x[d.v1]` and only data at the wings)
//! keep only those vertices' dofs in their local vector: smaller Hessian blocks, and no
//! Hessian pattern entries between vertices that never interact. Checked here: the local
//! dof count, the pattern against the same energy written over edges, and every Hessian
//! column against central differences of the gradient.

use mad::energy::EnergyProgram;
use mad_runtime::mesh::load_mesh;

use crate::energy_common;
use energy_common::derivatives_match_differences;

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


#[test]
fn derivatives_match_differences_when_reading_the_edge() {
    derivatives_match_differences(WINGS, "sphere:1", 0.05, 3);
}

#[test]
fn derivatives_match_differences_when_reading_the_wings() {
    derivatives_match_differences(WING_DOFS, "sphere:1", 0.05, 3);
}
