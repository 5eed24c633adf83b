//! Activity: which values of a function **vary** with its floating-point parameters, so
//! that a derivative can flow through them.
//!
//! A value varies when it is a parameter with a tangent type, or the result (with a tangent
//! type) of an op that reads a varying value, directly or, for `scf.if`, `scf.for` and
//! `scf.while`, anywhere in its regions (captured values included). Loop-carried region
//! arguments vary when the loop's initial values or its body's yields do, to a fixed point.
//! The analysis is conservative (a value that varies only in a branch never taken still
//! varies), and it is what decides whether a loop carries derivatives: a `while` loop whose
//! floating-point carried values do not vary (`let mut s = 1.0; while k < 3 { s = s * 2.0;
//! … }`) is a constant for differentiation, so reverse mode runs it as it is, without the
//! tape, and no adjoint enters it.

use std::collections::HashSet;

use super::tangent::tangent_type;
use crate::ir::{Function, Op, Region, ValueId};

/// The values of `f` that vary with its floating-point parameters (module docs).
pub fn varied_values(f: &Function) -> HashSet<ValueId> {
    let mut varied: HashSet<ValueId> = f
        .params()
        .iter()
        .copied()
        .filter(|&p| tangent_type(f.ty(p)).is_some())
        .collect();
    // Each pass can only add values; a pass that adds none is the fixed point.
    loop {
        let before = varied.len();
        visit(f, &f.body, &mut varied);
        if varied.len() == before {
            return varied;
        }
    }
}

/// Whether `op` has a result that varies.
pub fn op_varies(op: &Op, varied: &HashSet<ValueId>) -> bool {
    op.results.iter().any(|r| varied.contains(r))
}

/// Whether any value used in `r` (operands and yields, nested regions included) varies.
fn reads_varied(f: &Function, r: &Region, varied: &HashSet<ValueId>) -> bool {
    r.yields.iter().any(|v| varied.contains(v))
        || r.ops.iter().any(|&id| {
            let op = &f.ops[id];
            op.operands.iter().any(|v| varied.contains(v))
                || op.regions.iter().any(|nr| reads_varied(f, nr, varied))
        })
}

fn visit(f: &Function, r: &Region, varied: &mut HashSet<ValueId>) {
    for &id in &r.ops {
        let op = &f.ops[id];
        let inputs_vary = op.operands.iter().any(|v| varied.contains(v));
        if !op.regions.is_empty() {
            // Region arguments (carried values, induction variables) vary with the op's
            // inputs or with what its regions read.
            let regions_vary = op.regions.iter().any(|nr| reads_varied(f, nr, varied));
            if inputs_vary || regions_vary {
                for nr in &op.regions {
                    varied.extend(nr.args.iter().copied().filter(|&a| tangent_type(f.ty(a)).is_some()));
                }
            }
            for nr in &op.regions {
                visit(f, nr, varied);
            }
        }
        let vary = inputs_vary || op.regions.iter().any(|nr| reads_varied(f, nr, varied));
        if vary {
            varied.extend(op.results.iter().copied().filter(|&v| tangent_type(f.ty(v)).is_some()));
        }
    }
}
