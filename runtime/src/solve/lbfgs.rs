//! L-BFGS: the two-loop recursion over the last `memory` pairs (s, y), initial Hessian scaled by
//! `sᵀy / yᵀy`. Pairs with `sᵀy ≤ 1e-10·‖s‖‖y‖` (no positive curvature) are skipped, keeping the
//! implicit inverse Hessian positive definite. The first step is scaled to length 1.

use super::driver::{Callback, Ctx, DirectionInfo, Method, dot, norm, run};
use super::{Objective, SolveError, SolveOptions, SolveReport, Timings};
use std::collections::VecDeque;
use std::time::Instant;

/// L-BFGS (see the module docs).
pub struct Lbfgs {
    pub memory: usize,
    pairs: VecDeque<(Vec<f64>, Vec<f64>, f64)>,
}

impl Default for Lbfgs {
    fn default() -> Self {
        Lbfgs::new(10)
    }
}

impl Lbfgs {
    pub fn new(memory: usize) -> Lbfgs {
        Lbfgs {
            memory: memory.max(1),
            pairs: VecDeque::new(),
        }
    }

    /// Minimizes `obj` from `x` (updated in place). The memory is cleared first.
    pub fn solve<O: Objective + ?Sized>(
        &mut self,
        obj: &mut O,
        x: &mut [f64],
        opts: &SolveOptions,
        callback: Option<Callback>,
    ) -> Result<SolveReport, SolveError> {
        self.pairs.clear();
        run(self, obj, x, opts, callback)
    }
}

impl<O: Objective + ?Sized> Method<O> for Lbfgs {
    fn direction(
        &mut self,
        _obj: &mut O,
        _ctx: &Ctx,
        _x: &[f64],
        g: &[f64],
        d: &mut [f64],
        t: &mut Timings,
    ) -> Result<DirectionInfo, SolveError> {
        let start = Instant::now();
        let mut q: Vec<f64> = g.to_vec();
        let mut alphas = Vec::with_capacity(self.pairs.len());
        for (s, y, rho) in self.pairs.iter().rev() {
            let a = rho * dot(s, &q);
            for (qi, yi) in q.iter_mut().zip(y) {
                *qi -= a * yi;
            }
            alphas.push(a);
        }
        if let Some((s, y, _)) = self.pairs.back() {
            let gamma = dot(s, y) / dot(y, y);
            for qi in q.iter_mut() {
                *qi *= gamma;
            }
        }
        for ((s, y, rho), a) in self.pairs.iter().zip(alphas.iter().rev()) {
            let b = rho * dot(y, &q);
            for (qi, si) in q.iter_mut().zip(s) {
                *qi += (a - b) * si;
            }
        }
        for (di, qi) in d.iter_mut().zip(&q) {
            *di = -qi;
        }
        t.linear_solve += start.elapsed();
        Ok(DirectionInfo::default())
    }

    fn initial_step(&mut self, _g: &[f64], d: &[f64]) -> f64 {
        if self.pairs.is_empty() {
            1.0 / norm(d).max(1.0)
        } else {
            1.0
        }
    }

    fn restart(&mut self) {
        self.pairs.clear();
    }

    fn accepted(&mut self, s: &[f64], y: &[f64], _step: f64) {
        let sy = dot(s, y);
        if sy > 1e-10 * norm(s) * norm(y) && sy > 0.0 {
            if self.pairs.len() == self.memory {
                self.pairs.pop_front();
            }
            self.pairs.push_back((s.to_vec(), y.to_vec(), 1.0 / sy));
        }
    }
}
