//! Common-subexpression elimination: an op without regions and without effects
//! whose kind and operands equal those of an earlier op visible at its position
//! (same region or an enclosing one) is replaced by that op's results.

use rustc_hash::FxHashMap as HashMap;
use std::hash::{Hash, Hasher};

use super::subst;
use crate::ir::{Function, Literal, OpKind, Region, Type, ValueId};

type Key<'f> = (KindKey<'f>, Vec<ValueId>, Vec<Type>);

/// An op kind as a map key: literals are equal when their bits are (so `0.0` and `-0.0`
/// stay apart, and equal NaNs merge).
struct KindKey<'f>(&'f OpKind);

impl PartialEq for KindKey<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (self.0, other.0) {
            (OpKind::Const(a), OpKind::Const(b)) => literal_bits(*a) == literal_bits(*b),
            (a, b) => a == b,
        }
    }
}

impl Eq for KindKey<'_> {}

impl Hash for KindKey<'_> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        std::mem::discriminant(self.0).hash(h);
        match self.0 {
            OpKind::Const(l) => literal_bits(*l).hash(h),
            OpKind::Unary(u) => u.hash(h),
            OpKind::Binary(b) => b.hash(h),
            OpKind::Cast(k) => k.hash(h),
            OpKind::Extract(i) => i.hash(h),
            OpKind::DimOf(a) | OpKind::TupleGet(a) => a.hash(h),
            OpKind::Call(f) => f.index().hash(h),
            OpKind::PrintStr(s) => s.hash(h),
            OpKind::Permute(p) => p.hash(h),
            OpKind::ReduceTo(r) => r.hash(h),
            _ => {}
        }
    }
}

/// A literal's kind and bits.
fn literal_bits(l: Literal) -> (u8, u64) {
    match l {
        Literal::F64(x) => (0, x.to_bits()),
        Literal::F32(x) => (1, u64::from(x.to_bits())),
        Literal::I64(x) => (2, x as u64),
        Literal::Bool(x) => (3, u64::from(x)),
    }
}

fn region<'f>(
    f: &'f Function,
    r: &'f Region,
    scopes: &mut Vec<HashMap<Key<'f>, Vec<ValueId>>>,
    map: &mut HashMap<ValueId, ValueId>,
) {
    scopes.push(HashMap::default());
    for &id in &r.ops {
        let op = &f.ops[id];
        if op.regions.is_empty() && !op.kind.has_side_effect() {
            let operands: Vec<ValueId> = op
                .operands
                .iter()
                .map(|v| *map.get(v).unwrap_or(v))
                .collect();
            // Types are part of the key: `tensor.full` declares its result type.
            let tys: Vec<Type> = op.results.iter().map(|&v| f.ty(v).clone()).collect();
            let key = (KindKey(&op.kind), operands, tys);
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
    let mut map = HashMap::default();
    region(f, &f.body, &mut Vec::new(), &mut map);
    let changed = !map.is_empty();
    subst::apply(f, &map.into_iter().collect());
    changed
}
