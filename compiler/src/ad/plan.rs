//! The AD mode plan of a function: for every loop, branch and call, how reverse mode
//! differentiates it and why, decided once. Reverse mode ([`super::reverse`]) follows
//! it, the front end's E0155 check reads it, and `madc explain` ([`super::explain`])
//! prints it, so the three cannot disagree.
//!
//! - A loop no derivative flows through (its carried values do not vary with the
//!   parameters, [`super::varied`]) runs as it is.
//! - An active `for` loop is differentiated by source transformation, its carried values
//!   stored per iteration in buffers sized by the trip count; unless it carries tuples,
//!   or the function is marked `@ad(tape)`: then it goes on the tape.
//! - An active `while` loop (a `for` with `break`/`return` lowers to one) goes on the
//!   tape: its trip count depends on data. Its body is one tape node whose reverse pass is
//!   the body's compiled adjoint.
//! - A loop that needs the tape in a function marked `@ad(sct)` is an error (E0155).
//! - An `if` is differentiated by source transformation (the adjoint is an `if` on the
//!   same condition), or split on the tape when it holds a recursive call of a function in
//!   split mode ([`super::recursion`]).
//! - A call uses the callee's own derivative; a call back into the function's own cycle
//!   is split on the tape (O(depth)) or recomputes the callee's primal (O(depth²)).

use std::collections::{HashMap, HashSet};

use super::recursion::{self, NoSplit};
use super::tangent::tangent_type;
use super::varied;
use crate::analysis::{for_each_op, reachable};
use crate::ir::{AdMode, FuncRef, Function, Module, Op, OpId, OpKind, Type, ValueId};

/// Why a loop goes on the tape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TapeReason {
    /// A `while` loop: its trip count depends on data.
    DataDependentTrips,
    /// A `for` loop whose carried values include tuples.
    TupleCarried,
    /// The function is marked `@ad(tape)`.
    Requested,
}

/// How reverse mode differentiates a loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopMode {
    /// No derivative flows through its results: it runs as it is.
    Inactive,
    /// Source transformation, carried values stored per iteration.
    Sct,
    /// On the tape.
    Tape(TapeReason),
    /// It needs the tape, and the function is marked `@ad(sct)` (E0155).
    SctImpossible(TapeReason),
}

/// How reverse mode differentiates an `if`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IfMode {
    /// No result has a derivative.
    Inactive,
    /// Source transformation: the adjoint is an `if` on the same condition.
    Sct,
    /// It holds a recursive call of a function in split mode: the forward pass pushes the
    /// condition, the reverse pass takes the same branch.
    Split,
}

/// How reverse mode differentiates a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallMode {
    /// The callee's own derivative.
    Derivative,
    /// A call back into the function's own cycle whose result has no derivative.
    RecursionInactive,
    /// A call back into the cycle, split on the tape (O(depth) work).
    RecursionSplit,
    /// A call back into the cycle whose callee recomputes its primal at every level
    /// (O(depth²) work), with why it is not split: the function's own reason, or the
    /// callee's when this function is in split mode and the callee is not.
    RecursionRecompute { own: Option<NoSplit>, callee: Option<NoSplit> },
}

/// The mode of one op of the plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Loop(LoopMode),
    If(IfMode),
    Call(CallMode),
}

/// The plan of one function: a mode for each of its loops, `if`s and calls.
#[derive(Clone, Debug, Default)]
pub struct AdPlan {
    modes: HashMap<OpId, Mode>,
}

/// The mode of loop `op` of `f`, given `f`'s varied values.
fn loop_mode(f: &Function, op: &Op, varied: &HashSet<ValueId>) -> LoopMode {
    if !varied::op_varies(op, varied) {
        return LoopMode::Inactive;
    }
    let reason = match op.kind {
        OpKind::While => Some(TapeReason::DataDependentTrips),
        _ if op.results.iter().any(|&r| matches!(f.ty(r), Type::Tuple(_))) => Some(TapeReason::TupleCarried),
        _ => None,
    };
    match (reason, f.ad_mode) {
        (Some(r), Some(AdMode::Sct)) => LoopMode::SctImpossible(r),
        (Some(r), _) => LoopMode::Tape(r),
        (None, Some(AdMode::Tape)) => LoopMode::Tape(TapeReason::Requested),
        (None, _) => LoopMode::Sct,
    }
}

impl AdPlan {
    /// The modes of the loops of `f` (all that reverse mode of the function needs).
    pub fn of_loops(f: &Function) -> AdPlan {
        let varied = varied::varied_values(f);
        let mut modes = HashMap::new();
        for_each_op(f, &f.body, &mut |id, op| {
            if matches!(op.kind, OpKind::For | OpKind::While) {
                modes.insert(id, Mode::Loop(loop_mode(f, op, &varied)));
            }
        });
        AdPlan { modes }
    }

    /// The modes of the loops, `if`s and calls of function `f` of `module`.
    pub fn of(module: &Module, f: FuncRef) -> AdPlan {
        let Some(func) = module.functions.get(f) else { return AdPlan::default() };
        let mut plan = AdPlan::of_loops(func);
        let split = recursion::split_mode(module, f);
        let has_derivative = |op: &Op| op.results.iter().any(|&v| tangent_type(func.ty(v)).is_some());
        for_each_op(func, &func.body, &mut |id, op| {
            let mode = match op.kind {
                OpKind::If if split.is_ok() && recursion::is_split_point(module, f, op) => Mode::If(IfMode::Split),
                OpKind::If if has_derivative(op) => Mode::If(IfMode::Sct),
                OpKind::If => Mode::If(IfMode::Inactive),
                OpKind::Call(g) if reachable(module, g).contains(&f) => Mode::Call(if !has_derivative(op) {
                    CallMode::RecursionInactive
                } else {
                    match split {
                        Ok(()) if recursion::is_split_call(module, f, op) => CallMode::RecursionSplit,
                        Ok(()) => CallMode::RecursionRecompute { own: None, callee: recursion::split_mode(module, g).err() },
                        Err(why) => CallMode::RecursionRecompute { own: Some(why), callee: None },
                    }
                }),
                OpKind::Call(_) => Mode::Call(CallMode::Derivative),
                _ => return,
            };
            plan.modes.insert(id, mode);
        });
        plan
    }

    /// The mode of op `id`, when it is a loop, an `if` or a call.
    pub fn mode(&self, id: OpId) -> Option<Mode> {
        self.modes.get(&id).copied()
    }

    /// The mode of loop `id` ([`LoopMode::Inactive`] for an op that is not a loop).
    pub fn loop_mode(&self, id: OpId) -> LoopMode {
        match self.modes.get(&id) {
            Some(Mode::Loop(m)) => *m,
            _ => LoopMode::Inactive,
        }
    }

    /// The first loop of `f` (in the order of its op arena) that needs the tape though
    /// `f` is marked `@ad(sct)` (E0155).
    pub fn sct_impossible(&self, f: &Function) -> Option<OpId> {
        f.ops
            .iter()
            .map(|(id, _)| id)
            .find(|&id| matches!(self.modes.get(&id), Some(Mode::Loop(LoopMode::SctImpossible(_)))))
    }
}
