//! Newton reuses its numeric factorization while the shifted Hessian values are unchanged bit
//! for bit, and refactors when they change.

use crate::solve_common;

use mad_runtime::solve::{Newton, SolveOptions};
use solve_common::{Dense, dense_solve, rosenbrock};

const N: usize = 6;

/// A fixed SPD matrix: tridiagonal 4 on the diagonal, −1 next to it.
fn a(r: usize, c: usize) -> f64 {
    if r == c { 4.0 } else if r.abs_diff(c) == 1 { -1.0 } else { 0.0 }
}

/// ½xᵀAx − bᵀx + ε Σ sin(x_i) with the constant matrix A reported as the Hessian (a model
/// Hessian like ARAP's global matrix): the iteration converges linearly over many steps, each
/// with the same Hessian values.
fn constant_model_hessian() -> Dense {
    Dense::new(N, |x, mut g, h| {
        let b: Vec<f64> = (0..N).map(|i| 1.0 + i as f64).collect();
        let mut e = 0.0;
        for r in 0..N {
            let ax: f64 = (0..N).map(|c| a(r, c) * x[c]).sum();
            e += 0.5 * x[r] * ax - b[r] * x[r] + 0.3 * x[r].sin();
            if let Some(g) = g.as_deref_mut() {
                g[r] += ax - b[r] + 0.3 * x[r].cos();
            }
        }
        if let Some(h) = h {
            for r in 0..N {
                for c in 0..N {
                    h[r * N + c] += a(r, c);
                }
            }
        }
        e
    })
}

#[test]
fn constant_hessian_is_factored_once() {
    let mut obj = constant_model_hessian();
    let mut x = vec![0.0; N];
    let mut newton = Newton::new();
    let rep = newton.solve(&mut obj, &mut x, &SolveOptions::default(), None).unwrap();
    assert!(rep.status.converged(), "{:?}", rep.status);
    assert!(rep.iterations >= 4, "{} iterations", rep.iterations);
    assert_eq!(newton.numeric_factorizations(), 1);
    // The fixed point: A x = b − 0.3 cos(x), checked by a dense solve at the result.
    let b: Vec<f64> = (0..N).map(|i| 1.0 + i as f64 - 0.3 * x[i].cos()).collect();
    let dense: Vec<f64> = (0..N * N).map(|k| a(k / N, k % N)).collect();
    let want = dense_solve(N, &dense, &b);
    for (g, w) in x.iter().zip(&want) {
        assert!((g - w).abs() < 1e-8, "{g} vs {w}");
    }
}

#[test]
fn changing_hessian_is_refactored_every_iteration() {
    let mut obj = rosenbrock(4);
    let mut x = vec![-1.2, 1.0, -1.2, 1.0];
    let mut newton = Newton::new();
    let rep = newton.solve(&mut obj, &mut x, &SolveOptions::default(), None).unwrap();
    assert!(rep.status.converged());
    assert!(newton.numeric_factorizations() >= rep.iterations, "{} < {}", newton.numeric_factorizations(), rep.iterations);
}
