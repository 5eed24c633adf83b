//! Newton evaluates the gradient and the Hessian of an accepted point in one pass
//! (`Objective::value_grad_hessian`) from its third iteration on: the counts of each kind of
//! evaluation, and the same iterates as with separate passes.

mod solve_common;

use mad_runtime::solve::{Newton, Objective, SolveError, SolveOptions};
use mad_runtime::sparse::CsrPattern;
use solve_common::{Dense, rosenbrock};

/// Counts the objective's calls; with `fused`, answers `value_grad_hessian` in one call.
struct Counting {
    inner: Dense,
    fused: bool,
    value_grad: usize,
    hessian_values: usize,
    value_grad_hessian: usize,
}

impl Objective for Counting {
    fn num_dofs(&self) -> usize {
        self.inner.num_dofs()
    }
    fn value(&mut self, x: &[f64]) -> Result<f64, SolveError> {
        self.inner.value(x)
    }
    fn value_grad(&mut self, x: &[f64], grad: &mut [f64]) -> Result<f64, SolveError> {
        self.value_grad += 1;
        self.inner.value_grad(x, grad)
    }
    fn hessian_pattern(&self) -> Option<&CsrPattern> {
        self.inner.hessian_pattern()
    }
    fn hessian_values(&mut self, x: &[f64], psd: bool, v: &mut [f64]) -> Result<(), SolveError> {
        self.hessian_values += 1;
        self.inner.hessian_values(x, psd, v)
    }
    fn value_grad_hessian(
        &mut self,
        x: &[f64],
        grad: &mut [f64],
        _psd: bool,
        values: &mut Vec<f64>,
    ) -> Result<f64, SolveError> {
        if !self.fused {
            // The trait's default: separate passes.
            let f = self.value_grad(x, grad)?;
            values.clear();
            values.resize(self.inner.pattern.nnz(), 0.0);
            self.hessian_values(x, false, values)?;
            return Ok(f);
        }
        self.value_grad_hessian += 1;
        values.clear();
        values.resize(self.inner.pattern.nnz(), 0.0);
        Ok((self.inner.f)(x, Some(grad), Some(values)))
    }
}

fn solve(fused: bool) -> (Counting, Vec<f64>, Vec<(u64, u64)>) {
    let mut obj = Counting {
        inner: rosenbrock(6),
        fused,
        value_grad: 0,
        hessian_values: 0,
        value_grad_hessian: 0,
    };
    let mut x = vec![-1.2, 1.0, -1.2, 1.0, -1.2, 1.0];
    let opts = SolveOptions {
        max_iters: 200,
        ..SolveOptions::default()
    };
    let report = Newton::new().solve(&mut obj, &mut x, &opts, None).unwrap();
    let trace = report
        .history
        .iter()
        .map(|r| (r.energy.to_bits(), r.grad_norm.to_bits()))
        .collect();
    (obj, x, trace)
}

#[test]
fn from_the_third_iteration_the_hessian_comes_with_the_gradient() {
    let (fused, x, trace) = solve(true);
    let n = trace.len();
    assert!(n >= 6, "Rosenbrock from (-1.2, 1) takes more than five Newton steps: {n}");
    let g_end = f64::from_bits(trace[n - 1].1);
    assert!(g_end < 1e-6, "converges to a stationary point: ‖g‖ = {g_end}");
    // The start and the accepted points of iterations 1 and 2: gradient passes; the
    // directions of iterations 1–3: Hessian passes; the accepted points of iterations
    // 3..=n: one pass for both, whose Hessian serves the next direction.
    assert_eq!(fused.value_grad, 3);
    assert_eq!(fused.hessian_values, 3);
    assert_eq!(fused.value_grad_hessian, n - 2);

    // Separate passes (the default method) give the same iterates, bit for bit.
    let (plain, xp, tp) = solve(false);
    assert_eq!(trace, tp);
    assert_eq!(
        x.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        xp.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
    // Gradients at the start and at every accepted point; a Hessian for every direction
    // plus the one that came with the last point's gradient.
    assert_eq!(plain.value_grad, n + 1);
    assert_eq!(plain.hessian_values, n + 1);
}
