//! Hessian kernels of terms that read their vertex dofs only through differences run one
//! forward seed per dof of every vertex but the first; the first vertex's columns are the
//! negated sums of the others'. Checked here: which terms qualify (and that terms reading
//! a vertex position in any other way do not), and that the assembled Hessian of such
//! terms matches central differences of the gradient in every column, including those of
//! the first vertex of each element.

use mad::energy::EnergyProgram;

use crate::energy_common;
use energy_common::derivatives_match_differences;

fn seeds(src: &str) -> Vec<(String, usize, usize)> {
    let p = EnergyProgram::compile_str("seeds.mad", src).expect("compiles");
    p.hessian_seeds()
        .into_iter()
        .map(|(n, s, k)| (n.trim_start_matches("energy::").to_string(), s, k))
        .collect()
}

#[test]
fn difference_terms_run_fewer_seeds_and_others_do_not() {
    let src = r#"
dof x: vertex -> vec3 = positions;
dof u: vertex -> vec2 = zeros;
dof s: vertex -> f64 = zeros;
data X: vertex -> vec3;
energy spring(e: edge) { let d = x[e.v0] - x[e.v1]; dot(d, d) }
energy area(f: face) { 0.5 * norm(cross(x[f.v1] - x[f.v0], x[f.v2] - x[f.v0])) }
energy flat(f: face) { let a = u[f.v1] - u[f.v0]; let b = u[f.v2] - u[f.v1]; (a.x * b.y - a.y * b.x)^2 }
energy scalar_diff(e: edge) { (s[e.v1] - s[e.v0])^4 }
energy bend(d: diamond) { let e = x[d.v1] - x[d.v0]; let n = cross(e, x[d.v2] - x[d.v0]); let m = cross(x[d.v3] - x[d.v0], e); dot(n, m) }
energy anchored(e: edge) { let d = x[e.v0] - x[e.v1]; dot(d, d) + dot(x[e.v0], x[e.v0]) }
energy against_rest(e: edge) { let d = x[e.v0] - X[e.v1]; dot(d, d) }  // dofs at e.v0 only
energy sum_not_difference(e: edge) { let d = x[e.v0] + x[e.v1]; dot(d, d) }
energy mixed_components(e: edge) { (x[e.v0].x - x[e.v1].y)^2 }
energy sphere(f: face) { dot(x[f.v0], x[f.v1] - x[f.v2]) }
"#;
    let got = seeds(src);
    let want = [
        ("spring", 3, 6),
        ("area", 6, 9),
        ("flat", 4, 6),
        ("scalar_diff", 1, 2),
        ("bend", 9, 12),
        ("anchored", 6, 6),
        ("against_rest", 3, 3),
        ("sum_not_difference", 6, 6),
        ("mixed_components", 6, 6),
        ("sphere", 9, 9),
    ];
    assert_eq!(got.len(), want.len(), "{got:?}");
    for ((name, s, k), (wn, ws, wk)) in got.iter().zip(want) {
        assert_eq!((name.as_str(), *s, *k), (wn, ws, wk), "{got:?}");
    }
}



#[test]
fn face_term_of_2_vectors_matches_differences_in_every_column() {
    let src = r#"
dof u: vertex -> vec2 = tutte;
data X: vertex -> vec3;
energy sd(f: face) {
    let e1 = X[f.v1] - X[f.v0];
    let e2 = X[f.v2] - X[f.v0];
    let M = mat2(norm(e1), dot(e2, e1) / norm(e1), 0.0, norm(cross(e1, e2)) / norm(e1));
    let J = mat2::cols(u[f.v1] - u[f.v0], u[f.v2] - u[f.v0]) * inv(M);
    frob2(J) + frob2(inv(J))
}
"#;
    assert_eq!(seeds(src), vec![("sd".to_string(), 4, 6)]);
    derivatives_match_differences(src, "disk:2", 0.02, 7);
}

#[test]
fn diamond_term_of_3_vectors_matches_differences_in_every_column() {
    let src = r#"
dof x: vertex -> vec3 = positions;
energy bend(d: diamond) {
    let e = x[d.v1] - x[d.v0];
    let n = cross(e, x[d.v2] - x[d.v0]);
    let m = cross(x[d.v3] - x[d.v0], e);
    (dot(n, m) / (norm(n) * norm(m)) - 1.0)^2 + dot(e, e)
}
"#;
    assert_eq!(seeds(src), vec![("bend".to_string(), 9, 12)]);
    derivatives_match_differences(src, "sphere:1", 0.05, 7);
}
