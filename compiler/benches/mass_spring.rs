//! Hand-written baseline for the mass-spring workload of `docs/benchmarks.md`:
//! closed-form energy, gradient and 6×6 Hessian blocks of E = ½k(|d| − L)² per
//! edge of `grid:NxN`, scattered into the same precomputed CSR slots that
//! `madc bench` uses, on one thread. Run with
//! `cargo bench -p mad --bench mass_spring -- 100 500 1000`.

use mad_runtime::mesh::{Stencil, Topology, load_mesh};
use mad_runtime::sparse::{Field, HessianPattern, element_dofs};
use std::time::Instant;

struct Problem {
    edges: Vec<[u32; 2]>,
    rest: Vec<f64>,
    slots: Vec<u32>,
    x: Vec<f64>,
    nnz: usize,
}

fn setup(n: usize) -> Problem {
    let mesh = load_mesh(&format!("grid:{n}x{n}")).expect("grid");
    let topo = Topology::new(&mesh).expect("topology");
    let verts = topo.elements(Stencil::Edge);
    let dofs = element_dofs(&verts, &[Field { offset: 0, dim: 3 }]);
    let pat = HessianPattern::build(3 * mesh.positions.len(), &[dofs]).expect("pattern");
    let p = &mesh.positions;
    let rest = topo
        .edges
        .iter()
        .map(|e| {
            let (a, b) = (p[e[0] as usize], p[e[1] as usize]);
            ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
        })
        .collect();
    let x = p
        .iter()
        .flat_map(|q| [q[0] * 1.01, q[1] * 0.99, q[2] + 0.001 * q[0]])
        .collect();
    Problem {
        edges: topo.edges.clone(),
        rest,
        slots: pat.terms[0].slots().indices().to_vec(),
        x,
        nnz: pat.csr.nnz(),
    }
}

/// Energy + gradient + Hessian values (the `hessian` workload).
#[inline(never)]
fn eval(p: &Problem, k: f64, g: &mut [f64], h: &mut [f64]) -> f64 {
    g.fill(0.0);
    h.fill(0.0);
    let mut e = 0.0;
    for (i, ed) in p.edges.iter().enumerate() {
        let (a, b) = (3 * ed[0] as usize, 3 * ed[1] as usize);
        let d = [
            p.x[a] - p.x[b],
            p.x[a + 1] - p.x[b + 1],
            p.x[a + 2] - p.x[b + 2],
        ];
        let len2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        let len = len2.sqrt();
        let l = p.rest[i];
        let s = k * (1.0 - l / len);
        e += 0.5 * k * (len - l) * (len - l);
        let c = k * l / (len * len2);
        let mut bl = [0.0; 9];
        for r in 0..3 {
            g[a + r] += s * d[r];
            g[b + r] -= s * d[r];
            for q in 0..3 {
                bl[3 * r + q] = c * d[r] * d[q] + if r == q { s } else { 0.0 };
            }
        }
        let sl = &p.slots[36 * i..36 * i + 36];
        for r in 0..6 {
            for q in 0..6 {
                let v = bl[3 * (r % 3) + q % 3];
                h[sl[6 * r + q] as usize] += if (r < 3) == (q < 3) { v } else { -v };
            }
        }
    }
    e
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![100, 500]
    } else {
        sizes
    };
    for n in sizes {
        let p = setup(n);
        let mut g = vec![0.0; p.x.len()];
        let mut h = vec![0.0; p.nnz];
        for _ in 0..3 {
            std::hint::black_box(eval(&p, 1.0, &mut g, &mut h));
        }
        let mut t = Vec::new();
        for _ in 0..20 {
            let t0 = Instant::now();
            std::hint::black_box(eval(&p, 1.0, &mut g, &mut h));
            t.push(t0.elapsed().as_secs_f64() * 1e3);
        }
        t.sort_by(f64::total_cmp);
        println!(
            "grid:{n}x{n} hand-written hessian: median {:.3} ms (min {:.3}, max {:.3})",
            (t[9] + t[10]) / 2.0,
            t[0],
            t[19]
        );
    }
}
