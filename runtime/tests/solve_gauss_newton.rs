//! Gauss-Newton (assembled and matrix-free) on a nonlinear least-squares fit with known
//! parameters: y = a·exp(−b·t) + c·sin(d·t) sampled without noise.

use crate::solve_common;

use mad_runtime::solve::{
    GaussNewton, GaussNewtonLinear, JacobianPattern, Objective, SolveError, SolveOptions, Status,
};

const TRUE: [f64; 4] = [2.0, 0.7, 0.5, 1.3];

struct Fit {
    t: Vec<f64>,
    y: Vec<f64>,
    pattern: JacobianPattern,
}

impl Fit {
    fn new() -> Fit {
        let t: Vec<f64> = (0..40).map(|i| i as f64 * 0.15).collect();
        let y = t.iter().map(|&t| model(&TRUE, t).0).collect();
        let pattern = JacobianPattern::from_entries(
            t.len(),
            4,
            (0..t.len() as u32).flat_map(|r| (0..4).map(move |c| (r, c))),
        );
        Fit { t, y, pattern }
    }
}

fn model(p: &[f64], t: f64) -> (f64, [f64; 4]) {
    let e = (-p[1] * t).exp();
    let (s, c) = (p[3] * t).sin_cos();
    (p[0] * e + p[2] * s, [e, -p[0] * t * e, s, p[2] * t * c])
}

impl Objective for Fit {
    fn num_dofs(&self) -> usize {
        4
    }
    fn value(&mut self, x: &[f64]) -> Result<f64, SolveError> {
        let mut r = vec![0.0; self.t.len()];
        self.residuals(x, &mut r)?;
        Ok(0.5 * r.iter().map(|v| v * v).sum::<f64>())
    }
    fn value_grad(&mut self, x: &[f64], g: &mut [f64]) -> Result<f64, SolveError> {
        let mut f = 0.0;
        for (&t, &y) in self.t.iter().zip(&self.y) {
            let (m, d) = model(x, t);
            f += 0.5 * (m - y) * (m - y);
            for k in 0..4 {
                g[k] += (m - y) * d[k];
            }
        }
        Ok(f)
    }
    fn jacobian_pattern(&self) -> Option<&JacobianPattern> {
        Some(&self.pattern)
    }
    fn residuals(&mut self, x: &[f64], r: &mut [f64]) -> Result<(), SolveError> {
        for ((ri, &t), &y) in r.iter_mut().zip(&self.t).zip(&self.y) {
            *ri = model(x, t).0 - y;
        }
        Ok(())
    }
    fn residuals_jacobian(
        &mut self,
        x: &[f64],
        r: &mut [f64],
        jac: &mut [f64],
    ) -> Result<(), SolveError> {
        for (i, (&t, &y)) in self.t.iter().zip(&self.y).enumerate() {
            let (m, d) = model(x, t);
            r[i] = m - y;
            jac[4 * i..4 * i + 4].copy_from_slice(&d);
        }
        Ok(())
    }
}

#[test]
fn gauss_newton_recovers_known_parameters() {
    for linear in [
        GaussNewtonLinear::Assembled,
        GaussNewtonLinear::MatrixFree(Default::default()),
    ] {
        let mut fit = Fit::new();
        let mut x = vec![1.5, 0.5, 0.8, 1.2];
        let opts = SolveOptions {
            grad_abs_tol: 1e-10,
            max_iters: 50,
            ..Default::default()
        };
        let rep = GaussNewton::new(linear)
            .solve(&mut fit, &mut x, &opts, None)
            .unwrap();
        assert_eq!(rep.status, Status::GradientTolerance, "{linear:?}");
        for k in 0..4 {
            assert!((x[k] - TRUE[k]).abs() < 1e-8, "{linear:?}: {x:?}");
        }
        // A zero-residual problem: Gauss-Newton converges fast (measured: 5 assembled, 7 matrix-free).
        eprintln!("{linear:?}: {} iterations", rep.iterations);
        assert!(
            rep.iterations <= 12,
            "{linear:?}: {} iterations",
            rep.iterations
        );
        assert!(rep.energy < 1e-20);
    }
}

#[test]
fn gauss_newton_with_a_fixed_parameter() {
    let mut fit = Fit::new();
    let mut x = vec![1.5, 0.5, 0.8, TRUE[3]];
    let opts = SolveOptions {
        fixed: Some(vec![false, false, false, true]),
        ..Default::default()
    };
    let rep = GaussNewton::default()
        .solve(&mut fit, &mut x, &opts, None)
        .unwrap();
    assert!(rep.status.converged());
    assert_eq!(x[3], TRUE[3]);
    for k in 0..3 {
        assert!((x[k] - TRUE[k]).abs() < 1e-7, "{x:?}");
    }
}

#[test]
fn gauss_newton_needs_residuals() {
    let mut obj = solve_common::rosenbrock(2);
    let res =
        GaussNewton::default().solve(&mut obj, &mut [0.0, 0.0], &SolveOptions::default(), None);
    assert!(matches!(res, Err(SolveError::Unsupported(_))));
}
