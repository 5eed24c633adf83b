//! The mass-spring example against an independent closed-form implementation
//! (6×6 spring blocks written by hand), thread-count determinism, PSD
//! projection, and host-data errors.

// Dense reference computations index their matrices by row and column.
#![allow(clippy::needless_range_loop)]

use mad::energy::EnergyProgram;
use mad_runtime::mesh::{Topology, load_mesh};

fn program() -> EnergyProgram {
    let path = format!("{}/../examples/mass_spring.mad", env!("CARGO_MANIFEST_DIR"));
    EnergyProgram::compile_file(&path).unwrap()
}

fn rnd(seed: &mut u64) -> f64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
}

/// E = ½k(|d| − L)², d = x0 − x1: gradient ±k(1 − L/|d|)d, Hessian blocks ±B with
/// B = k[(1 − L/|d|) I + (L/|d|) n nᵀ], n = d/|d|. Returns (E, g, dense H).
fn closed_form(topo: &Topology, rest: &[f64], k: f64, x: &[f64]) -> (f64, Vec<f64>, Vec<Vec<f64>>) {
    let n = x.len();
    let mut e = 0.0;
    let mut g = vec![0.0; n];
    let mut h = vec![vec![0.0; n]; n];
    for (i, ed) in topo.edges.iter().enumerate() {
        let (a, b) = (ed[0] as usize, ed[1] as usize);
        let d = [
            x[3 * a] - x[3 * b],
            x[3 * a + 1] - x[3 * b + 1],
            x[3 * a + 2] - x[3 * b + 2],
        ];
        let len = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        let l = rest[i];
        e += 0.5 * k * (len - l) * (len - l);
        let s = k * (1.0 - l / len);
        for c in 0..3 {
            g[3 * a + c] += s * d[c];
            g[3 * b + c] -= s * d[c];
        }
        for r in 0..3 {
            for c in 0..3 {
                let bl =
                    s * if r == c { 1.0 } else { 0.0 } + k * l / len * d[r] * d[c] / (len * len);
                h[3 * a + r][3 * a + c] += bl;
                h[3 * b + r][3 * b + c] += bl;
                h[3 * a + r][3 * b + c] -= bl;
                h[3 * b + r][3 * a + c] -= bl;
            }
        }
    }
    (e, g, h)
}

fn compare(spec: &str) {
    let prog = program();
    let mesh = load_mesh(spec).unwrap();
    let mut me = prog.bind(&mesh).unwrap();
    me.set_param("k", 2.5).unwrap();
    let topo = Topology::new(&mesh).unwrap();
    let mut s = 11;
    let rest: Vec<f64> = (0..topo.edges.len())
        .map(|_| 0.05 + 0.02 * rnd(&mut s))
        .collect();
    me.set_data("rest", &rest).unwrap();
    let x: Vec<f64> = me
        .default_x()
        .iter()
        .map(|v| v + 0.01 * rnd(&mut s))
        .collect();
    let n = me.ndofs();
    let mut g = vec![0.0; n];
    let mut hv = vec![0.0; me.nnz()];
    let e = me.hessian(&x, &mut g, &mut hv, false).unwrap();
    let (e_ref, g_ref, h_ref) = closed_form(&topo, &rest, 2.5, &x);
    let rel = |a: f64, b: f64, scale: f64| (a - b).abs() / scale;
    assert!(rel(e, e_ref, e_ref.abs()) < 1e-12, "energy {e} vs {e_ref}");
    let gs = g_ref.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for i in 0..n {
        assert!(
            rel(g[i], g_ref[i], gs) < 1e-12,
            "g[{i}] {} vs {}",
            g[i],
            g_ref[i]
        );
    }
    let p = me.pattern();
    let hs = h_ref.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
    let mut seen = 0usize;
    for r in 0..n {
        for kk in p.row_ptr[r]..p.row_ptr[r + 1] {
            let c = p.col_idx[kk] as usize;
            assert!(
                rel(hv[kk], h_ref[r][c], hs) < 1e-12,
                "H[{r}][{c}] {} vs {}",
                hv[kk],
                h_ref[r][c]
            );
            if h_ref[r][c] != 0.0 {
                seen += 1;
            }
        }
    }
    // Every nonzero of the reference lies in the pattern.
    let nonzeros = h_ref.iter().flatten().filter(|v| **v != 0.0).count();
    assert_eq!(seen, nonzeros);
}

/// At rest every spring's first derivative is exactly 0 (|d| = L): the Hessian is then
/// k·n nᵀ per spring, which the forward pass over the reverse pass gets from the zero
/// adjoint's tangent. (A strong zero that kept that adjoint's product at 0 also dropped its
/// tangent, and the Hessian at rest came out all zeros.) Projected or not, in the batched
/// loops and with both the full and the upper-triangle scatter.
#[test]
fn hessian_at_rest_is_the_closed_form() {
    let prog = program();
    let mesh = load_mesh("grid:4x4").unwrap();
    let mut me = prog.bind(&mesh).unwrap();
    me.set_param("k", 2.5).unwrap();
    let topo = Topology::new(&mesh).unwrap();
    let x = me.default_x();
    let rest: Vec<f64> = topo
        .edges
        .iter()
        .map(|ed| {
            let (a, b) = (ed[0] as usize, ed[1] as usize);
            (0..3).map(|c| (x[3 * a + c] - x[3 * b + c]).powi(2)).sum::<f64>().sqrt()
        })
        .collect();
    me.set_data("rest", &rest).unwrap();
    let (_, _, h_ref) = closed_form(&topo, &rest, 2.5, &x);
    let n = me.ndofs();
    for project in [false, true] {
        let mut g = vec![0.0; n];
        let mut hv = vec![0.0; me.nnz()];
        let e = me.hessian(&x, &mut g, &mut hv, project).unwrap();
        assert!(e.abs() < 1e-20, "energy at rest {e}");
        let p = me.pattern();
        for r in 0..n {
            for kk in p.row_ptr[r]..p.row_ptr[r + 1] {
                let c = p.col_idx[kk] as usize;
                assert!((hv[kk] - h_ref[r][c]).abs() < 1e-12, "project {project}: H[{r}][{c}] {} vs {}", hv[kk], h_ref[r][c]);
            }
        }
        assert!(hv.iter().any(|v| *v > 1.0), "the Hessian at rest is not zero");
    }
}

#[test]
fn hessian_matches_closed_form_10x10() {
    compare("grid:10x10");
}

#[test]
fn hessian_matches_closed_form_50x50() {
    compare("grid:50x50");
}

#[test]
fn assembly_is_bit_identical_across_thread_counts() {
    let prog = program();
    let mesh = load_mesh("grid:60x60").unwrap();
    let mut me = prog.bind(&mesh).unwrap();
    let mut s = 5;
    let x: Vec<f64> = me
        .default_x()
        .iter()
        .map(|v| v + 0.01 * rnd(&mut s))
        .collect();
    let v: Vec<f64> = (0..me.ndofs()).map(|_| rnd(&mut s)).collect();
    let mut results = Vec::new();
    for threads in [1, 2, 4] {
        me.set_threads(threads).unwrap();
        // Every colour of two chunks or more on the workers, however small the mesh.
        me.set_min_parallel_work(0);
        let mut g = vec![0.0; me.ndofs()];
        let mut h = vec![0.0; me.nnz()];
        let e = me.hessian(&x, &mut g, &mut h, false).unwrap();
        let mut hv = vec![0.0; me.ndofs()];
        me.hvp(&x, &v, &mut hv).unwrap();
        let bits = |a: &[f64]| a.iter().map(|f| f.to_bits()).collect::<Vec<u64>>();
        results.push((e.to_bits(), bits(&g), bits(&h), bits(&hv)));
    }
    assert!(results[0] == results[1], "1 vs 2 threads");
    assert!(results[0] == results[2], "1 vs 4 threads");
}

#[test]
fn psd_projection_gives_nonnegative_quadratic_form() {
    let prog = program();
    let mesh = load_mesh("grid:5x5").unwrap();
    let me = prog.bind(&mesh).unwrap();
    // Shrinking the mesh compresses every spring: indefinite blocks.
    let x: Vec<f64> = me.default_x().iter().map(|v| 0.3 * v).collect();
    let n = me.ndofs();
    let (mut g, mut h, mut hp) = (vec![0.0; n], vec![0.0; me.nnz()], vec![0.0; me.nnz()]);
    me.hessian(&x, &mut g, &mut h, false).unwrap();
    me.hessian(&x, &mut g, &mut hp, true).unwrap();
    assert_ne!(h, hp, "compressed springs must be projected");
    let mut s = 3;
    let mut min_unprojected = f64::INFINITY;
    for _ in 0..20 {
        let v: Vec<f64> = (0..n).map(|_| rnd(&mut s)).collect();
        let quad = |vals: &[f64]| {
            let mut y = vec![0.0; n];
            me.pattern().spmv(vals, &v, &mut y);
            v.iter().zip(&y).map(|(a, b)| a * b).sum::<f64>()
        };
        assert!(quad(&hp) >= -1e-10, "vᵀHv = {}", quad(&hp));
        min_unprojected = min_unprojected.min(quad(&h));
    }
    assert!(
        min_unprojected < 0.0,
        "the unprojected Hessian is indefinite here"
    );
}

#[test]
fn bad_host_data_is_an_error() {
    let prog = program();
    let mesh = load_mesh("grid:4x4").unwrap();
    let mut me = prog.bind(&mesh).unwrap();
    let n = me.ndofs();
    assert!(me.set_data("rest", &[1.0, 2.0]).is_err());
    assert!(me.set_data("nope", &[1.0]).is_err());
    assert!(me.set_param("nope", 1.0).is_err());
    assert!(me.energy(&vec![0.0; n - 1]).is_err());
    let mut g = vec![0.0; n + 1];
    assert!(me.gradient(&vec![0.0; n], &mut g).is_err());
    let mut g = vec![0.0; n];
    let mut h = vec![0.0; 3];
    assert!(me.hessian(&vec![0.0; n], &mut g, &mut h, false).is_err());
    let mut out = vec![0.0; n];
    assert!(me.hvp(&vec![0.0; n], &[0.0; 2], &mut out).is_err());
}

#[test]
fn missing_data_without_a_default_is_an_error() {
    let prog = EnergyProgram::compile_str(
        "m.mad",
        "dof x: vertex -> vec3; data w: face -> vec2; energy e(f: face) { w[f].x * dot(x[f.v0], x[f.v1]) }",
    )
    .unwrap();
    let mesh = load_mesh("grid:3x3").unwrap();
    let mut me = prog.bind(&mesh).unwrap();
    let x = me.default_x();
    let err = me.energy(&x).unwrap_err().to_string();
    assert!(err.contains("data `w`"), "{err}");
    let nf = mesh.triangles.len();
    me.set_data("w", &vec![1.0; 2 * nf]).unwrap();
    assert!(me.energy(&x).is_ok());
}

#[test]
fn every_workload_of_the_spring_has_a_batched_loop() {
    let prog = program();
    let kinds: Vec<_> = prog.batch_specs().iter().map(|s| s.kind).collect();
    use mad::codegen::element_loop::BatchKind as K;
    // The Hessian loop twice: over the full k×k slot table and over the
    // compact one (one slot per row and vertex: runs of 3 columns); the
    // block-buffer loop of projected Hessians last.
    assert_eq!(
        kinds,
        vec![K::Value, K::Grad, K::Hess, K::Hess, K::Hvp, K::HessBlock]
    );
    assert_eq!(prog.batch_specs()[3].runs, vec![3, 3]);
}

/// The batched loops against the element-by-element kernel calls: the same
/// energy, gradient and HVP bits, Hessian values to 1e-12 relative (the batched
/// loop mirrors the upper triangle), and both against the closed form.
#[test]
fn batched_loops_match_the_element_path_and_the_closed_form() {
    let prog = program();
    let mesh = load_mesh("grid:30x30").unwrap();
    let topo = Topology::new(&mesh).unwrap();
    let mut me = prog.bind(&mesh).unwrap();
    me.set_param("k", 1.7).unwrap();
    let mut s = 23;
    let rest: Vec<f64> = (0..topo.edges.len())
        .map(|_| 0.04 + 0.01 * rnd(&mut s))
        .collect();
    me.set_data("rest", &rest).unwrap();
    let x: Vec<f64> = me
        .default_x()
        .iter()
        .map(|v| v + 0.01 * rnd(&mut s))
        .collect();
    let v: Vec<f64> = (0..me.ndofs()).map(|_| rnd(&mut s)).collect();
    let n = me.ndofs();
    let mut run = |batched: bool| {
        me.set_batched(batched);
        let e = me.energy(&x).unwrap();
        let mut g1 = vec![0.0; n];
        let e1 = me.gradient(&x, &mut g1).unwrap();
        let (mut g, mut h) = (vec![0.0; n], vec![0.0; me.nnz()]);
        let e2 = me.hessian(&x, &mut g, &mut h, false).unwrap();
        let mut hv = vec![0.0; n];
        me.hvp(&x, &v, &mut hv).unwrap();
        (e, e1, e2, g1, g, h, hv)
    };
    let old = run(false);
    let new = run(true);
    assert_eq!(old.0.to_bits(), new.0.to_bits());
    assert_eq!(old.1.to_bits(), new.1.to_bits());
    assert_eq!(old.2.to_bits(), new.2.to_bits());
    assert_eq!(old.3, new.3);
    assert_eq!(old.4, new.4);
    assert_eq!(old.6, new.6);
    let hs = old.5.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for (i, (a, b)) in old.5.iter().zip(&new.5).enumerate() {
        assert!((a - b).abs() <= 1e-12 * hs, "H value {i}: {a} vs {b}");
    }
    let (e_ref, g_ref, h_ref) = closed_form(&topo, &rest, 1.7, &x);
    assert!((new.2 - e_ref).abs() <= 1e-12 * e_ref.abs());
    let gs = g_ref.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(
        new.4
            .iter()
            .zip(&g_ref)
            .all(|(a, b)| (a - b).abs() <= 1e-12 * gs)
    );
    let p = me.pattern();
    let hs = h_ref.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
    for r in 0..n {
        for kk in p.row_ptr[r]..p.row_ptr[r + 1] {
            let c = p.col_idx[kk] as usize;
            assert!((new.5[kk] - h_ref[r][c]).abs() <= 1e-12 * hs, "H[{r}][{c}]");
        }
    }
}

#[test]
fn batched_loops_are_bit_identical_for_1_to_4_threads() {
    let prog = program();
    let mesh = load_mesh("grid:90x90").unwrap();
    let mut me = prog.bind(&mesh).unwrap();
    let mut s = 9;
    let x: Vec<f64> = me
        .default_x()
        .iter()
        .map(|v| v + 0.01 * rnd(&mut s))
        .collect();
    let v: Vec<f64> = (0..me.ndofs()).map(|_| rnd(&mut s)).collect();
    let bits = |a: &[f64]| a.iter().map(|f| f.to_bits()).collect::<Vec<u64>>();
    let mut results = Vec::new();
    for threads in [1, 2, 3, 4] {
        me.set_threads(threads).unwrap();
        // Every colour of two chunks or more on the workers, however small the mesh.
        me.set_min_parallel_work(0);
        let (mut g, mut h, mut hv) = (
            vec![0.0; me.ndofs()],
            vec![0.0; me.nnz()],
            vec![0.0; me.ndofs()],
        );
        let e = me.hessian(&x, &mut g, &mut h, false).unwrap();
        me.hvp(&x, &v, &mut hv).unwrap();
        let mut g2 = vec![0.0; me.ndofs()];
        let e2 = me.gradient(&x, &mut g2).unwrap();
        results.push((
            e.to_bits(),
            e2.to_bits(),
            me.energy(&x).unwrap().to_bits(),
            bits(&g),
            bits(&h),
            bits(&hv),
            bits(&g2),
        ));
    }
    for t in 1..4 {
        assert!(results[0] == results[t], "1 vs {} threads", t + 1);
    }
}

/// A weighted objective runs the scaling copy of the batched loops: the same
/// bits as the element path for energy, gradient and HVP, 3× the unweighted
/// Hessian to 1e-12 relative.
#[test]
fn weighted_objective_in_batched_loops() {
    let src = "dof x: vertex -> vec3;  data rest: edge -> f64;  param k: f64 = 1.5;
               energy spring(e: edge) { 0.5 * k * (norm(x[e.v0] - x[e.v1]) - rest[e])^2 }
               objective = 3 * spring;";
    let weighted = EnergyProgram::compile_str("weighted.mad", src).unwrap();
    let plain =
        EnergyProgram::compile_str("plain.mad", &src.replace("objective = 3 * spring;", ""))
            .unwrap();
    let mesh = load_mesh("grid:20x20").unwrap();
    let s = 31;
    let run = |prog: &EnergyProgram, batched: bool| {
        let mut me = prog.bind(&mesh).unwrap();
        me.set_batched(batched);
        let mut s2 = s;
        let x: Vec<f64> = me
            .default_x()
            .iter()
            .map(|v| 0.9 * v + 0.01 * rnd(&mut s2))
            .collect();
        let v: Vec<f64> = (0..me.ndofs()).map(|_| rnd(&mut s2)).collect();
        let (mut g, mut h, mut hv) = (
            vec![0.0; me.ndofs()],
            vec![0.0; me.nnz()],
            vec![0.0; me.ndofs()],
        );
        let e = me.hessian(&x, &mut g, &mut h, false).unwrap();
        me.hvp(&x, &v, &mut hv).unwrap();
        (e, g, h, hv)
    };
    let (wb, we, pb) = (
        run(&weighted, true),
        run(&weighted, false),
        run(&plain, true),
    );
    assert_eq!(wb.0.to_bits(), we.0.to_bits());
    assert_eq!(wb.1, we.1);
    assert_eq!(wb.3, we.3);
    let hs = pb.2.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for (a, b) in wb.2.iter().zip(&pb.2) {
        assert!((a - 3.0 * b).abs() <= 1e-12 * 3.0 * hs, "{a} vs 3·{b}");
    }
    assert!((wb.0 - 3.0 * pb.0).abs() <= 1e-12 * wb.0.abs());
}
