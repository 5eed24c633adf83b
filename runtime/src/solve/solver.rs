//! [`Solver`]: one of the solvers chosen by name (as `madc run --solver NAME` does).

use super::{
    Callback, GaussNewton, GaussNewtonLinear, GradientDescent, Lbfgs, Newton, NewtonCg, Objective,
    SolveError, SolveOptions, SolveReport,
};

/// Any of the solvers.
#[allow(clippy::large_enum_variant)]
pub enum Solver {
    Newton(Newton),
    NewtonCg(NewtonCg),
    Lbfgs(Lbfgs),
    GradientDescent(GradientDescent),
    GaussNewton(GaussNewton),
}

impl Solver {
    /// Checks the solver's own settings against their ranges ([`SolveError::InvalidOption`]
    /// naming the field), as [`SolveOptions::validate`] checks the common ones: the shift of
    /// Newton and Gauss-Newton (`initial` ≥ 0, `growth` > 1, `min_descent_cosine` in [0, 1)),
    /// Levenberg–Marquardt's `initial_mu` > 0 and `min_mu` ≥ 0, a gradient-descent `step` > 0,
    /// a CG `forcing` in [0, 1), an L-BFGS `memory` ≥ 1, all finite. [`Solver::solve`] checks
    /// them first (a NaN μ used to end the solve as stalled after no iteration).
    pub fn validate(&self) -> Result<(), SolveError> {
        let bad = |name: &str, v: f64, want: &str| {
            Err(SolveError::InvalidOption(format!("{name} = {v}: {want}")))
        };
        let shift = |s: &super::ShiftOptions| {
            if !(s.initial >= 0.0 && s.initial.is_finite()) {
                return bad("shift.initial", s.initial, "must be a finite number ≥ 0");
            }
            if !(s.growth > 1.0 && s.growth.is_finite()) {
                return bad("shift.growth", s.growth, "must be a finite number > 1");
            }
            if !(0.0..1.0).contains(&s.min_descent_cosine) {
                return bad("shift.min_descent_cosine", s.min_descent_cosine, "must be in [0, 1)");
            }
            Ok(())
        };
        let forcing = |f: f64| {
            if (0.0..1.0).contains(&f) { Ok(()) } else { bad("cg.forcing", f, "must be in [0, 1)") }
        };
        match self {
            Solver::Newton(n) => shift(&n.shift),
            Solver::NewtonCg(n) => forcing(n.cg.forcing),
            Solver::Lbfgs(l) if l.memory == 0 => {
                Err(SolveError::InvalidOption("memory = 0: L-BFGS keeps at least 1 pair".into()))
            }
            Solver::Lbfgs(_) => Ok(()),
            Solver::GradientDescent(g) => match g.step {
                Some(st) if !(st > 0.0 && st.is_finite()) => bad("step", st, "must be a finite number > 0"),
                _ => Ok(()),
            },
            Solver::GaussNewton(g) => {
                shift(&g.shift)?;
                if let GaussNewtonLinear::MatrixFree(cg) = &g.linear {
                    forcing(cg.forcing)?;
                }
                match &g.damping {
                    Some(lm) if !(lm.initial_mu > 0.0 && lm.initial_mu.is_finite()) => {
                        bad("initial_mu", lm.initial_mu, "must be a finite number > 0")
                    }
                    Some(lm) if !(lm.min_mu >= 0.0 && lm.min_mu.is_finite()) => {
                        bad("min_mu", lm.min_mu, "must be a finite number ≥ 0")
                    }
                    _ => Ok(()),
                }
            }
        }
    }

    /// The names [`Solver::from_name`] accepts.
    pub const NAMES: [&'static str; 10] = [
        "newton",
        "newton-cg",
        "lbfgs",
        "gd",
        "gauss-newton",
        "gauss-newton-cg",
        "levenberg-marquardt",
        "levenberg-marquardt-cg",
        "lm",
        "lm-cg",
    ];

    /// A solver with default settings: `newton`, `newton-cg`, `lbfgs`, `gd`, `gauss-newton`
    /// (assembled `JᵀJ`), `gauss-newton-cg` (matrix-free), `levenberg-marquardt` (alias `lm`:
    /// Gauss-Newton with Levenberg–Marquardt damping, assembled) or `levenberg-marquardt-cg`
    /// (alias `lm-cg`: the same, matrix-free).
    pub fn from_name(name: &str) -> Option<Solver> {
        // Matrix-free Gauss-Newton and LM solve JᵀJ (positive semi-definite) to a tighter
        // forcing than Newton-CG's 0.5: at 0.5 their steps were poor enough that the
        // embedded deformation took 47 iterations instead of 28 (and more time).
        let matrix_free = || GaussNewtonLinear::MatrixFree(super::cg::CgOptions { forcing: 1e-2, ..Default::default() });
        Some(match name {
            "newton" => Solver::Newton(Newton::new()),
            "newton-cg" => Solver::NewtonCg(NewtonCg::new()),
            "lbfgs" => Solver::Lbfgs(Lbfgs::default()),
            "gd" => Solver::GradientDescent(GradientDescent::new()),
            "gauss-newton" => Solver::GaussNewton(GaussNewton::new(GaussNewtonLinear::Assembled)),
            "gauss-newton-cg" => Solver::GaussNewton(GaussNewton::new(matrix_free())),
            "levenberg-marquardt" | "lm" => Solver::GaussNewton(GaussNewton::levenberg_marquardt(
                GaussNewtonLinear::Assembled,
            )),
            "levenberg-marquardt-cg" | "lm-cg" => {
                Solver::GaussNewton(GaussNewton::levenberg_marquardt(matrix_free()))
            }
            _ => return None,
        })
    }

    /// Minimizes `obj` from `x` (updated in place) with this solver.
    pub fn solve<O: Objective + ?Sized>(
        &mut self,
        obj: &mut O,
        x: &mut [f64],
        opts: &SolveOptions,
        callback: Option<Callback>,
    ) -> Result<SolveReport, SolveError> {
        self.validate()?;
        match self {
            Solver::Newton(s) => s.solve(obj, x, opts, callback),
            Solver::NewtonCg(s) => s.solve(obj, x, opts, callback),
            Solver::Lbfgs(s) => s.solve(obj, x, opts, callback),
            Solver::GradientDescent(s) => s.solve(obj, x, opts, callback),
            Solver::GaussNewton(s) => s.solve(obj, x, opts, callback),
        }
    }
}
