//! `Objective::max_step` caps the first trial step of every line search: an energy that is
//! finite on both sides of a forbidden interval is not crossed when the objective says how
//! far it may go, and is crossed by a plain line search.

use mad_runtime::solve::{Objective, SolveError, SolveOptions, Solver};

/// f(x) = (x − 10)², +∞ on the "obstacle" 4 < x < 6; with `guard`, a step may close at most
/// 90% of the distance to x = 4.
struct Wall {
    guard: bool,
    path: Vec<f64>,
}

impl Objective for Wall {
    fn num_dofs(&self) -> usize {
        1
    }
    fn value(&mut self, x: &[f64]) -> Result<f64, SolveError> {
        Ok(if x[0] > 4.0 && x[0] < 6.0 {
            f64::INFINITY
        } else {
            (x[0] - 10.0).powi(2)
        })
    }
    fn value_grad(&mut self, x: &[f64], g: &mut [f64]) -> Result<f64, SolveError> {
        self.path.push(x[0]);
        g[0] += 2.0 * (x[0] - 10.0);
        self.value(x)
    }
    fn max_step(&mut self, x: &[f64], d: &[f64], t0: f64) -> Result<f64, SolveError> {
        if !self.guard || d[0] <= 0.0 || x[0] >= 4.0 {
            return Ok(t0);
        }
        Ok(t0.min(0.9 * (4.0 - x[0]) / d[0]))
    }
}

#[test]
fn the_cap_keeps_every_iterate_before_the_obstacle() {
    for name in ["gd", "lbfgs"] {
        let opts = SolveOptions {
            max_iters: 30,
            ..SolveOptions::default()
        };
        let mut free = Wall {
            guard: false,
            path: Vec::new(),
        };
        let mut x = vec![0.0];
        Solver::from_name(name)
            .unwrap()
            .solve(&mut free, &mut x, &opts, None)
            .unwrap();
        assert!(
            x[0] > 6.0,
            "{name}: an unguarded search jumps the obstacle (x = {})",
            x[0]
        );

        let mut guarded = Wall {
            guard: true,
            path: Vec::new(),
        };
        let mut x = vec![0.0];
        Solver::from_name(name)
            .unwrap()
            .solve(&mut guarded, &mut x, &opts, None)
            .unwrap();
        assert!(
            guarded.path.iter().all(|&p| p < 4.0),
            "{name}: {:?}",
            guarded.path
        );
        assert!(
            x[0] > 3.9,
            "{name}: it still approaches the obstacle (x = {})",
            x[0]
        );
    }
}
