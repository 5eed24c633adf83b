//! Loop-invariant code motion: scalar ops in the body of a `scf.for` or
//! `scf.while` whose operands are all defined outside the loop move in front of
//! it, so they run once instead of once per trip (the reverse sweep of a
//! gradient recomputes `1/σ`, `-w` and the strong-zero guards built from them in
//! every iteration otherwise).
//!
//! Only ops that can neither fail nor have an effect move: constants, float
//! arithmetic and math functions, comparisons, `select`, integer `+ - *`,
//! `min`/`max`, casts to floats, `tensor.extract` (its index is checked when the
//! IR is validated) and `tensor.dim`, each with scalar results. Running such an
//! op once before a loop that makes no trip only costs its time; every value is
//! computed by the same operation on the same operands, so results are the same
//! bits. Ops inside nested `if`s stay where they are; inner loops are treated
//! first, so an invariant of two nested loops leaves both.

use std::collections::HashSet;

use crate::analysis::defined_in;
use crate::ir::{BinaryOp, Function, OpId, OpKind, Region, ScalarKind, Type};

/// Hoists the loop-invariant ops of every loop of `f`; returns whether anything moved.
pub fn hoist(f: &mut Function) -> bool {
    let mut body = std::mem::take(&mut f.body);
    let changed = hoist_region(f, &mut body);
    f.body = body;
    changed
}

fn hoist_region(f: &mut Function, r: &mut Region) -> bool {
    let mut changed = false;
    let mut out: Vec<OpId> = Vec::with_capacity(r.ops.len());
    for id in std::mem::take(&mut r.ops) {
        let mut regions = std::mem::take(&mut f.ops[id].regions);
        for nr in &mut regions {
            changed |= hoist_region(f, nr);
        }
        let is_loop = matches!(f.ops[id].kind, OpKind::For | OpKind::While);
        if is_loop {
            let mut inside = HashSet::new();
            for nr in &regions {
                defined_in(f, nr, &mut inside);
            }
            for nr in &mut regions {
                let mut kept = Vec::with_capacity(nr.ops.len());
                for op_id in std::mem::take(&mut nr.ops) {
                    let op = &f.ops[op_id];
                    if movable(f, op_id) && op.operands.iter().all(|v| !inside.contains(v)) {
                        for v in &op.results {
                            inside.remove(v);
                        }
                        out.push(op_id);
                        changed = true;
                    } else {
                        kept.push(op_id);
                    }
                }
                nr.ops = kept;
            }
        }
        f.ops[id].regions = regions;
        out.push(id);
    }
    r.ops = out;
    changed
}


fn is_float(t: &Type) -> bool {
    matches!(t, Type::Scalar(ScalarKind::F64 | ScalarKind::F32))
}

/// Whether op `id` may run before its loop: no regions, no effect, cannot fail, scalar results.
fn movable(f: &Function, id: OpId) -> bool {
    let op = &f.ops[id];
    if !op.regions.is_empty()
        || op.results.is_empty()
        || !op
            .results
            .iter()
            .all(|&v| matches!(f.ty(v), Type::Scalar(_)))
    {
        return false;
    }
    let operand_float = |k: usize| op.operands.get(k).is_some_and(|&v| is_float(f.ty(v)));
    match &op.kind {
        OpKind::Const(_) | OpKind::Select | OpKind::Extract(_) | OpKind::DimOf(_) => true,
        OpKind::Unary(_) => operand_float(0),
        OpKind::Binary(b) => {
            operand_float(0)
                || !matches!(
                    b,
                    BinaryOp::Div
                        | BinaryOp::Rem
                        | BinaryOp::Pow
                        | BinaryOp::Atan2
                        | BinaryOp::Polygamma
                )
        }
        OpKind::Cast(to) => matches!(to, ScalarKind::F64 | ScalarKind::F32),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::parse::parse_module;

    fn body_kinds(f: &Function, r: &Region) -> Vec<&'static str> {
        r.ops.iter().map(|&id| f.ops[id].kind.name()).collect()
    }

    #[test]
    fn moves_invariant_float_ops_and_keeps_failing_ones() {
        let mut m = parse_module(
            "func @f(%x: tensor<f64; ?>, %s: f64, %k: i64, %n: i64) -> f64 {
  %z = const 0 : i64
  %a = const 0.0 : f64
  %r = scf.for %z, %n, %a : f64 {
  ^(%i: i64, %acc: f64):
    %one = const 1.0 : f64
    %inv = div %one, %s : f64
    %q = div %k, %n : i64
    %xi = tensor.index %x, %i : f64
    %t = mul %xi, %inv : f64
    %u = add %acc, %t : f64
    yield %u
  }
  return %r
}",
        )
        .unwrap();
        let (h, _) = m.functions.iter().next().unwrap();
        let f = &mut m.functions[h];
        assert!(hoist(f));
        assert_eq!(
            body_kinds(f, &f.body),
            vec!["const", "const", "const", "div", "scf.for"]
        );
        let lp = f.body.ops[4];
        // The integer division (may fail) and everything reading the index stay.
        assert_eq!(
            body_kinds(f, &f.ops[lp].regions[0]),
            vec!["div", "tensor.index", "mul", "add"]
        );
        assert!(!hoist(f));
    }
}
