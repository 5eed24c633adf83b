//! The text of a derivative's IR, as `madc emit ir --grad NAME` prints it.

use std::collections::HashSet;

use super::{AdError, grad, hessian, jvp, vjp};
use crate::ir::{FuncRef, Module, OpKind, print};

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

/// `f` and every function it calls, directly or not.
pub fn reachable(module: &Module, f: FuncRef) -> HashSet<FuncRef> {
    let mut seen = HashSet::new();
    let mut stack = vec![f];
    while let Some(h) = stack.pop() {
        if !seen.insert(h) {
            continue;
        }
        let Some(func) = module.functions.get(h) else {
            continue;
        };
        for (_, op) in func.ops.iter() {
            if let OpKind::Call(c) = op.kind {
                stack.push(c);
            }
        }
    }
    seen
}
