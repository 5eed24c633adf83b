//! Gradient descent: `d = −g` with the Armijo line search. The first trial step is the
//! Barzilai-Borwein length `sᵀs / sᵀy` of the previous step when that is positive, else the one
//! giving a step of length 1 (the line search still enforces monotone decrease). With
//! [`GradientDescent::step`] set, every iteration first tries that fixed step `λ` (`x ← x − λ∇E`,
//! the classic smoothing iteration), backtracking only if it does not decrease the energy.

use super::driver::{Callback, Ctx, DirectionInfo, Method, dot, norm, run};
use super::{Objective, SolveError, SolveOptions, SolveReport, Timings};

/// Gradient descent (see the module docs).
#[derive(Default)]
pub struct GradientDescent {
    /// A fixed first trial step `λ` (instead of Barzilai-Borwein).
    pub step: Option<f64>,
    bb_step: Option<f64>,
}

impl GradientDescent {
    pub fn new() -> GradientDescent {
        GradientDescent::default()
    }

    /// Minimizes `obj` from `x` (updated in place).
    pub fn solve<O: Objective + ?Sized>(
        &mut self,
        obj: &mut O,
        x: &mut [f64],
        opts: &SolveOptions,
        callback: Option<Callback>,
    ) -> Result<SolveReport, SolveError> {
        self.bb_step = None;
        run(self, obj, x, opts, callback)
    }
}

impl<O: Objective + ?Sized> Method<O> for GradientDescent {
    fn direction(
        &mut self,
        _obj: &mut O,
        _ctx: &Ctx,
        _x: &[f64],
        g: &[f64],
        d: &mut [f64],
        _t: &mut Timings,
    ) -> Result<DirectionInfo, SolveError> {
        for (di, gi) in d.iter_mut().zip(g) {
            *di = -gi;
        }
        Ok(DirectionInfo::default())
    }

    fn initial_step(&mut self, _g: &[f64], d: &[f64]) -> f64 {
        self.step
            .or(self.bb_step)
            .unwrap_or_else(|| 1.0 / norm(d).max(1.0))
    }

    fn restart(&mut self) {
        self.bb_step = None;
    }

    fn accepted(&mut self, s: &[f64], y: &[f64], _step: f64) {
        let sy = dot(s, y);
        self.bb_step = (sy > 0.0).then(|| dot(s, s) / sy).filter(|v| v.is_finite());
    }
}
