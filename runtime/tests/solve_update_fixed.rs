//! `Objective::update` and fixed dofs: an update that moves every dof (a `dof` field's
//! `update` in a mesh program) leaves the fixed ones where they started, with every solver
//! that runs on the shared driver (Levenberg–Marquardt holds them the same way).

use mad_runtime::solve::{Objective, SolveError, SolveOptions, Solver};
use mad_runtime::sparse::CsrPattern;

/// E(x) = ½ Σ (x_i − 3)², and an update that shifts every dof by 0.5 at its first two calls.
struct Shifted {
    pattern: CsrPattern,
    updates: usize,
}

impl Objective for Shifted {
    fn num_dofs(&self) -> usize {
        self.pattern.n
    }
    fn value(&mut self, x: &[f64]) -> Result<f64, SolveError> {
        Ok(0.5 * x.iter().map(|v| (v - 3.0) * (v - 3.0)).sum::<f64>())
    }
    fn value_grad(&mut self, x: &[f64], g: &mut [f64]) -> Result<f64, SolveError> {
        for (gi, xi) in g.iter_mut().zip(x) {
            *gi += xi - 3.0;
        }
        self.value(x)
    }
    fn hessian_pattern(&self) -> Option<&CsrPattern> {
        Some(&self.pattern)
    }
    fn hessian_values(&mut self, _x: &[f64], _p: bool, v: &mut [f64]) -> Result<(), SolveError> {
        v.iter_mut().for_each(|a| *a += 1.0);
        Ok(())
    }
    fn update(&mut self, x: &mut [f64]) -> Result<bool, SolveError> {
        if self.updates >= 2 {
            return Ok(false);
        }
        self.updates += 1;
        x.iter_mut().for_each(|v| *v += 0.5);
        Ok(true)
    }
}

#[test]
fn updates_do_not_move_fixed_dofs() {
    for name in ["newton", "newton-cg", "lbfgs", "gd"] {
        let n = 4;
        let mut obj = Shifted { pattern: CsrPattern::from_entries(n, (0..n as u32).map(|i| (i, i))), updates: 0 };
        let mut x = vec![0.0, 1.0, 2.0, 10.0];
        let opts = SolveOptions {
            fixed: Some(vec![false, true, false, true]),
            grad_abs_tol: 1e-10,
            ..Default::default()
        };
        let mut solver = Solver::from_name(name).unwrap();
        solver.solve(&mut obj, &mut x, &opts, None).unwrap();
        assert_eq!(obj.updates, 2, "{name}: the updates ran");
        assert_eq!((x[1], x[3]), (1.0, 10.0), "{name}: fixed dofs moved: {x:?}");
        assert!((x[0] - 3.0).abs() < 1e-8 && (x[2] - 3.0).abs() < 1e-8, "{name}: {x:?}");
    }
}
