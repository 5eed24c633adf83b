//! PSD-projected Hessians in the batched block loop (`BatchKind::HessBlock`)
//! against the element-by-element path (one kernel call, projection and
//! scatter per element), on the mass-spring and symmetric Dirichlet
//! (`examples/param.mad`) energies; bit-identical results for 1–3 threads.

use mad::codegen::element_loop::BatchKind;
use mad::energy::{EnergyProgram, MeshEnergy};
use mad_runtime::mesh::{Topology, load_mesh};

fn example(name: &str) -> EnergyProgram {
    let path = format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    EnergyProgram::compile_file(&path).unwrap()
}

fn rnd(seed: &mut u64) -> f64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
}

struct Eval {
    e: f64,
    g: Vec<f64>,
    h: Vec<f64>,
}

fn hessian(me: &MeshEnergy<'_>, x: &[f64], project: bool) -> Eval {
    let (mut g, mut h) = (vec![0.0; me.ndofs()], vec![0.0; me.nnz()]);
    let e = me.hessian(x, &mut g, &mut h, project).unwrap();
    Eval { e, g, h }
}

fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |m, a| m.max(a.abs()))
}

/// Batched projected vs element-path projected: energy and gradient to the
/// bit, Hessian values to 1e-12 of the largest entry. Also checks that the
/// projection changed something (the point has indefinite element blocks).
fn compare_paths(me: &mut MeshEnergy<'_>, x: &[f64]) {
    me.set_batched(false);
    let old = hessian(me, x, true);
    let raw = hessian(me, x, false);
    me.set_batched(true);
    let new = hessian(me, x, true);
    assert!(old.e.is_finite());
    assert_eq!(old.e.to_bits(), new.e.to_bits());
    assert_eq!(old.g, new.g);
    let hs = max_abs(&old.h);
    assert!(hs > 0.0);
    for (i, (a, b)) in old.h.iter().zip(&new.h).enumerate() {
        assert!((a - b).abs() <= 1e-12 * hs, "H value {i}: {a} vs {b}");
    }
    let changed = raw
        .h
        .iter()
        .zip(&old.h)
        .filter(|(a, b)| (*a - *b).abs() > 1e-9 * hs)
        .count();
    assert!(changed > 0, "no element block was projected at this point");
}

/// xᵀHx ≥ −tol·‖x‖² for random x: the assembled projected matrix is PSD.
fn assert_psd_quadratic_forms(me: &MeshEnergy<'_>, h: &[f64]) {
    let p = me.pattern();
    let n = me.ndofs();
    let hs = max_abs(h);
    let mut s = 5;
    for _ in 0..20 {
        let v: Vec<f64> = (0..n).map(|_| rnd(&mut s)).collect();
        let mut q = 0.0;
        for r in 0..n {
            for kk in p.row_ptr[r]..p.row_ptr[r + 1] {
                q += v[r] * h[kk] * v[p.col_idx[kk] as usize];
            }
        }
        let vv: f64 = v.iter().map(|a| a * a).sum();
        assert!(q >= -1e-10 * hs * vv, "vᵀHv = {q}");
    }
}

fn has_block_loop(prog: &EnergyProgram) -> bool {
    prog.batch_specs()
        .iter()
        .any(|s| s.kind == BatchKind::HessBlock)
}

/// Compressed springs (rest lengths 1.5–3× the edge lengths) have indefinite blocks.
fn springs(mesh: &str) -> (EnergyProgram, mad_runtime::mesh::Mesh) {
    (example("mass_spring.mad"), load_mesh(mesh).unwrap())
}

fn spring_state(me: &mut MeshEnergy<'_>, mesh: &mad_runtime::mesh::Mesh, seed: u64) -> Vec<f64> {
    let topo = Topology::new(mesh).unwrap();
    let mut s = seed;
    let x0 = me.default_x();
    let rest: Vec<f64> = topo
        .edges
        .iter()
        .map(|ed| {
            let (a, b) = (ed[0] as usize, ed[1] as usize);
            let d: f64 = (0..3)
                .map(|c| (x0[3 * a + c] - x0[3 * b + c]).powi(2))
                .sum::<f64>()
                .sqrt();
            d * (2.25 + 0.75 * rnd(&mut s))
        })
        .collect();
    me.set_data("rest", &rest).unwrap();
    me.set_param("k", 1.3).unwrap();
    x0.iter().map(|v| v + 0.01 * rnd(&mut s)).collect()
}

#[test]
fn mass_spring_projected_batched_matches_element_path() {
    let (prog, mesh) = springs("grid:25x25");
    assert!(has_block_loop(&prog));
    let mut me = prog.bind(&mesh).unwrap();
    let x = spring_state(&mut me, &mesh, 17);
    compare_paths(&mut me, &x);
    let new = hessian(&me, &x, true);
    assert_psd_quadratic_forms(&me, &new.h);
}

fn param_state(me: &MeshEnergy<'_>, seed: u64) -> Vec<f64> {
    // The Tutte start, slightly perturbed (small enough to flip no triangle).
    let mut s = seed;
    me.default_x()
        .iter()
        .map(|v| v + 1e-3 * rnd(&mut s))
        .collect()
}

#[test]
fn symmetric_dirichlet_projected_batched_matches_element_path() {
    let prog = example("param.mad");
    assert!(
        has_block_loop(&prog),
        "the symmetric Dirichlet kernel has no block loop"
    );
    let mesh = load_mesh("disk:8").unwrap();
    let mut me = prog.bind(&mesh).unwrap();
    let x = param_state(&me, 3);
    compare_paths(&mut me, &x);
    let new = hessian(&me, &x, true);
    assert_psd_quadratic_forms(&me, &new.h);
}

#[test]
fn projected_batched_is_bit_identical_for_1_to_3_threads() {
    let bits = |a: &[f64]| a.iter().map(|f| f.to_bits()).collect::<Vec<u64>>();
    let check = |me: &mut MeshEnergy<'_>, x: &[f64]| {
        let mut results = Vec::new();
        for threads in [1, 2, 3] {
            me.set_threads(threads).unwrap();
            // Every colour of two chunks or more on the workers, however small the mesh.
            me.set_min_parallel_work(0);
            let r = hessian(me, x, true);
            results.push((r.e.to_bits(), bits(&r.g), bits(&r.h)));
        }
        for t in 1..3 {
            assert!(results[0] == results[t], "1 vs {} threads", t + 1);
        }
    };
    let (prog, mesh) = springs("grid:80x80");
    let mut me = prog.bind(&mesh).unwrap();
    let x = spring_state(&mut me, &mesh, 29);
    check(&mut me, &x);
    let prog = example("param.mad");
    let mesh = load_mesh("disk:30").unwrap();
    let mut me = prog.bind(&mesh).unwrap();
    let x = param_state(&me, 8);
    check(&mut me, &x);
}

/// Terms with negative objective weights: what projected Newton needs PSD is w·H, so each
/// block is projected as |w|·P(−H) (the negative part of H kept). Vertex, face (difference
/// coordinates) and ring terms, on the batched and the element path: the assembled matrix
/// is PSD, and it is the projection of −H for a term with weight −1 alone.
#[test]
fn negative_weights_project_the_weighted_block() {
    const NEGATIVE: &str = "
dof x: vertex -> vec2;
energy a(v: vertex) { x[v.v0].x * x[v.v0].y }
energy b(f: face) {
    let d = x[f.v1] - x[f.v0];
    let e = x[f.v2] - x[f.v0];
    d.x * e.y - d.y * e.x + dot(d, e) * dot(d, d)
}
energy c(r: ring) {
    let mut s = 0.0;
    for i in 0..len(r.nbrs) {
        let d = x[r.nbrs[i]] - x[r.v0];
        s += dot(d, d) * d.x;
    }
    s
}
";
    let mesh = load_mesh("grid:4x4").unwrap();
    let mixed = EnergyProgram::compile_str("neg.mad", &format!("{NEGATIVE}objective = -1 * a - 2 * b - c + 0.5 * a;\n")).unwrap();
    let mut seed = 11;
    let x: Vec<f64> = (0..2 * mesh.num_vertices()).map(|_| rnd(&mut seed)).collect();
    for batched in [true, false] {
        let mut me = mixed.bind(&mesh).unwrap();
        me.set_batched(batched);
        let h = hessian(&me, &x, true).h;
        assert!(max_abs(&h) > 0.0);
        assert_psd_quadratic_forms(&me, &h);
    }
    // −b alone equals the projection of the negated energy.
    let minus = EnergyProgram::compile_str("minus.mad", &format!("{NEGATIVE}objective = -1 * b;\n")).unwrap();
    // The same terms declared (the same sparsity pattern), the objective −b written out.
    let negated = EnergyProgram::compile_str(
        "negated.mad",
        &format!(
            "{NEGATIVE}energy nb(f: face) {{\n    let d = x[f.v1] - x[f.v0];\n    let e = x[f.v2] - x[f.v0];\n    \
             -(d.x * e.y - d.y * e.x + dot(d, e) * dot(d, d))\n}}\nobjective = nb;\n"
        ),
    )
    .unwrap();
    let (hm, hn) = (hessian(&minus.bind(&mesh).unwrap(), &x, true).h, hessian(&negated.bind(&mesh).unwrap(), &x, true).h);
    let hs = max_abs(&hn);
    for (i, (a, b)) in hm.iter().zip(&hn).enumerate() {
        assert!((a - b).abs() <= 1e-12 * hs, "H value {i}: {a} vs {b}");
    }
}
