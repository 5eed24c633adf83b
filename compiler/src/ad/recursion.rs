//! Which recursive functions reverse mode differentiates in *split mode* on the
//! tape, and which of their calls it splits at.
//!
//! A function `f` on a call-graph cycle (it reaches itself through calls) is
//! differentiated in split mode when it is not marked `@ad(sct)`, its result has
//! a derivative, it does not use the tape itself, and none of its calls into its
//! own cycle that carry derivatives sits inside a loop (`for`/`while`, at any
//! depth). Its reverse mode is then `f$rfwd` (the primal, recording each
//! segment's live values on the tape) followed by `f$rbwd` (popping them); see
//! [`super::reverse`]. A *split call* in such a function is a call to a member of
//! its cycle that is itself in split mode and returns a value with a derivative:
//! at it, `f$rfwd` calls the callee's `$rfwd` and `f$rbwd` its `$rbwd`.
//! Every other function (and every other call) keeps source transformation, where
//! a call recomputes the callee's primal.

use super::tangent::tangent_type;
use crate::analysis::any_reachable_op;
use crate::ir::{AdMode, Derivation, FuncRef, Function, Module, Op, OpKind, Region};

/// Why a function on a call-graph cycle is not differentiated in split mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoSplit {
    /// The function does not reach itself through calls.
    NotRecursive,
    /// `@ad(sct)` keeps the function off the tape.
    Sct,
    /// Its result has no derivative.
    NoDerivative,
    /// It already uses the tape (it is itself a reverse-mode derivative).
    UsesTape,
    /// A call into its own cycle that carries derivatives sits inside a loop.
    CallInLoop,
}

/// Whether `from` reaches `target` through one or more calls.
pub fn reaches(module: &Module, from: FuncRef, target: FuncRef) -> bool {
    any_reachable_op(module, from, false, |k| matches!(k, OpKind::Call(h) if *h == target))
}

/// Whether calling `f` may touch the tape: `f` or a function it reaches through
/// calls has a `tape.push` or `tape.pop` (forward mode always differentiates such
/// a call, so that pushes and pops of tangents stay matched).
pub fn uses_tape(module: &Module, f: FuncRef) -> bool {
    any_reachable_op(module, f, false, |k| matches!(k, OpKind::TapePush | OpKind::TapePop))
}

/// Whether `op` (in `func`) is a call into the cycle of `f` whose result has a derivative.
fn active_cycle_call(module: &Module, f: FuncRef, func: &Function, op: &Op) -> bool {
    match op.kind {
        OpKind::Call(g) => {
            op.results
                .iter()
                .any(|&r| tangent_type(func.ty(r)).is_some())
                && (g == f || reaches(module, g, f))
        }
        _ => false,
    }
}

/// Whether a loop of `r` (at any depth) holds an active call into `f`'s cycle.
fn call_in_loop(module: &Module, f: FuncRef, func: &Function, r: &Region, in_loop: bool) -> bool {
    r.ops.iter().any(|&id| {
        let op = &func.ops[id];
        if in_loop && active_cycle_call(module, f, func, op) {
            return true;
        }
        let inner = in_loop || matches!(op.kind, OpKind::For | OpKind::While);
        op.regions
            .iter()
            .any(|nr| call_in_loop(module, f, func, nr, inner))
    })
}

/// `Ok(())` when `f` is differentiated in split mode, else why not.
pub fn split_mode(module: &Module, f: FuncRef) -> Result<(), NoSplit> {
    let Some(func) = module.functions.get(f) else {
        return Err(NoSplit::NotRecursive);
    };
    if !reaches(module, f, f) {
        return Err(NoSplit::NotRecursive);
    }
    if func.ad_mode == Some(AdMode::Sct) {
        return Err(NoSplit::Sct);
    }
    if tangent_type(&func.ret).is_none() {
        return Err(NoSplit::NoDerivative);
    }
    if func.ops.iter().any(|(_, op)| op.kind.is_tape()) {
        return Err(NoSplit::UsesTape);
    }
    if call_in_loop(module, f, func, &func.body, false) {
        return Err(NoSplit::CallInLoop);
    }
    Ok(())
}

/// Whether `op` of `f` (a function in split mode) is a split call.
pub fn is_split_call(module: &Module, f: FuncRef, op: &Op) -> bool {
    let Some(func) = module.functions.get(f) else {
        return false;
    };
    match op.kind {
        OpKind::Call(g) => active_cycle_call(module, f, func, op) && split_mode(module, g).is_ok(),
        _ => false,
    }
}

/// Whether `op` of `f` is a split point: a split call, or an `scf.if` holding one
/// (at any depth of nested `scf.if`s).
pub fn is_split_point(module: &Module, f: FuncRef, op: &Op) -> bool {
    let Some(func) = module.functions.get(f) else {
        return false;
    };
    match op.kind {
        OpKind::Call(_) => is_split_call(module, f, op),
        OpKind::If => op.regions.iter().any(|r| {
            r.ops
                .iter()
                .any(|&id| is_split_point(module, f, &func.ops[id]))
        }),
        _ => false,
    }
}

/// `Some(g)` when `f` is `g$vjp` of a function `g` in split mode (a call of
/// `g$rfwd` then `g$rbwd`). Reverse mode of such an `f` differentiates its
/// source-transformed twin `g$vjp$st` instead, and inlining keeps calls of it.
pub fn split_vjp_base(module: &Module, f: FuncRef) -> Option<FuncRef> {
    let key = module.origin(f)?;
    let g = key.of;
    (key.derivation == Derivation::Vjp && split_mode(module, g).is_ok()).then_some(g)
}
