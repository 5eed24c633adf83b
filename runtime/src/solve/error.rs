//! Errors of the solvers and of objectives.

use crate::sparse::SparseError;
use std::fmt;

/// Why a solve could not run or had to stop without a result.
#[derive(Clone, Debug, PartialEq)]
pub enum SolveError {
    /// An objective reported a failure of its own.
    Objective(String),
    /// The solver needs an objective method that this objective does not provide.
    Unsupported(&'static str),
    /// A buffer or mask has the wrong length.
    Dimension {
        what: &'static str,
        expected: usize,
        found: usize,
    },
    /// The energy at the starting point is +∞ or NaN.
    InfeasibleStart { energy: f64 },
    /// A NaN or ±∞ where a finite value is needed: the gradient, a search direction, or the energy
    /// along the whole search direction down to the smallest trial step.
    NonFinite {
        iteration: usize,
        what: &'static str,
    },
    /// No diagonal shift up to the configured limit made the Hessian factorizable with a descent
    /// direction.
    Factorization { iteration: usize, message: String },
    /// A sparse pattern or assembly error.
    Sparse(SparseError),
    /// A [`super::SolveOptions`] value outside its documented range (a line-search constant
    /// not in (0, 1), a negative or NaN tolerance).
    InvalidOption(String),
}

impl fmt::Display for SolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SolveError::Objective(m) => write!(f, "objective: {m}"),
            SolveError::Unsupported(what) => {
                write!(
                    f,
                    "the objective does not provide {what}, which this solver needs"
                )
            }
            SolveError::Dimension {
                what,
                expected,
                found,
            } => write!(f, "{what}: expected length {expected}, found {found}"),
            SolveError::InfeasibleStart { energy } => {
                write!(f, "the energy at the starting point is {energy}")
            }
            SolveError::NonFinite { iteration, what } => {
                write!(f, "iteration {iteration}: non-finite {what}")
            }
            SolveError::Factorization { iteration, message } => {
                write!(f, "iteration {iteration}: factorization failed: {message}")
            }
            SolveError::Sparse(e) => write!(f, "{e}"),
            SolveError::InvalidOption(m) => write!(f, "invalid solve option: {m}"),
        }
    }
}

impl std::error::Error for SolveError {}

impl From<SparseError> for SolveError {
    fn from(e: SparseError) -> Self {
        SolveError::Sparse(e)
    }
}

pub(crate) fn check_len(
    what: &'static str,
    expected: usize,
    found: usize,
) -> Result<(), SolveError> {
    if expected == found {
        Ok(())
    } else {
        Err(SolveError::Dimension {
            what,
            expected,
            found,
        })
    }
}
