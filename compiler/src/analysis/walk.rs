//! Walks over a function's nested regions.

use std::collections::HashMap;

use crate::ir::{Function, Op, OpId, OpKind, Region, ValueId};

/// Calls `visit` on every op of `r` and of the regions nested in it, each op before the ops of
/// its own regions (source order).
pub fn for_each_op<'f>(f: &'f Function, r: &'f Region, visit: &mut impl FnMut(OpId, &'f Op)) {
    for &id in &r.ops {
        let op = &f.ops[id];
        visit(id, op);
        for nr in &op.regions {
            for_each_op(f, nr, visit);
        }
    }
}

/// Adds to `out` every value defined in `r`: its arguments, the results of its ops, and
/// the same of every region nested in it.
pub fn defined_in(f: &Function, r: &Region, out: &mut impl Extend<ValueId>) {
    out.extend(r.args.iter().copied());
    for &id in &r.ops {
        let op = &f.ops[id];
        out.extend(op.results.iter().copied());
        for nr in &op.regions {
            defined_in(f, nr, out);
        }
    }
}

/// How many ops `r` holds, those of nested regions included (a size measure for inlining
/// and code-size heuristics).
pub fn op_count(f: &Function, r: &Region) -> usize {
    let mut n = 0;
    for_each_op(f, r, &mut |_, _| n += 1);
    n
}

/// The op that defines each op result of `r` and of the regions nested in it.
pub fn definitions(f: &Function, r: &Region) -> HashMap<ValueId, OpId> {
    let mut out = HashMap::new();
    for_each_op(f, r, &mut |id, op| out.extend(op.results.iter().map(|&v| (v, id))));
    out
}

/// The `scf.for` ops of `r` and of the regions nested in it, outer loops before the loops
/// nested in them, in source order.
pub fn for_loops(f: &Function, r: &Region) -> Vec<OpId> {
    let mut out = Vec::new();
    for_each_op(f, r, &mut |id, op| {
        if op.kind == OpKind::For {
            out.push(id);
        }
    });
    out
}

/// Adds to `out` every value `r` reads: its yields and the operands of its ops, and the
/// same of every region nested in it.
pub fn used_in(f: &Function, r: &Region, out: &mut impl Extend<ValueId>) {
    out.extend(r.yields.iter().copied());
    for &id in &r.ops {
        let op = &f.ops[id];
        out.extend(op.operands.iter().copied());
        for nr in &op.regions {
            used_in(f, nr, out);
        }
    }
}

/// Whether every op of `r` (nested regions included) satisfies `ok`.
pub fn all_ops(f: &Function, r: &Region, ok: &dyn Fn(&OpKind) -> bool) -> bool {
    r.ops.iter().all(|&id| {
        let op = &f.ops[id];
        ok(&op.kind) && op.regions.iter().all(|nr| all_ops(f, nr, ok))
    })
}

/// How many times each value of `f` is read (as an operand or a region's yield), nested
/// regions included.
pub fn use_counts(f: &Function) -> HashMap<ValueId, usize> {
    fn walk(f: &Function, r: &Region, n: &mut HashMap<ValueId, usize>) {
        for &v in &r.yields {
            *n.entry(v).or_default() += 1;
        }
        for &id in &r.ops {
            for &v in &f.ops[id].operands {
                *n.entry(v).or_default() += 1;
            }
            for nr in &f.ops[id].regions {
                walk(f, nr, n);
            }
        }
    }
    let mut n = HashMap::new();
    walk(f, &f.body, &mut n);
    n
}

/// Adds to `out` the arguments of `r` and of every region nested in it (induction
/// variables, carried values).
pub fn region_args_in(f: &Function, r: &Region, out: &mut impl Extend<ValueId>) {
    out.extend(r.args.iter().copied());
    for_each_op(f, r, &mut |_, op| {
        for nr in &op.regions {
            out.extend(nr.args.iter().copied());
        }
    });
}
