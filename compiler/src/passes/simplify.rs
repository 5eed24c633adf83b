//! Algebraic simplification that is exact in IEEE arithmetic, plus constant folding
//! of scalar float ops.
//!
//! Rewrites (only when the result has the type of the kept operand, so a
//! broadcast is never dropped): `x - 0 → x`, `x * 1 → x`, `1 * x → x`,
//! `x / 1 → x`, `neg(neg x) → x`, `tuple.get[k] (tuple a0, …) → ak`, `index(insert(t, v, i),
//! i) → v` (the element just written, when the insert has another reader and so stays, with
//! its bounds check), and `x + 0 → x`, `0 + x → x`. The last two are
//! exact except for the sign of a zero (`-0.0 + 0.0` is `+0.0`); the pass accepts
//! that. A zero or one may be a scalar `const` or a `tensor.full` of one.
//!
//! `x * 0 → 0` is **not** applied: it is false for infinite and NaN `x`. The
//! differentiation passes avoid creating such products in the first place (they
//! track zeros symbolically).
//!
//! Folding: a unary or binary float op whose operands are all scalar constants is
//! evaluated with the same routines as the interpreter and becomes a `const`; so
//! does a comparison of two scalar float constants (a `bool`), and a `select`
//! whose condition is a `bool` constant becomes the operand it picks.

use std::collections::HashMap;

use super::subst;
use crate::ir::{BinaryOp, Function, Literal, OpKind, Region, Type, UnaryOp, ValueId};

fn const_of(f: &Function, consts: &HashMap<ValueId, f64>, v: ValueId) -> Option<f64> {
    consts
        .get(&v)
        .copied()
        .filter(|_| f.ty(v).scalar_kind().is_some_and(|k| k.is_float()))
}

fn collect(
    f: &Function,
    r: &Region,
    consts: &mut HashMap<ValueId, f64>,
    defs: &mut HashMap<ValueId, crate::ir::OpId>,
    order: &mut Vec<crate::ir::OpId>,
) {
    for &id in &r.ops {
        order.push(id);
        let op = &f.ops[id];
        for &res in &op.results {
            defs.insert(res, id);
        }
        match op.kind {
            OpKind::Const(Literal::F64(x)) => {
                consts.insert(op.results[0], x);
            }
            OpKind::Const(Literal::F32(x)) => {
                consts.insert(op.results[0], x as f64);
            }
            OpKind::Const(Literal::Bool(x)) => {
                consts.insert(op.results[0], if x { 1.0 } else { 0.0 });
            }
            OpKind::Full => {
                if let Some(&x) = consts.get(&op.operands[0]) {
                    consts.insert(op.results[0], x);
                }
            }
            _ => {}
        }
        for nr in &op.regions {
            collect(f, nr, consts, defs, order);
        }
    }
}

/// Simplifies `f`; returns whether anything changed.
pub fn simplify(f: &mut Function) -> bool {
    let mut consts = HashMap::new();
    let mut defs = HashMap::new();
    let mut ids = Vec::new();
    collect(f, &f.body, &mut consts, &mut defs, &mut ids);
    let uses = crate::analysis::use_counts(f);
    let mut map: HashMap<ValueId, ValueId> = HashMap::new();
    let mut folded = Vec::new();
    let mut folded_bool = Vec::new();
    let bool_const = |v: ValueId| {
        (*f.ty(v) == Type::Scalar(crate::ir::ScalarKind::Bool))
            .then(|| consts.get(&v).map(|&x| x != 0.0))
            .flatten()
    };
    for id in ids {
        let op = &f.ops[id];
        if op.results.len() != 1 {
            continue;
        }
        let y = op.results[0];
        let same = |v: ValueId| f.ty(v) == f.ty(y);
        let c = |v: ValueId| const_of(f, &consts, v);
        let scalar = matches!(f.ty(y), Type::Scalar(k) if k.is_float());
        match op.kind {
            OpKind::Binary(b) => {
                let (a, bb) = (op.operands[0], op.operands[1]);
                if scalar
                    && let (Some(x), Some(z)) = (c(a), c(bb))
                    && !b.is_comparison()
                    && !b.is_logical()
                {
                    folded.push((id, b.f64(x, z)));
                    continue;
                }
                if b.is_comparison()
                    && *f.ty(y) == Type::Scalar(crate::ir::ScalarKind::Bool)
                    && let (Some(x), Some(z)) = (c(a), c(bb))
                {
                    folded_bool.push((id, b.cmp_f64(x, z)));
                    continue;
                }
                let pick = match b {
                    BinaryOp::Add if c(bb) == Some(0.0) && same(a) => Some(a),
                    BinaryOp::Add if c(a) == Some(0.0) && same(bb) => Some(bb),
                    BinaryOp::Sub if c(bb) == Some(0.0) && same(a) => Some(a),
                    BinaryOp::Mul if c(bb) == Some(1.0) && same(a) => Some(a),
                    BinaryOp::Mul if c(a) == Some(1.0) && same(bb) => Some(bb),
                    BinaryOp::Div if c(bb) == Some(1.0) && same(a) => Some(a),
                    _ => None,
                };
                if let Some(p) = pick {
                    map.insert(y, p);
                }
            }
            OpKind::Unary(u) => {
                let x = op.operands[0];
                if scalar
                    && let Some(v) = c(x)
                    && u != UnaryOp::Not
                {
                    folded.push((id, u.f64(v)));
                    continue;
                }
                if u == UnaryOp::Neg
                    && let Some(&d) = defs.get(&x)
                    && f.ops[d].kind == OpKind::Unary(UnaryOp::Neg)
                {
                    map.insert(y, f.ops[d].operands[0]);
                }
            }
            OpKind::Select => {
                if let [cond, t, e] = op.operands[..]
                    && let Some(b) = bool_const(cond)
                {
                    let pick = if b { t } else { e };
                    if same(pick) {
                        map.insert(y, pick);
                    }
                }
            }
            OpKind::Index => {
                // `index(insert(t, v, i…), i…) → v`: the element just written (same index
                // values, the whole index, so `v` is the element), when something else reads
                // the insert too (it stays, with the bounds error it may raise; reverse mode's
                // chains of adjoint inserts are such).
                if let Some(&d) = defs.get(&op.operands[0])
                    && uses.get(&op.operands[0]).is_some_and(|&n| n >= 2)
                    && f.ops[d].kind == OpKind::Insert
                    && f.ops[d].operands.len() == op.operands.len() + 1
                    && f.ops[d].operands[2..] == op.operands[1..]
                    && same(f.ops[d].operands[1])
                {
                    map.insert(y, f.ops[d].operands[1]);
                }
            }
            OpKind::TupleGet(k) => {
                if let Some(&d) = defs.get(&op.operands[0])
                    && f.ops[d].kind == OpKind::Tuple
                    && let Some(&part) = f.ops[d].operands.get(k as usize)
                    && same(part)
                {
                    map.insert(y, part);
                }
            }
            _ => {}
        }
    }
    let changed = !map.is_empty() || !folded.is_empty() || !folded_bool.is_empty();
    for (id, b) in folded_bool {
        let op = &mut f.ops[id];
        op.kind = OpKind::Const(Literal::Bool(b));
        op.operands.clear();
    }
    for (id, v) in folded {
        let lit = match f.ty(f.ops[id].results[0]) {
            Type::Scalar(crate::ir::ScalarKind::F32) => Literal::F32(v as f32),
            _ => Literal::F64(v),
        };
        let op = &mut f.ops[id];
        op.kind = OpKind::Const(lit);
        op.operands.clear();
    }
    subst::apply(f, &map);
    changed
}
