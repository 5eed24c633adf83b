//! Which values of a function can receive a **routed zero** adjoint in reverse mode: an
//! adjoint that is exactly 0 because the control flow or a selection sent the result's
//! adjoint elsewhere, at points where the value itself may be infinite or NaN.
//!
//! Reverse mode multiplies a product's adjoint ḡ by the other factor: `ḡ·b`. Where ḡ is a
//! routed zero and b is infinite (the untaken side of `select(x > 0.0, log(x) * y, …)` at
//! x = 0) that reads NaN, which would then reach the taken side's adjoints. The product
//! rule guards against it with a strong zero ([`super::super::emit::Emitter::strong_mul`],
//! four operations instead of one) only for the products whose result is in this set, so
//! straight-line arithmetic (the bulk of most gradients) keeps plain products.
//!
//! Seeds — values whose adjoint may be 0 at run time while they are not:
//! - the two value operands of `select`, both operands of `min`/`max` (the unchosen one
//!   gets 0);
//! - the arguments of a call (the callee may route them away);
//! - values used inside a region (an `if` branch, a loop body) but defined outside it,
//!   and values a branch yields from outside it (the other branch, or zero trips, leaves
//!   them no adjoint).
//!
//! A routed zero travels back to everything the seed was computed from (a product with a
//! routed-zero adjoint gives routed zeros to both factors), so the set is the seeds and all
//! their ancestors: the operands of their defining ops, and for results of `if`/loops and
//! loop-carried arguments, the regions' yields and the ops' operands.

use std::collections::{HashMap, HashSet};

use crate::ir::{BinaryOp, Function, OpId, OpKind, Region, ValueId};

/// Where each value is defined: its region's number, and its defining op (`None` for
/// region arguments, whose owner op is given instead).
struct Defs {
    region: HashMap<ValueId, usize>,
    op: HashMap<ValueId, OpId>,
    owner: HashMap<ValueId, OpId>,
}

fn number_regions<'a>(
    f: &'a Function,
    r: &'a Region,
    owner: Option<OpId>,
    defs: &mut Defs,
    regions: &mut Vec<&'a Region>,
) {
    let me = regions.len();
    regions.push(r);
    for &a in &r.args {
        defs.region.insert(a, me);
        if let Some(o) = owner {
            defs.owner.insert(a, o);
        }
    }
    for &id in &r.ops {
        let op = &f.ops[id];
        for &res in &op.results {
            defs.region.insert(res, me);
            defs.op.insert(res, id);
        }
        for nr in &op.regions {
            number_regions(f, nr, Some(id), defs, regions);
        }
    }
}

/// The values of `f` that may receive a routed zero adjoint (module docs).
pub(crate) fn routed_values(f: &Function) -> HashSet<ValueId> {
    let mut defs = Defs {
        region: HashMap::new(),
        op: HashMap::new(),
        owner: HashMap::new(),
    };
    let mut regions = Vec::new();
    number_regions(f, &f.body, None, &mut defs, &mut regions);
    let outside = |v: ValueId, r: usize| defs.region.get(&v).is_some_and(|&d| d != r);
    let mut work: Vec<ValueId> = Vec::new();
    for (r, region) in regions.iter().enumerate() {
        for &id in &region.ops {
            let op = &f.ops[id];
            work.extend(op.operands.iter().copied().filter(|&v| outside(v, r)));
            match op.kind {
                OpKind::Select => work.extend(op.operands.iter().skip(1).copied()),
                OpKind::Binary(BinaryOp::Min | BinaryOp::Max) | OpKind::Call(_) => {
                    work.extend(op.operands.iter().copied())
                }
                _ => {}
            }
        }
        work.extend(region.yields.iter().copied().filter(|&v| outside(v, r)));
    }
    let mut routed: HashSet<ValueId> = HashSet::new();
    while let Some(v) = work.pop() {
        if !routed.insert(v) {
            continue;
        }
        let producer = defs.op.get(&v).or_else(|| defs.owner.get(&v));
        if let Some(&id) = producer {
            let op = &f.ops[id];
            work.extend(op.operands.iter().copied());
            for nr in &op.regions {
                work.extend(nr.yields.iter().copied());
            }
        }
    }
    routed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::parse::parse_module;

    /// The op kinds of the routed op results of the first function of `src`, sorted.
    fn routed_names(src: &str) -> Vec<String> {
        let m = parse_module(src).unwrap();
        let (_, f) = m.functions.iter().next().unwrap();
        let set = routed_values(f);
        let mut out: Vec<String> = f
            .ops
            .iter()
            .filter(|(_, op)| op.results.iter().any(|r| set.contains(r)))
            .map(|(_, op)| op.kind.name().to_string())
            .collect();
        out.sort();
        out
    }

    #[test]
    fn straight_line_products_are_not_routed() {
        let src = "func @f(%x: f64, %y: f64) -> f64 {\n  %a = mul %x, %y : f64\n  %b = mul %a, %a : f64\n  return %b\n}\n";
        assert!(routed_names(src).is_empty());
    }

    #[test]
    fn the_sides_of_a_select_and_their_ancestors_are_routed() {
        let src = "func @f(%x: f64, %y: f64) -> f64 {\n  %z = const 0.0 : f64\n  %c = gt %x, %z : bool\n  %l = log %x : f64\n  %p = mul %l, %y : f64\n  %q = mul %y, %y : f64\n  %s = select %c, %p, %q : f64\n  %t = mul %s, %s : f64\n  return %t\n}\n";
        // p, q and log(x) are routed; t (after the select) is not.
        assert_eq!(routed_names(src), vec!["log", "mul", "mul"]);
    }
}
