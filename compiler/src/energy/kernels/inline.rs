//! Kernel preparation: inlining every call of a kernel, so that differentiation
//! and the clean-up passes see one straight-line body (symbolic zeros, CSE and
//! dead-code elimination then work across what were function boundaries), and
//! exact strength reduction of `pow(x, 2.0)` to `x * x`.
//!
//! Recursive callees (a function reachable from itself, [`crate::analysis::reaches`]) are
//! left as calls. The callee's body is copied by [`crate::passes::inline::copy_region`] and
//! uses are rewritten by [`crate::passes::subst`].

use std::collections::{HashMap, HashSet};

use crate::analysis::reaches;
use crate::ir::{
    BinaryOp, FuncRef, Function, Literal, Module, OpId, OpKind, Region, Type, ValueId,
};

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
    for _ in 0..MAX_ROUNDS {
        let mut func = std::mem::replace(
            &mut module.functions[f],
            Function::new("", &[], Type::unit()),
        );
        let mut map = HashMap::new();
        let mut body = std::mem::take(&mut func.body);
        let changed = inline_region(module, &mut func, &mut body, &mut map);
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

fn inline_region(
    module: &Module,
    f: &mut Function,
    r: &mut Region,
    map: &mut HashMap<ValueId, ValueId>,
) -> bool {
    let mut changed = false;
    let mut out = Vec::with_capacity(r.ops.len());
    for &id in &r.ops {
        let mut regions = std::mem::take(&mut f.ops[id].regions);
        for nr in &mut regions {
            changed |= inline_region(module, f, nr, map);
        }
        f.ops[id].regions = regions;
        let callee = match f.ops[id].kind {
            OpKind::Call(c) if !reaches(module, c, &[c]) => Some(c),
            _ => None,
        };
        let Some(c) = callee else {
            out.push(id);
            continue;
        };
        let src = &module.functions[c];
        let mut local: HashMap<ValueId, ValueId> = HashMap::new();
        for (&p, &a) in src.params().iter().zip(&f.ops[id].operands) {
            local.insert(p, a);
        }
        // Ops from the kernel's own source file keep their spans (a run-time error then shows
        // its own line); ops from another file (the standard library) take the span of the
        // call that reached them, in the kernel's file.
        // A function the compiler made around another (a derivative kernel's wrapper) takes
        // the file of the first function it inlines.
        if f.source_file.is_none() {
            f.source_file = src.source_file;
        }
        let span = (f.source_file.is_none() || src.source_file != f.source_file).then(|| f.span(id));
        let body = Region { args: Vec::new(), ops: src.body.ops.clone(), yields: src.body.yields.clone() };
        let copied = crate::passes::inline::copy_region(f, src, &body, &mut local, span);
        out.extend(copied.ops);
        for (&res, &y) in f.ops[id].results.clone().iter().zip(&copied.yields) {
            map.insert(res, y);
        }
        changed = true;
    }
    r.ops = out;
    changed
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
