//! The call graph of a module: which functions a function reaches through calls.

use std::collections::HashSet;

use crate::ir::{FuncRef, Module, OpKind};

/// `f` and every function it calls, directly or not.
pub fn reachable(module: &Module, f: FuncRef) -> HashSet<FuncRef> {
    let mut seen = HashSet::new();
    let mut stack = vec![f];
    while let Some(h) = stack.pop() {
        if !seen.insert(h) {
            continue;
        }
        if let Some(func) = module.functions.get(h) {
            stack.extend(func.ops.iter().filter_map(|(_, op)| match op.kind {
                OpKind::Call(c) => Some(c),
                _ => None,
            }));
        }
    }
    seen
}

/// Whether an op of `from` or of a function it reaches through calls satisfies `hit`.
/// A call of a function the module does not hold counts as `missing`.
pub fn any_reachable_op(module: &Module, from: FuncRef, missing: bool, hit: impl Fn(&OpKind) -> bool) -> bool {
    let mut seen = HashSet::new();
    let mut stack = vec![from];
    while let Some(g) = stack.pop() {
        if !seen.insert(g) {
            continue;
        }
        let Some(func) = module.functions.get(g) else {
            if missing {
                return true;
            }
            continue;
        };
        for (_, op) in func.ops.iter() {
            if hit(&op.kind) {
                return true;
            }
            if let OpKind::Call(h) = op.kind {
                stack.push(h);
            }
        }
    }
    false
}

/// Whether `from` calls one of `targets` through one or more calls (`from` itself counts
/// only when it is reached again). A call of a function the module does not hold counts as
/// reaching: callers use this to refuse a transformation.
pub fn reaches(module: &Module, from: FuncRef, targets: &[FuncRef]) -> bool {
    any_reachable_op(module, from, true, |k| matches!(k, OpKind::Call(h) if targets.contains(h)))
}
