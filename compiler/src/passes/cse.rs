//! Common-subexpression elimination: an op without regions and without effects
//! whose kind and operands equal those of an earlier op visible at its position
//! (same region or an enclosing one) is replaced by that op's results.

use std::collections::HashMap;

use super::subst;
use crate::ir::{Function, Region, ValueId};

type Key = (String, Vec<ValueId>);

fn region(
    f: &Function,
    r: &Region,
    scopes: &mut Vec<HashMap<Key, Vec<ValueId>>>,
    map: &mut HashMap<ValueId, ValueId>,
) {
    scopes.push(HashMap::new());
    for &id in &r.ops {
        let op = &f.ops[id];
        if op.regions.is_empty() && !op.kind.has_side_effect() {
            let operands: Vec<ValueId> = op
                .operands
                .iter()
                .map(|v| *map.get(v).unwrap_or(v))
                .collect();
            // Types are part of the key: `tensor.full` declares its result type.
            let tys: Vec<String> = op.results.iter().map(|&v| f.ty(v).to_string()).collect();
            let key = (format!("{:?} {}", op.kind, tys.join(",")), operands);
            if let Some(prev) = scopes.iter().rev().find_map(|s| s.get(&key)) {
                for (&a, &b) in op.results.iter().zip(prev) {
                    map.insert(a, b);
                }
                continue;
            }
            scopes
                .last_mut()
                .expect("scope")
                .insert(key, op.results.clone());
        }
        for nr in &op.regions {
            region(f, nr, scopes, map);
        }
    }
    scopes.pop();
}

/// Merges common subexpressions of `f`; returns whether anything changed. The
/// duplicates become dead (for [`super::dce`]).
pub fn cse(f: &mut Function) -> bool {
    let mut map = HashMap::new();
    region(f, &f.body, &mut Vec::new(), &mut map);
    subst::apply(f, &map);
    !map.is_empty()
}
