//! Batched loops over pairs of elements (one per lane of 2×f64 vectors): each lane must
//! compute the bits of the one-element code. Terms with per-lane `if`s (both lanes near a
//! barrier, both far, one of each), `&&`, math routines called per lane, `min`/`max`, and
//! uniform `f64` and `i64` params, on meshes whose element counts are odd and even, are
//! evaluated by the batched loops and by the element-by-element path: energy, gradient and
//! Hessian-vector product agree to the bit, the Hessian to rounding.

use mad::energy::{EnergyProgram, MeshEnergy};
use mad_runtime::mesh::load_mesh;

use crate::cli_common;
use cli_common::madc;

const SOURCE: &str = "
dof x: vertex -> vec2;
data w: face -> f64;
param k: f64 = 2.0;
param n: i64 = 3;

energy barrier(f: face) {
    let a = x[f.v1] - x[f.v0];
    let b = x[f.v2] - x[f.v0];
    let d = a.x * b.y - a.y * b.x;
    let s = w[f] * k;
    if d < 0.02 * s {
        (d - 0.02 * s)^2 * (exp(-d) - log(d + 1.0))
    } else {
        s * (dot(a, a) + dot(b, b)) * 1e-3
    }
}

energy springs(e: edge) {
    let l = norm(x[e.v1] - x[e.v0]);
    max(l, 0.12) * (n as f64) + min(atan(l), 0.1) * l
}

energy corner(v: vertex) {
    let p = x[v.v0];
    if p.x > 0.5 && p.y < 0.3 { p.x * p.y * p.y } else { 0.0 }
}
";

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
    hv: Vec<f64>,
}

fn evaluate(me: &mut MeshEnergy<'_>, batched: bool, x: &[f64], v: &[f64]) -> Eval {
    me.set_batched(batched);
    let n = me.ndofs();
    let (mut g, mut h, mut hv) = (vec![0.0; n], vec![0.0; me.nnz()], vec![0.0; n]);
    let e = me.hessian(x, &mut g, &mut h, false).unwrap();
    me.hvp(x, v, &mut hv).unwrap();
    let mut g2 = vec![0.0; n];
    let e2 = me.gradient(x, &mut g2).unwrap();
    assert_eq!(e.to_bits(), e2.to_bits());
    assert!(g.iter().zip(&g2).all(|(a, b)| a.to_bits() == b.to_bits()));
    Eval { e, g, h, hv }
}

#[test]
fn every_batched_loop_of_the_program_runs_pairs() {
    let dir = std::env::temp_dir().join(format!("mad-jit-pairs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("pairs.mad");
    std::fs::write(&path, SOURCE).unwrap();
    let (rc, out, err) = madc(&["emit", "clif", path.to_str().unwrap()]);
    assert_eq!(rc, 0, "{err}");
    let loops: Vec<&str> = out.split("; batched ").skip(1).collect();
    assert!(loops.len() >= 9, "{} batched loops", loops.len());
    for l in loops {
        let head = l.lines().next().unwrap_or("");
        assert!(l.contains("f64x2"), "the loop {head} does not run pairs");
    }
}

#[test]
fn pairs_give_the_bits_of_the_element_path() {
    let prog = EnergyProgram::compile_str("pairs.mad", SOURCE).unwrap();
    // Faces 2·4·5 = 40 and 2·5·6 = 60, edges 49 and 71, vertices 30 and 42.
    for spec in ["grid:5x6", "grid:6x7"] {
        let mesh = load_mesh(spec).unwrap();
        let mut me = prog.bind(&mesh).unwrap();
        let nf = mesh.num_faces();
        let mut seed = 17;
        let w: Vec<f64> = (0..nf).map(|_| 1.0 + 0.5 * rnd(&mut seed)).collect();
        me.set_data("w", &w).unwrap();
        let x0 = me.default_x();
        for trial in 0..4 {
            // Jitter moves some triangles inside the barrier's band and some outside, so
            // neighbouring faces take the same branch or different ones.
            let amp = [0.0, 0.02, 0.05, 0.1][trial];
            let x: Vec<f64> = x0.iter().map(|&p| p + amp * rnd(&mut seed)).collect();
            let v: Vec<f64> = (0..x.len()).map(|_| rnd(&mut seed)).collect();
            let a = evaluate(&mut me, false, &x, &v);
            let b = evaluate(&mut me, true, &x, &v);
            assert!(a.e.is_finite(), "{spec} trial {trial}");
            assert_eq!(a.e.to_bits(), b.e.to_bits(), "{spec} trial {trial}: energy");
            for (i, (p, q)) in a.g.iter().zip(&b.g).enumerate() {
                assert_eq!(
                    p.to_bits(),
                    q.to_bits(),
                    "{spec} trial {trial}: gradient {i}"
                );
            }
            for (i, (p, q)) in a.hv.iter().zip(&b.hv).enumerate() {
                assert_eq!(p.to_bits(), q.to_bits(), "{spec} trial {trial}: H·v {i}");
            }
            let hs = a.h.iter().fold(0.0f64, |m, h| m.max(h.abs()));
            for (i, (p, q)) in a.h.iter().zip(&b.h).enumerate() {
                assert!(
                    (p - q).abs() <= 1e-13 * hs,
                    "{spec} trial {trial}: H {i}: {p} vs {q}"
                );
            }
        }
    }
}
