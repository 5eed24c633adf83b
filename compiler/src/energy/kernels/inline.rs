//! Kernel preparation: inlining every call of a kernel, so that differentiation
//! and the clean-up passes see one straight-line body (symbolic zeros, CSE and
//! dead-code elimination then work across what were function boundaries), and
//! exact strength reduction of `pow(x, 2.0)` to `x * x`.
//!
//! Recursive callees (a function reachable from itself, [`crate::analysis::reaches`]) are
//! left as calls. The inlining itself is the compiler's (`passes::inline`), asked for every
//! other callee whatever its size, calls with several results, and the call's span on
//! copies from another source file.

use std::collections::{HashMap, HashSet};

use crate::analysis::reaches;
use crate::ir::{BinaryOp, FuncRef, Function, Literal, Module, OpId, OpKind, Type};
use crate::passes::inline::{Inlining, inline_region};

/// Rounds of inlining (each inlines the calls present at its start).
const MAX_ROUNDS: usize = 32;

/// Inlines every non-recursive call of `f` (transitively; copies keep their source spans
/// where they come from `f`'s own file, else take the call's), reduces `pow(x, 2)`,
/// folds vectors and tuples ([`super::fold`], shallow), and cleans up: for functions
/// that are differentiated afterwards. Errors are defects (invalid IR after the rewrite).
pub fn inline_all(module: &mut Module, f: FuncRef) -> Result<(), String> {
    inline_and_fold(module, f, false)
}

/// As [`inline_all`], and folds matrices and nested regions too: for the kernels the
/// code generator compiles, after differentiation (a seed's zeros inside an `if`).
pub fn inline_all_deep(module: &mut Module, f: FuncRef) -> Result<(), String> {
    inline_and_fold(module, f, true)
}

fn inline_and_fold(module: &mut Module, f: FuncRef, deep: bool) -> Result<(), String> {
    // Every call of a function that does not reach itself, whatever its size or results.
    // Ops from the kernel's own source file keep their spans (a run-time error then shows
    // its own line); ops from another file (the standard library) take the span of the
    // call that reached them, in the kernel's file. A function the compiler made around
    // another (a derivative kernel's wrapper) takes the file of the first function it
    // inlines.
    for _ in 0..MAX_ROUNDS {
        let mut func = std::mem::replace(
            &mut module.functions[f],
            Function::new("", &[], Type::unit()),
        );
        let not_recursive: HashMap<FuncRef, bool> = func
            .ops
            .iter()
            .filter_map(|(_, op)| match op.kind {
                OpKind::Call(c) => Some((c, !reaches(module, c, &[c]))),
                _ => None,
            })
            .collect();
        let eligible = |c: FuncRef| not_recursive.get(&c).copied().unwrap_or(false);
        let how = Inlining { eligible: &eligible, any_results: true, call_spans_across_files: true };
        let mut map = HashMap::new();
        let mut body = std::mem::take(&mut func.body);
        let changed = inline_region(module, &mut func, &mut body, &how, &mut map);
        func.body = body;
        crate::passes::subst::apply(&mut func, &map);
        module.functions[f] = func;
        if !changed {
            break;
        }
    }
    square_pows(&mut module.functions[f]);
    let clean = |module: &mut Module| {
        crate::passes::cleanup(module, f).map_err(|errs| {
            errs.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        })
    };
    clean(module)?;
    for _ in 0..8 {
        let changed = super::fold::fold(module, f, deep);
        clean(module)?;
        if !changed {
            break;
        }
    }
    Ok(())
}

/// `pow(x, 2.0)` → `x * x` for scalar `f64` x (exact: both are the correctly
/// rounded square).
fn square_pows(f: &mut Function) {
    let mut twos = HashSet::new();
    for (_, op) in f.ops.iter() {
        if let OpKind::Const(Literal::F64(x)) = op.kind
            && x == 2.0
        {
            twos.insert(op.results[0]);
        }
    }
    let ids: Vec<OpId> = f.ops.iter().map(|(h, _)| h).collect();
    for id in ids {
        let op = &f.ops[id];
        if op.kind == OpKind::Binary(BinaryOp::Pow)
            && twos.contains(&op.operands[1])
            && *f.ty(op.operands[0]) == Type::F64
        {
            let x = op.operands[0];
            let op = &mut f.ops[id];
            op.kind = OpKind::Binary(BinaryOp::Mul);
            op.operands = vec![x, x];
        }
    }
}
