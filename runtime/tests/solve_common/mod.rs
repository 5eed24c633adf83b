//! Shared helpers of the solver tests: a dense objective built from a closure, all solvers by
//! name, and a dense linear solve used as an independent reference.
#![allow(dead_code)]

use mad_runtime::solve::{Objective, SolveError, Solver};
use mad_runtime::sparse::CsrPattern;

/// `f(x, grad, hess)`: the energy; adds the gradient and the dense row-major Hessian when asked.
pub type DenseFn = dyn FnMut(&[f64], Option<&mut [f64]>, Option<&mut [f64]>) -> f64;

/// An objective with a dense Hessian stored in a full CSR pattern (row-major order).
pub struct Dense {
    pub n: usize,
    pub pattern: CsrPattern,
    pub f: Box<DenseFn>,
    pub evaluations: usize,
}

impl Dense {
    pub fn new(
        n: usize,
        f: impl FnMut(&[f64], Option<&mut [f64]>, Option<&mut [f64]>) -> f64 + 'static,
    ) -> Dense {
        let pattern = CsrPattern::from_entries(
            n,
            (0..n as u32).flat_map(|r| (0..n as u32).map(move |c| (r, c))),
        );
        Dense {
            n,
            pattern,
            f: Box::new(f),
            evaluations: 0,
        }
    }
}

impl Objective for Dense {
    fn num_dofs(&self) -> usize {
        self.n
    }
    fn value(&mut self, x: &[f64]) -> Result<f64, SolveError> {
        self.evaluations += 1;
        Ok((self.f)(x, None, None))
    }
    fn value_grad(&mut self, x: &[f64], grad: &mut [f64]) -> Result<f64, SolveError> {
        self.evaluations += 1;
        Ok((self.f)(x, Some(grad), None))
    }
    fn hessian_pattern(&self) -> Option<&CsrPattern> {
        Some(&self.pattern)
    }
    fn hessian_values(
        &mut self,
        x: &[f64],
        _psd: bool,
        values: &mut [f64],
    ) -> Result<(), SolveError> {
        let mut g = vec![0.0; self.n];
        (self.f)(x, Some(&mut g), Some(values));
        Ok(())
    }
    fn hvp(&mut self, x: &[f64], v: &[f64], out: &mut [f64]) -> Result<(), SolveError> {
        let n = self.n;
        let mut g = vec![0.0; n];
        let mut h = vec![0.0; n * n];
        (self.f)(x, Some(&mut g), Some(&mut h));
        for r in 0..n {
            out[r] += (0..n).map(|c| h[r * n + c] * v[c]).sum::<f64>();
        }
        Ok(())
    }
}

/// The solvers that minimize a general objective (Gauss-Newton needs residuals).
pub const GENERAL: [&str; 4] = ["newton", "newton-cg", "lbfgs", "gd"];

pub fn solver(name: &str) -> Solver {
    Solver::from_name(name).expect("known solver")
}

/// Solves the dense system `a x = b` by Gaussian elimination with partial pivoting.
pub fn dense_solve(n: usize, a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut m: Vec<Vec<f64>> = (0..n)
        .map(|r| {
            let mut row = a[r * n..(r + 1) * n].to_vec();
            row.push(b[r]);
            row
        })
        .collect();
    for c in 0..n {
        let p = (c..n)
            .max_by(|&i, &j| m[i][c].abs().total_cmp(&m[j][c].abs()))
            .unwrap();
        m.swap(c, p);
        let pivot = m[c].clone();
        for row in m.iter_mut().skip(c + 1) {
            let f = row[c] / pivot[c];
            for (a, p) in row.iter_mut().zip(&pivot).skip(c) {
                *a -= f * p;
            }
        }
    }
    let mut x = vec![0.0; n];
    for r in (0..n).rev() {
        let s: f64 = (r + 1..n).map(|k| m[r][k] * x[k]).sum();
        x[r] = (m[r][n] - s) / m[r][r];
    }
    x
}

/// The n-D chained Rosenbrock function `Σ 100(x_{i+1} − x_i²)² + (1 − x_i)²`.
pub fn rosenbrock(n: usize) -> Dense {
    Dense::new(n, move |x, g, h| {
        let mut f = 0.0;
        let mut g = g;
        let mut h = h;
        for i in 0..n - 1 {
            let (a, b) = (x[i + 1] - x[i] * x[i], 1.0 - x[i]);
            f += 100.0 * a * a + b * b;
            if let Some(g) = g.as_deref_mut() {
                g[i] += -400.0 * a * x[i] - 2.0 * b;
                g[i + 1] += 200.0 * a;
            }
            if let Some(h) = h.as_deref_mut() {
                h[i * n + i] += 1200.0 * x[i] * x[i] - 400.0 * x[i + 1] + 2.0;
                h[i * n + i + 1] += -400.0 * x[i];
                h[(i + 1) * n + i] += -400.0 * x[i];
                h[(i + 1) * n + i + 1] += 200.0;
            }
        }
        f
    })
}
