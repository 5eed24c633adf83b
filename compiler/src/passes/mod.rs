//! Clean-up passes over the IR, run after differentiation (and usable anywhere):
//! [`simplify`] (exact algebraic identities and constant folding), [`cse`]
//! (common subexpressions), [`dce`] (dead code) and [`carried`] (dead loop-carried
//! values), [`accum`] (sparse accumulation into loop-carried tensors); [`inline`] inlines calls. Each keeps the IR valid;
//! [`cleanup`] runs them to a fixed point and validates after every pass.

pub mod accum;
pub mod carried;
pub mod cse;
pub mod dce;
pub mod inline;
pub mod simplify;
mod subst;

use crate::ir::validate::{ValidationError, validate_function};
use crate::ir::{FuncRef, Module};

/// Simplify, CSE and DCE on `f` until nothing changes (at most a few rounds),
/// validating after each pass.
pub fn cleanup(module: &mut Module, f: FuncRef) -> Result<(), Vec<ValidationError>> {
    for _ in 0..8 {
        let mut changed = simplify::simplify(&mut module.functions[f]);
        validate_function(module, f)?;
        changed |= cse::cse(&mut module.functions[f]);
        validate_function(module, f)?;
        changed |= dce::dce(module, f);
        validate_function(module, f)?;
        if accum::sparse_accumulate(&mut module.functions[f]) {
            changed = true;
            validate_function(module, f)?;
        }
        if carried::prune(module, f) {
            changed = true;
            dce::dce(module, f);
            validate_function(module, f)?;
        }
        if !changed {
            break;
        }
    }
    Ok(())
}
