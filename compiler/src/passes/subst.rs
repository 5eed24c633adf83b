//! Rewriting uses of values: after a pass decides that value `a` equals value `b`,
//! every operand and yield naming `a` is made to name `b`.

use std::collections::HashMap;

use crate::ir::{Function, Region, ValueId};

/// The end of `v`'s chain in `map`; a chain that comes back on itself (a defect of the
/// pass that built the map) stops after `map.len()` steps instead of looping.
fn resolve(map: &HashMap<ValueId, ValueId>, mut v: ValueId) -> ValueId {
    let mut steps = 0;
    while let Some(&w) = map.get(&v) {
        if w == v || steps > map.len() {
            break;
        }
        v = w;
        steps += 1;
    }
    v
}

fn region(f: &mut Function, r: &mut Region, map: &HashMap<ValueId, ValueId>) {
    for y in &mut r.yields {
        *y = resolve(map, *y);
    }
    for &id in &r.ops.clone() {
        let mut op = std::mem::replace(
            &mut f.ops[id],
            crate::ir::Op {
                kind: crate::ir::OpKind::Tuple,
                operands: vec![],
                results: vec![],
                regions: vec![],
            },
        );
        for x in &mut op.operands {
            *x = resolve(map, *x);
        }
        for nr in &mut op.regions {
            region(f, nr, map);
        }
        f.ops[id] = op;
    }
}

/// Replaces every use of a key of `map` by its (transitively resolved) value.
pub fn apply(f: &mut Function, map: &HashMap<ValueId, ValueId>) {
    if map.is_empty() {
        return;
    }
    let mut body = std::mem::take(&mut f.body);
    region(f, &mut body, map);
    f.body = body;
}

/// As [`apply`], for the uses inside region `r` only (a region taken out of `f`).
pub fn apply_in_region(f: &mut Function, r: &mut Region, map: &HashMap<ValueId, ValueId>) {
    if !map.is_empty() {
        region(f, r, map);
    }
}
