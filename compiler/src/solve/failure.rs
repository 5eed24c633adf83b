//! Why a solve ended without a result: bad input, a solver that failed on valid input, or
//! an error returned by the caller's event handler.

use mad_runtime::solve::SolveError;
use std::fmt;

/// Why a solve ended without a result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// Bad input: the mesh, params, data, fixed vertices or outputs, or a solver that the
    /// file's terms cannot serve (`madc` exits with 1).
    Input(String),
    /// The solver failed on valid input (`madc` exits with 2).
    Solver(String),
    /// The event handler returned this error; the run stopped there.
    Handler(String),
}

impl Failure {
    /// The message.
    pub fn message(&self) -> &str {
        match self {
            Failure::Input(m) | Failure::Solver(m) | Failure::Handler(m) => m,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for Failure {}

impl From<String> for Failure {
    fn from(m: String) -> Failure {
        Failure::Input(m)
    }
}

/// A solver error: a solver the file's terms cannot serve is bad input, any other error a
/// failure of the solver. `context` prefixes the message (`time step 3: `).
pub fn solver_failure(context: &str, solver: &str, e: SolveError) -> Failure {
    match e {
        SolveError::Unsupported(what) => {
            let hint = if what.contains("`energy` terms too") {
                "for a file with both `energy` and `residual` terms use newton-cg, lbfgs or gd, \
                 which minimize ½‖r‖² plus the energies"
            } else if what.contains("Jacobian") {
                "it minimizes the `residual` terms of a file, and this file has none"
            } else {
                "for a file with `residual` terms use gauss-newton, levenberg-marquardt, \
                 their -cg forms, newton-cg, lbfgs or gd"
            };
            Failure::Input(format!("{context}solver `{solver}`: {e}: {hint}"))
        }
        e => Failure::Solver(format!("{context}solver: {e}")),
    }
}
