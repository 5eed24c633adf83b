//! Translation gauges in Newton's linear solve: which energies report translation classes,
//! and that a solve with the gauge takes exact Newton steps (no diagonal shift on a singular
//! Hessian) that reach a stationary point of the whole energy.

use mad::energy::{EnergyProgram, MeshObjective};
use mad_runtime::mesh::load_mesh;
use mad_runtime::solve::{Newton, Objective, SolveOptions, TranslationClasses};

fn param_source(extra: &str) -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/param.mad");
    let src = std::fs::read_to_string(path).unwrap();
    // The solve block is not needed here; the extra term goes after the energies.
    let body = &src[..src.find("solve {").unwrap()];
    format!("{body}\n{extra}\n")
}

fn classes_of(src: &str, spec: &str) -> Option<TranslationClasses> {
    let prog = EnergyProgram::compile_str("t.mad", src).unwrap();
    let mesh = load_mesh(spec).unwrap();
    let me = prog.bind(&mesh).unwrap();
    let x0 = me.initial_x().unwrap();
    let obj = MeshObjective::new(me, &x0).unwrap();
    obj.translation_classes().cloned()
}

#[test]
fn a_parameterization_has_one_class_per_component() {
    let c = classes_of(&param_source(""), "disk:3").expect("invariant");
    assert_eq!(c.pins, vec![0, 1], "vertex 0's u and v");
    for (dof, &cls) in c.class_of.iter().enumerate() {
        assert_eq!(cls, (dof % 2) as u32, "dof {dof}");
    }
}

#[test]
fn each_connected_part_has_its_own_classes() {
    // Two triangles that share no vertex, and a vertex in no face.
    let dir = std::env::temp_dir().join(format!("mad_gauge_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let obj = dir.join("two.obj");
    std::fs::write(
        &obj,
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 9 9 9\nv 5 0 0\nv 6 0 0\nv 5 1 0\nf 1 2 3\nf 5 6 7\n",
    )
    .unwrap();
    let prog = EnergyProgram::compile_str(
        "t.mad",
        "dof x: vertex -> vec2;\n\
         energy spring(e: edge) { let d = x[e.v0] - x[e.v1]; (dot(d, d) - 1.0)^2 }\n",
    )
    .unwrap();
    let mesh = load_mesh(obj.to_str().unwrap()).unwrap();
    let me = prog.bind(&mesh).unwrap();
    let x0 = me.default_x();
    let o = MeshObjective::new(me, &x0).unwrap();
    let c = o.translation_classes().expect("invariant");
    assert_eq!(c.pins, vec![0, 1, 8, 9], "vertices 0 and 4, both components");
    assert_eq!(&c.class_of[6..8], &[TranslationClasses::NONE; 2], "vertex 3 is in no edge");
    assert_eq!(&c.class_of[10..14], &[2, 3, 2, 3]);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn terms_that_see_absolute_positions_remove_the_classes() {
    // A term at one vertex (a pull), and a term reading the field beside another one.
    assert!(classes_of(&param_source("energy pull(v: vertex) { 0.1 * u[v.v0].x }"), "disk:3").is_none());
    assert!(
        classes_of(
            &param_source("dof w: vertex -> f64;\nenergy mix(e: edge) { (u[e.v0].x - u[e.v1].x - w[e.v0])^2 }"),
            "disk:3"
        )
        .is_none()
    );
}

/// Projected Newton on the parameterization with nothing fixed: no diagonal shift up to
/// convergence (at the minimum, rotations become a null space too), the pin unmoved, and a
/// stationary point of the whole energy (the gradient at vertex 0 included). With vertex 0
/// fixed by the caller (the same pin), the same iterates bit for bit.
#[test]
fn newton_takes_unshifted_steps_to_a_stationary_point() {
    let prog = EnergyProgram::compile_str("t.mad", &param_source("")).unwrap();
    let mesh = load_mesh("disk:5").unwrap();
    let solve = |fix_first: bool, max_iters: usize, tol: f64| {
        let me = prog.bind(&mesh).unwrap();
        let mut x = me.initial_x().unwrap();
        let n = x.len();
        let mut obj = MeshObjective::new(me, &x).unwrap();
        let mut newton = Newton::new();
        newton.project_psd = true;
        let opts = SolveOptions {
            max_iters,
            grad_abs_tol: tol,
            step_tol: 0.0,
            fixed: fix_first.then(|| (0..n).map(|i| i < 2).collect()),
            ..SolveOptions::default()
        };
        let x0 = x.clone();
        let report = newton.solve(&mut obj, &mut x, &opts, None).unwrap();
        let mut g = vec![0.0; n];
        obj.value_grad(&x, &mut g).unwrap();
        (x0, x, report, g)
    };
    let (x0, x, report, g) = solve(false, 30, 1e-9);
    assert!(report.status.converged(), "{:?}", report.status);
    let shifts: Vec<(usize, f64)> = report.history.iter().map(|it| (it.iteration, it.shift)).collect();
    assert!(shifts.iter().all(|s| s.1 == 0.0), "a shift was needed: {shifts:?}");
    assert_eq!(&x[..2], &x0[..2], "the pin moved");
    let gnorm = g.iter().map(|v| v * v).sum::<f64>().sqrt();
    assert!(gnorm < 1e-8, "‖g‖ = {gnorm:e}");
    let (_, a, _, _) = solve(false, 3, 0.0);
    let (_, b, _, _) = solve(true, 3, 0.0);
    assert!(a.iter().zip(&b).all(|(p, q)| p.to_bits() == q.to_bits()));
}
