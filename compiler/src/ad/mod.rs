//! Automatic differentiation at the IR level, by source transformation.
//!
//! - [`rules`]: the rule table (a JVP and a transpose rule for every op);
//! - [`forward`]: forward mode, [`jvp`], any number of seed directions in one pass;
//! - [`reverse`]: reverse mode, [`vjp`], through straight-line code, `scf.if`,
//!   `scf.for` (per-iteration carried values stored in buffers), calls, and
//!   `scf.while` through the run-time tape (`tape.push`/`tape.pop`; the loop body
//!   is one tape node whose reverse pass is its source-transformed adjoint), and
//!   recursion split on the tape (work linear in the depth);
//! - [`recursion`]: which recursive functions and calls are split on the tape;
//! - [`derived`]: [`grad`] and [`hessian`] (forward over reverse) built on both;
//! - [`explain`]: the mode each region gets and why (`madc explain FILE`);
//! - [`show`]: the text of a derivative's cleaned IR (`madc emit ir --grad f`).
//!
//! Every function created here is ordinary IR: it validates, runs in the
//! interpreter, and can itself be differentiated (third derivatives compose).
//! Run [`crate::passes::cleanup`] afterwards to fold the constants and shared
//! subexpressions the rules leave behind.
//!
//! # Numerical conventions
//!
//! Rules never introduce a NaN that the mathematics does not have; at singular
//! points they pick a documented value:
//! - `sqrt` at 0: derivative **0** (the subgradient that makes `sqrt(dot(v, v))`
//!   differentiable at `v = 0` with gradient 0); the division is never formed there.
//! - `abs` at 0: **0**; `min(a, b)`/`max(a, b)` at a tie: the whole derivative goes to
//!   **`a`** (the first operand).
//! - `pow(a, b)`: `∂/∂a = b·a^(b-1)` (so `pow(0, 2)` has derivative 0, `pow(0, 0.5)`
//!   +∞); `∂/∂b = a^b·log a` is taken as **0 where `a == 0`**.
//! - `log` at 0: derivative `1/0 = +∞` (the value is −∞), as the one-sided limit; so
//!   `log1p` at −1.
//! - The gamma family differentiates to the next member, to every order: `lgamma` →
//!   `digamma` → `trigamma` → `polygamma(2, ·)` → `polygamma(3, ·)` …; at the poles
//!   (0, −1, −2, …) those values are `+inf` or NaN as the functions define them. The
//!   order operand of `polygamma` has no derivative (it takes integer values only).
//! - `a / b` at `b == 0`: the IEEE values of `1/b` and `-a/b²` (±∞ or NaN, as the
//!   primal itself).
//! - `atan2(0, 0)`: derivative **0** in both arguments.
//! - `select(c, a, b)`: the adjoint is routed with two `select`s on `c`, never
//!   multiplied by a 0/1 mask, so an infinite or NaN value on the untaken side does
//!   not reach the adjoint. Scalar `min`/`max`/`sqrt` route with `select` as well;
//!   on tensors (where `select` has no elementwise form) they multiply finite
//!   factors by 0/1 masks.
//! - In reverse mode a scalar cotangent that is exactly 0 (e.g. routed away by a
//!   `select`) stays 0 through every elementwise rule other than `mul`, even where
//!   the local derivative is infinite (`log` at 0, `1/b` at `b == 0`): the product
//!   is a *strong zero*, formed with a `select`.
//! - `floor`, `ceil`, comparisons, integer arithmetic, `rem` on integers,
//!   `tensor.dim`, casts to or from integers: derivative 0 (no tangent flows).
//! - `rem(a, b)` on floats: `∂/∂a = 1`, `∂/∂b = -(a - rem(a, b))/b = -trunc(a/b)`.
//!
//! # Effects
//!
//! A forward-mode function runs every `print` of its source once. A reverse-mode
//! function does not print (it may evaluate a region more than once: the adjoint of
//! an `scf.if` or `scf.for` recomputes the region's primal values); the primal
//! callees it calls print as usual.

pub mod derived;
pub mod emit;
pub mod explain;
pub mod forward;
pub mod plan;
pub mod recursion;
pub mod reverse;
pub mod rules;
pub mod show;
pub mod tangent;
pub mod varied;

use std::fmt;

use mad_grammar::span::Span;

pub use derived::{grad, hessian};
pub use forward::jvp;
pub use reverse::{vjp, vjp_plain_products};

/// Why a function could not be differentiated.
#[derive(Clone, Debug, PartialEq)]
pub enum AdError {
    /// Reverse mode cannot go through this op: the function already uses the tape
    /// (a reverse-mode derivative of a `while` loop, differentiated again in
    /// reverse mode).
    NeedsTape {
        function: String,
        op: &'static str,
        span: Span,
    },
    /// The function is marked `@ad(sct)` but its reverse mode needs the tape at
    /// this op (an `scf.while` whose trip count is known only at run time).
    SctImpossible {
        function: String,
        op: &'static str,
        span: Span,
    },
    /// The function's signature does not fit the request (e.g. `grad` of a function
    /// that does not return an `f64`, `hessian` over inputs of dynamic size).
    Signature { function: String, message: String },
    /// The transformation produced invalid IR: a defect of the differentiation.
    Internal(String),
}

impl fmt::Display for AdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AdError::NeedsTape { function, op, .. } => write!(
                f,
                "in @{function}: reverse mode cannot go through `{op}` (the function already uses the tape)"
            ),
            AdError::SctImpossible { function, op, .. } => write!(
                f,
                "in @{function}: `@ad(sct)` is impossible: reverse mode through `{op}` needs the tape (its trip count is only known at run time)"
            ),
            AdError::Signature { function, message } => write!(f, "in @{function}: {message}"),
            AdError::Internal(m) => write!(f, "internal differentiation error: {m}"),
        }
    }
}

impl std::error::Error for AdError {}

/// Validates a created function (every generated function must validate).
pub(crate) fn check(module: &crate::ir::Module, f: crate::ir::FuncRef) -> Result<(), AdError> {
    crate::ir::validate::validate_function(module, f).map_err(|errs| {
        AdError::Internal(
            errs.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "),
        )
    })
}
