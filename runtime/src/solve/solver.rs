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
        match self {
            Solver::Newton(s) => s.solve(obj, x, opts, callback),
            Solver::NewtonCg(s) => s.solve(obj, x, opts, callback),
            Solver::Lbfgs(s) => s.solve(obj, x, opts, callback),
            Solver::GradientDescent(s) => s.solve(obj, x, opts, callback),
            Solver::GaussNewton(s) => s.solve(obj, x, opts, callback),
        }
    }
}
