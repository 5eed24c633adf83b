//! Backtracking Armijo line search, shared by all solvers.
//!
//! From `x` along a descent direction `d` (slope `gᵀd < 0`), trial steps `t = t₀, t₀ρ, t₀ρ², …`
//! are tried until `E(x + t d) ≤ E(x) + c₁ t gᵀd`. A trial energy that is `+∞` or NaN never
//! satisfies the test (so barrier energies keep the iterate feasible); the step shrinks instead.

use super::SolveError;

/// Line-search parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LineSearch {
    /// Sufficient-decrease constant c₁ (0 < c₁ < 1).
    pub c1: f64,
    /// Shrink factor ρ (0 < ρ < 1).
    pub shrink: f64,
    /// The most shrinks before giving up.
    pub max_backtracks: usize,
}

impl Default for LineSearch {
    fn default() -> Self {
        LineSearch {
            c1: 1e-4,
            shrink: 0.5,
            max_backtracks: 60,
        }
    }
}

/// The outcome of a line search.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LineSearchOutcome {
    /// `x + step·d` has energy `energy` and satisfies the Armijo condition.
    Accepted {
        step: f64,
        energy: f64,
        backtracks: usize,
        /// Whether a rejected trial before it had a non-finite energy (a NaN or `+∞` wall
        /// along `d`).
        walled: bool,
    },
    /// No trial step was accepted. `nan_at_smallest`: the smallest trial step gave a NaN
    /// energy; `walled`: some trial gave a non-finite one (a `+∞` at the smallest trial is a
    /// wall just ahead).
    Failed { nan_at_smallest: bool, walled: bool },
}

impl LineSearch {
    /// Searches along `d` from `x` (energy `f0`, slope `gᵀd`), starting at step `t0`. `trial` is
    /// scratch of the length of `x`; on acceptance it holds `x + step·d`.
    #[allow(clippy::too_many_arguments)]
    pub fn search(
        &self,
        energy: &mut dyn FnMut(&[f64]) -> Result<f64, SolveError>,
        x: &[f64],
        f0: f64,
        d: &[f64],
        slope: f64,
        t0: f64,
        trial: &mut [f64],
    ) -> Result<LineSearchOutcome, SolveError> {
        let mut t = t0;
        let mut nan = false;
        let mut walled = false;
        for k in 0..=self.max_backtracks {
            for ((y, a), b) in trial.iter_mut().zip(x).zip(d) {
                *y = a + t * b;
            }
            let f = energy(trial)?;
            let non_finite = !f.is_finite();
            nan = f.is_nan();
            if !non_finite && f <= f0 + self.c1 * t * slope {
                return Ok(LineSearchOutcome::Accepted {
                    step: t,
                    energy: f,
                    backtracks: k,
                    walled,
                });
            }
            walled |= non_finite;
            t *= self.shrink;
        }
        Ok(LineSearchOutcome::Failed {
            nan_at_smallest: nan,
            walled,
        })
    }
}
