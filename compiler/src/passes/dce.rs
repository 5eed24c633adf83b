//! Dead-code elimination: removes ops none of whose results are used, unless they
//! have an effect (`print`, a call of a function that may print, a tape op, or a
//! control-flow op containing one) or may stop the program with a run-time error
//! ([`super::fallible`]: an unused `10 / n` still fails at `n = 0`, so a derivative,
//! which discards the primal result, fails where the plain call does). Control-flow ops
//! are kept whole when any result is used.

use std::collections::HashSet;

use super::fallible::{CallFailures, Facts, op_may_fail};

use crate::analysis::any_reachable_op;
use crate::ir::{FuncRef, Function, Module, OpId, OpKind, Region, ValueId};

/// Whether calling `f` may have an effect (it prints or uses the tape, directly
/// or through calls).
pub fn may_print(module: &Module, f: FuncRef) -> bool {
    any_reachable_op(module, f, true, |k| {
        matches!(k, OpKind::Print | OpKind::PrintStr(_) | OpKind::TapePush | OpKind::TapePop)
    })
}

/// What [`dce`] (and [`super::carried`]) need to know about the ops of one function.
pub(super) struct Live<'a> {
    module: &'a Module,
    f: &'a Function,
    facts: Facts,
    calls: CallFailures,
}

impl<'a> Live<'a> {
    pub(super) fn new(module: &'a Module, f: &'a Function) -> Live<'a> {
        Live {
            module,
            f,
            facts: Facts::of(f),
            calls: CallFailures::default(),
        }
    }

    /// Whether `op` must stay though nothing reads it: it prints (directly, through a call,
    /// or inside its regions), uses the tape (tape ops inside a loop keep the loop alive,
    /// so every push keeps its pop), or may fail.
    pub(super) fn needed(&mut self, op: &crate::ir::Op) -> bool {
        match &op.kind {
            OpKind::Print | OpKind::PrintStr(_) | OpKind::TapePush | OpKind::TapePop => true,
            OpKind::Call(g) => may_print(self.module, *g) || self.calls.may_fail(self.module, *g),
            _ => {
                op_may_fail(self.f, op, &self.facts)
                    || op
                        .regions
                        .iter()
                        .any(|r| r.ops.iter().any(|&id| self.needed(&self.f.ops[id])))
            }
        }
    }
}

fn mark(cx: &mut Live<'_>, r: &Region, live: &mut HashSet<ValueId>, dead: &mut HashSet<OpId>) {
    live.extend(r.yields.iter().copied());
    let f = cx.f;
    for &id in r.ops.iter().rev() {
        let op = &f.ops[id];
        if op.results.iter().any(|v| live.contains(v)) || cx.needed(op) {
            live.extend(op.operands.iter().copied());
            for nr in &op.regions {
                mark(cx, nr, live, dead);
            }
        } else {
            dead.insert(id);
        }
    }
}

/// Removes dead ops from `f`; returns whether anything changed.
pub fn dce(module: &mut Module, f: FuncRef) -> bool {
    let mut dead = HashSet::new();
    let func = &module.functions[f];
    let mut cx = Live::new(module, func);
    mark(&mut cx, &func.body, &mut HashSet::new(), &mut dead);
    if dead.is_empty() {
        return false;
    }
    let func = &mut module.functions[f];
    func.body.ops.retain(|id| !dead.contains(id));
    let ids: Vec<OpId> = func.ops.iter().map(|(id, _)| id).collect();
    for id in ids {
        for r in &mut func.ops[id].regions {
            r.ops.retain(|o| !dead.contains(o));
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::ir::parse::parse_module;

    #[test]
    fn keeps_a_loop_whose_body_prints() {
        let mut m = parse_module(
            "func @f(%n: i64) -> f64 {
  %z = const 0 : i64
  %x = const 1.5 : f64
  %r = scf.for %z, %n, %x : f64 {
  ^(%i: i64, %c: f64):
    %u = print %c : ()
    yield %c
  }
  %dead = add %x, %x : f64
  return %x
}",
        )
        .unwrap();
        let f = m.find("f").unwrap();
        assert!(super::dce(&mut m, f), "the unused add is removed");
        let body = &m.functions[f].body;
        assert_eq!(body.ops.len(), 3, "const, const and the printing loop stay");
    }
}
