//! The text of a derivative's IR, as `madc emit ir --grad NAME` prints it.

use super::{AdError, grad, hessian, jvp, vjp};
use crate::analysis::reachable;
use crate::ir::{FuncRef, Module, print};

/// Which derivative to show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Derivative {
    /// `f$grad`.
    Grad,
    /// `f$hessian` (forward over reverse).
    Hessian,
    /// `f$jvp1` (one seed direction).
    Jvp,
    /// `f$vjp`.
    Vjp,
}

/// Creates the derivative of `f` in `module`, cleans up every function it needs
/// ([`crate::passes::cleanup`]) and returns their text: the derivative first, then
/// the other derivative functions it calls, in module order (the primal functions
/// that `f` itself calls are left out).
pub fn derivative_ir(
    module: &mut Module,
    f: FuncRef,
    which: Derivative,
) -> Result<String, AdError> {
    let d = match which {
        Derivative::Grad => grad(module, f)?,
        Derivative::Hessian => hessian(module, f)?,
        Derivative::Jvp => jvp(module, f, 1)?,
        Derivative::Vjp => vjp(module, f)?,
    };
    let primal = reachable(module, f);
    let mut shown: Vec<FuncRef> = reachable(module, d)
        .into_iter()
        .filter(|h| !primal.contains(h) && *h != d)
        .collect();
    shown.sort_by_key(|h| h.index());
    shown.insert(0, d);
    let mut out = String::new();
    for (i, &h) in shown.iter().enumerate() {
        crate::passes::cleanup(module, h).map_err(|errs| {
            AdError::Internal(
                errs.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; "),
            )
        })?;
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&print::print_function(module, h));
    }
    Ok(out)
}

