//! Dead loop-carried values: a value carried by an `scf.for` whose final value
//! is never used, and whose per-iteration value feeds nothing but its own next
//! value, is removed with everything computing it (its init operand, result,
//! body argument and yield). Reverse-mode differentiation leaves such values
//! behind (buffers of per-iteration values nobody reads, adjoints of arguments
//! whose partials are selected away).
//!
//! A carried value is kept when its result is used anywhere in the function, or
//! when an op of the body that is kept (an effect, a possible run-time error, or one
//! feeding a kept carried value) uses its body argument; this is iterated to a fixed point.
//! Body ops that only fed removed values are then dead and left to [`super::dce`].
//! A carried value that the body yields unchanged is replaced by its init.

use std::collections::{HashMap, HashSet};

use crate::analysis::for_loops;
use crate::ir::{Function, Module, OpId, Region, ValueId};

/// Marks the values used by the ops of `r` that are live given `live` (values
/// used later), like [`super::dce`] does (an op stays for an effect or a possible
/// run-time error too), with nested regions marked whole.
fn mark(cx: &mut super::dce::Live<'_>, f: &Function, r: &Region, live: &mut HashSet<ValueId>) {
    for &id in r.ops.iter().rev() {
        let op = &f.ops[id];
        if op.results.iter().any(|v| live.contains(v)) || cx.needed(op) {
            live.extend(op.operands.iter().copied());
            for nr in &op.regions {
                live.extend(nr.yields.iter().copied());
                mark(cx, f, nr, live);
            }
        }
    }
}

/// The carried indices of `scf.for` op `id` that must stay.
fn needed(module: &Module, f: &Function, id: OpId, used: &HashSet<ValueId>) -> Vec<bool> {
    let op = &f.ops[id];
    let body = &op.regions[0];
    let n = op.results.len();
    let mut keep: Vec<bool> = op.results.iter().map(|v| used.contains(v)).collect();
    loop {
        let mut live: HashSet<ValueId> = (0..n)
            .filter(|&k| keep[k])
            .map(|k| body.yields[k])
            .collect();
        mark(&mut super::dce::Live::new(module, f), f, body, &mut live);
        let mut grew = false;
        for (k, kept) in keep.iter_mut().enumerate().take(n) {
            if !*kept && live.contains(&body.args[k + 1]) {
                *kept = true;
                grew = true;
            }
        }
        if !grew {
            return keep;
        }
    }
}

/// Removes dead carried values of every `scf.for` in `f`; returns whether anything changed.
pub fn prune(module: &mut Module, fref: crate::ir::FuncRef) -> bool {
    let f = &module.functions[fref];
    let mut used = HashSet::new();
    crate::analysis::used_in(f, &f.body, &mut used);
    let fors = for_loops(f, &f.body);
    let mut plans: Vec<(OpId, Vec<bool>)> = Vec::new();
    let mut map: HashMap<ValueId, ValueId> = HashMap::new();
    for id in fors {
        let op = &f.ops[id];
        let n = op.results.len();
        if op.regions.len() != 1
            || op.operands.len() != n + 2
            || op.regions[0].args.len() != n + 1
            || op.regions[0].yields.len() != n
        {
            continue;
        }
        let mut keep = needed(module, f, id, &used);
        let body = &op.regions[0];
        for (k, kept) in keep.iter_mut().enumerate().take(n) {
            if *kept && body.yields[k] == body.args[k + 1] {
                // Yielded unchanged: the value is its init throughout.
                map.insert(body.args[k + 1], op.operands[k + 2]);
                map.insert(op.results[k], op.operands[k + 2]);
                *kept = false;
            }
        }
        if keep.iter().any(|k| !k) {
            plans.push((id, keep));
        }
    }
    if plans.is_empty() {
        return false;
    }
    let f = &mut module.functions[fref];
    for (id, keep) in plans {
        let op = &mut f.ops[id];
        let mut k = 0;
        op.results.retain(|_| (keep[k], k += 1).0);
        let mut k = 0;
        op.operands.retain(|_| (k < 2 || keep[k - 2], k += 1).0);
        let body = &mut op.regions[0];
        let mut k = 0;
        body.args.retain(|_| (k == 0 || keep[k - 1], k += 1).0);
        let mut k = 0;
        body.yields.retain(|_| (keep[k], k += 1).0);
    }
    super::subst::apply(f, &map);
    true
}
