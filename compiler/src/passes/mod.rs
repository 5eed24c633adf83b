//! Clean-up passes over the IR, run after differentiation (and usable anywhere):
//! [`simplify`] (exact algebraic identities and constant folding), [`cse`]
//! (common subexpressions), [`dce`] (dead code), [`carried`] (dead loop-carried
//! values) and [`if_fuse`] (unused `scf.if` results, adjacent `scf.if`s on one condition), [`accum`] (sparse accumulation into loop-carried tensors); [`inline`] inlines calls;
//! [`licm`] hoists loop invariants. Each keeps the IR valid;
//! [`cleanup`] runs them to a fixed point and validates after every pass;
//! [`for_codegen`] prepares a module for the code generator.

pub mod accum;
pub mod carried;
pub mod cse;
pub mod dce;
pub mod fallible;
pub mod if_fuse;
pub mod inline;
pub mod licm;
pub mod simplify;
pub(crate) mod subst;

use crate::ir::validate::{ValidationError, validate_function};

use crate::ir::{FuncRef, Module};

/// The module as the code generator compiles it: calls of differentiation
/// operators inlined into their callers ([`inline::inline_operator_calls`]),
/// then loop invariants hoisted ([`licm`]) in every function. Both keep every
/// result bit for bit and every run-time error (only ops that cannot fail move,
/// and inlined ops keep their source positions); function handles are unchanged.
pub fn for_codegen(module: &Module) -> Module {
    let mut m = module.clone();
    let funcs: Vec<FuncRef> = m.functions.iter().map(|(h, _)| h).collect();
    for &f in &funcs {
        inline::inline_operator_calls(&mut m, f);
    }
    for &f in &funcs {
        licm::hoist(&mut m.functions[f]);
    }
    m
}

/// [`simplify`] and [`cse`] on a function without regions until nothing changes (at most
/// three rounds), validated once: for large generated straight-line functions (an imported
/// ONNX graph's derivative), whose writer keeps only the ops its outputs need (so dead ops
/// may stay).
pub fn cleanup_straight_line(module: &mut Module, f: FuncRef) -> Result<(), Vec<ValidationError>> {
    for _ in 0..3 {
        let simplified = simplify::simplify(&mut module.functions[f]);
        if !cse::cse(&mut module.functions[f]) && !simplified {
            break;
        }
    }
    validate_function(module, f)
}

/// Simplify, CSE and DCE on `f` until nothing changes (at most a few rounds),
/// validating after each pass.
pub fn cleanup(module: &mut Module, f: FuncRef) -> Result<(), Vec<ValidationError>> {
    let check = |module: &Module| validate_function(module, f);
    for _ in 0..8 {
        let mut changed = simplify::simplify(&mut module.functions[f]);
        check(module)?;
        changed |= cse::cse(&mut module.functions[f]);
        check(module)?;
        changed |= dce::dce(module, f);
        check(module)?;
        if accum::sparse_accumulate(&mut module.functions[f]) {
            changed = true;
            check(module)?;
        }
        if accum::fuse_accumulating_loops(&mut module.functions[f]) {
            changed = true;
            check(module)?;
        }
        if if_fuse::fuse_ifs(&mut module.functions[f]) {
            changed = true;
            check(module)?;
        }
        if carried::prune(module, f) {
            changed = true;
            dce::dce(module, f);
            check(module)?;
        }
        if !changed {
            break;
        }
    }
    Ok(())
}
