//! Inlining of calls: a `call @g(args)` is replaced by a copy of `g`'s body with
//! `g`'s parameters bound to `args`. Used on the functions that the
//! differentiation operators create (`grad(f)` calls `f$grad`, which calls
//! `f$vjp` with the cotangent `1.0`), so that the clean-up passes see one body:
//! the constant cotangent folds and the adjoints that are selected away die.
//!
//! Only callees that cannot reach themselves or the caller through calls are
//! inlined (recursion depth, and so the recursion-limit error, is unchanged),
//! and only up to a size limit. The copy keeps the callee's op order, so
//! effects (`print`) happen in the same order.

use std::collections::HashMap;

use mad_grammar::span::Span;

use super::subst;
use crate::analysis::{op_count, reaches};
use crate::ir::{FuncRef, Function, Module, OpId, OpKind, Region, ValueId};

/// Largest callee (in ops) that is inlined.
pub const MAX_INLINE_OPS: usize = 4000;

/// A copy of region `r` of `src` into `dst`, with `src`'s values renamed through `map` (which
/// gets each copied value). The copies keep their spans, or all take `span` when given.
pub(crate) fn copy_region(
    dst: &mut Function,
    src: &Function,
    r: &Region,
    map: &mut HashMap<ValueId, ValueId>,
    span: Option<Span>,
) -> Region {
    let args = r
        .args
        .iter()
        .map(|&a| {
            let n = dst.new_value(src.ty(a).clone());
            map.insert(a, n);
            n
        })
        .collect();
    let mut ops = Vec::with_capacity(r.ops.len());
    for &id in &r.ops {
        let op = &src.ops[id];
        let operands = op
            .operands
            .iter()
            .map(|v| map.get(v).copied().unwrap_or(*v))
            .collect();
        let regions: Vec<Region> = op
            .regions
            .iter()
            .map(|nr| copy_region(dst, src, nr, map, span))
            .collect();
        let types = op.results.iter().map(|&v| src.ty(v).clone()).collect();
        let nid = dst.new_op(op.kind.clone(), operands, types, span.unwrap_or_else(|| src.span(id)));
        dst.ops[nid].regions = regions;
        for (&old, &new) in op.results.iter().zip(&dst.ops[nid].results) {
            map.insert(old, new);
        }
        ops.push(nid);
    }
    let yields = r
        .yields
        .iter()
        .map(|v| map.get(v).copied().unwrap_or(*v))
        .collect();
    Region { args, ops, yields }
}

/// Which calls [`inline_region`] inlines, and which spans the copies get.
pub(crate) struct Inlining<'a> {
    /// The callees that may be inlined.
    pub eligible: &'a dyn Fn(FuncRef) -> bool,
    /// Calls with any number of results (each bound to the callee's yield of its
    /// position), not only calls with one.
    pub any_results: bool,
    /// Copies of a callee from another source file than the caller's take the call's
    /// span (a run-time error then names the caller's line); else every copy keeps
    /// the callee's span.
    pub call_spans_across_files: bool,
}

/// Inlines the calls of region `r` (and regions nested in it) of `f` that `how` allows.
/// Records the result substitutions in `map`; returns whether anything changed.
pub(crate) fn inline_region(
    module: &Module,
    f: &mut Function,
    r: &mut Region,
    how: &Inlining<'_>,
    map: &mut HashMap<ValueId, ValueId>,
) -> bool {
    let mut changed = false;
    let mut out: Vec<OpId> = Vec::with_capacity(r.ops.len());
    for id in std::mem::take(&mut r.ops) {
        let mut regions = std::mem::take(&mut f.ops[id].regions);
        for nr in &mut regions {
            changed |= inline_region(module, f, nr, how, map);
        }
        f.ops[id].regions = regions;
        let op = &f.ops[id];
        if let OpKind::Call(g) = op.kind
            && (how.eligible)(g)
            && let Some(callee) = module.functions.get(g)
            && callee.params().len() == op.operands.len()
            && (how.any_results || (op.results.len() == 1 && callee.body.yields.len() == 1))
        {
            let mut vmap: HashMap<ValueId, ValueId> = HashMap::new();
            for (&p, &a) in callee.params().iter().zip(&op.operands) {
                vmap.insert(p, a);
            }
            let results = op.results.clone();
            let body = Region {
                args: Vec::new(),
                ops: callee.body.ops.clone(),
                yields: callee.body.yields.clone(),
            };
            // A function made by the compiler (no source of its own) takes the file of
            // the first callee it inlines, so errors in the inlined code still point at
            // the source.
            let span = if how.call_spans_across_files {
                if f.source_file.is_none() {
                    f.source_file = callee.source_file;
                }
                (f.source_file.is_none() || callee.source_file != f.source_file).then(|| f.span(id))
            } else {
                None
            };
            let copied = copy_region(f, callee, &body, &mut vmap, span);
            if f.source_file.is_none() {
                f.source_file = callee.source_file;
            }
            out.extend(copied.ops);
            for (&res, &y) in results.iter().zip(&copied.yields) {
                map.insert(res, y);
            }
            changed = true;
        } else {
            out.push(id);
        }
    }
    r.ops = out;
    changed
}

/// Inlines into `f` every call of a function that reaches neither itself nor `f`
/// and has at most [`MAX_INLINE_OPS`] ops (a split-mode `g$vjp` of a recursive
/// `g`, [`Module::is_split_vjp`], stays a call, so that reverse mode of the caller finds
/// it), repeating for calls that the copies
/// bring in (at most `rounds` times). Returns whether anything changed.
pub fn inline_calls(module: &mut Module, f: FuncRef, rounds: usize) -> bool {
    let mut changed = false;
    for _ in 0..rounds {
        let mut size: HashMap<FuncRef, usize> = HashMap::new();
        let mut ok: HashMap<FuncRef, bool> = HashMap::new();
        for (_, op) in module.functions[f].ops.iter() {
            if let OpKind::Call(g) = op.kind
                && g != f
                && !ok.contains_key(&g)
            {
                let n = module.functions.get(g).map_or(0, |callee| op_count(callee, &callee.body));
                size.insert(g, n);
                ok.insert(
                    g,
                    module.functions.get(g).is_some()
                        && n <= MAX_INLINE_OPS
                        && !reaches(module, g, &[g, f])
                        && !module.is_split_vjp(g),
                );
            }
        }
        if !ok.values().any(|&b| b) {
            break;
        }
        let mut func = std::mem::replace(
            &mut module.functions[f],
            Function::new("", &[], crate::ir::Type::Tuple(vec![])),
        );
        let mut body = std::mem::take(&mut func.body);
        let mut map = HashMap::new();
        let eligible = |g: FuncRef| ok.get(&g).copied().unwrap_or(false);
        // The callees may come from several files (a derivative of a function calling
        // another file's), and the copies are placed in `f`'s.
        let how = Inlining { eligible: &eligible, any_results: false, call_spans_across_files: true };
        let did = inline_region(module, &mut func, &mut body, &how, &mut map);
        func.body = body;
        subst::apply(&mut func, &map);
        module.functions[f] = func;
        changed |= did;
        if !did {
            break;
        }
    }
    changed
}


/// Inlines into `f` its calls of differentiation-operator functions
/// ([`Module::is_operator_function`]) that reach neither themselves nor `f`, have at most
/// [`MAX_INLINE_OPS`] ops and point into the same source file (so a run-time
/// error inside the copy names the same place as the call would). The
/// operator's body was cleaned when it was built; the caller is not cleaned
/// (its own ops, and the errors they may raise, stay as written). Returns
/// whether anything changed.
pub fn inline_operator_calls(module: &mut Module, f: FuncRef) -> bool {
    let caller_file = module.functions[f].source_file;
    let mut ok: HashMap<FuncRef, bool> = HashMap::new();
    for (_, op) in module.functions[f].ops.iter() {
        if let OpKind::Call(g) = op.kind
            && !ok.contains_key(&g)
        {
            let eligible = g != f
                && module.functions.get(g).is_some_and(|callee| {
                    let n = op_count(callee, &callee.body);
                    module.is_operator_function(g)
                        && callee.source_file == caller_file
                        && n <= MAX_INLINE_OPS
                })
                && !reaches(module, g, &[g, f]);
            ok.insert(g, eligible);
        }
    }
    if !ok.values().any(|&b| b) {
        return false;
    }
    let mut func = std::mem::replace(
        &mut module.functions[f],
        Function::new("", &[], crate::ir::Type::Tuple(vec![])),
    );
    let mut body = std::mem::take(&mut func.body);
    let mut map = HashMap::new();
    let eligible = |g: FuncRef| ok.get(&g).copied().unwrap_or(false);
    let how = Inlining { eligible: &eligible, any_results: false, call_spans_across_files: false };
    let did = inline_region(module, &mut func, &mut body, &how, &mut map);
    func.body = body;
    subst::apply(&mut func, &map);
    module.functions[f] = func;
    did
}
