//! Kernel-local folding after inlining: scalarizes small rank-1 tensors and
//! tuples whose components are known, and folds the structural zeros that
//! derivative seeds leave (see the numerics note in [`super`]).
//!
//! Rewrites, on a function's top-level region (nested regions are left alone):
//! - `tuple.get[i](tuple(a…))` → `aᵢ`; `tensor.extract[i]` / `tensor.index` with a
//!   constant index of a tensor whose components are known (`tensor.pack`,
//!   `tensor.full`, `tensor.insert` at a constant index, or an elementwise op of
//!   such) → the component;
//! - an elementwise unary or binary op on known components → one scalar op per
//!   component; `tensor.sum` → a chain of additions;
//! - scalar `0·x`, `x·0`, `0/x`, `-0` → `0`; `0 − x` → `−x`; `x ± 0` → `x`;
//!   `1·x`, `x·1` → `x`; comparisons of constants; `select` on a constant
//!   condition or of equal arms;
//! - signs moved outwards (so that the Hessian columns of seeds `−eᵢ` and
//!   `eᵢ` share their code after CSE): `−(−a)` → `a`, `−c` → the constant,
//!   `(−1)·x`, `x·(−1)`, `x/(−1)` → `−x`, `(−a)·b`, `a·(−b)`, `(−a)/b`, `a/(−b)` →
//!   `−(a·b)` (`−(a/b)`), `(−a)·(−b)` → `a·b`, `a + (−b)` → `a − b`, `(−a) + b` →
//!   `b − a`, `(−a) + (−b)` → `−(a + b)`, `a − (−b)` → `a + b`, `(−a) − b` →
//!   `−(a + b)`, `(−a) − (−b)` → `b − a`, `select(c, −a, −b)` → `−select(c, a, b)`
//!   (also with a constant arm `k` → `−k`). IEEE rounding is symmetric in sign,
//!   so these are exact except that a zero result may change its sign (and a
//!   constant `0` arm of a `select` keeps `+0`).
//!
//! The original ops stay until dead-code elimination removes the unused ones.

use std::collections::HashMap;

use crate::ir::{
    BinaryOp, Dim, FuncRef, Function, Literal, Module, OpId, OpKind, ScalarKind, Type, UnaryOp,
    ValueId,
};

struct Folder<'f> {
    f: &'f mut Function,
    out: Vec<OpId>,
    map: HashMap<ValueId, ValueId>,
    comps: HashMap<ValueId, Vec<ValueId>>,
    fconst: HashMap<ValueId, f64>,
    /// `v` → `a` where `v = −a` (f64 scalars).
    negof: HashMap<ValueId, ValueId>,
    bconst: HashMap<ValueId, bool>,
    iconst: HashMap<ValueId, i64>,
    zero: Option<ValueId>,
    changed: bool,
    span: mad_grammar::span::Span,
}

fn rank1_len(t: &Type) -> Option<usize> {
    match t {
        Type::Tensor {
            elem: ScalarKind::F64,
            shape,
        } if shape.len() == 1 => match shape[0] {
            Dim::Fixed(n) if n <= 64 => Some(n as usize),
            _ => None,
        },
        _ => None,
    }
}

impl Folder<'_> {
    fn r(&self, v: ValueId) -> ValueId {
        let mut v = v;
        while let Some(&w) = self.map.get(&v) {
            if w == v {
                break;
            }
            v = w;
        }
        v
    }

    fn emit(&mut self, kind: OpKind, operands: Vec<ValueId>, ty: Type) -> ValueId {
        let id = self.f.new_op(kind, operands, vec![ty], self.span);
        self.out.push(id);
        let v = self.f.ops[id].results[0];
        self.note(id);
        v
    }

    fn zero(&mut self) -> ValueId {
        if let Some(z) = self.zero {
            return z;
        }
        let z = self.emit(OpKind::Const(Literal::F64(0.0)), vec![], Type::F64);
        self.zero = Some(z);
        z
    }

    /// Records constants and known components of a kept op.
    fn note(&mut self, id: OpId) {
        let op = &self.f.ops[id];
        let Some(&res) = op.results.first() else {
            return;
        };
        match &op.kind {
            OpKind::Const(Literal::F64(x)) => {
                self.fconst.insert(res, *x);
            }
            OpKind::Unary(UnaryOp::Neg) if *self.f.ty(res) == Type::F64 => {
                self.negof.insert(res, op.operands[0]);
            }
            OpKind::Const(Literal::Bool(b)) => {
                self.bconst.insert(res, *b);
            }
            OpKind::Const(Literal::I64(i)) => {
                self.iconst.insert(res, *i);
            }
            OpKind::Tuple => {
                self.comps.insert(res, op.operands.clone());
            }
            OpKind::Pack if rank1_len(self.f.ty(res)).is_some() => {
                self.comps.insert(res, op.operands.clone());
            }
            OpKind::Full => {
                if let Some(n) = rank1_len(self.f.ty(res)) {
                    self.comps.insert(res, vec![op.operands[0]; n]);
                }
            }
            _ => {}
        }
    }

    /// A scalar f64 operand's components for an elementwise op of length n.
    fn parts(&self, v: ValueId, n: usize) -> Option<Vec<ValueId>> {
        if *self.f.ty(v) == Type::F64 {
            return Some(vec![v; n]);
        }
        self.comps.get(&v).filter(|c| c.len() == n).cloned()
    }

    /// An f64 constant (`±0` → the shared `0`).
    fn konst(&mut self, c: f64) -> ValueId {
        if c == 0.0 {
            return self.zero();
        }
        self.emit(OpKind::Const(Literal::F64(c)), vec![], Type::F64)
    }

    /// `−x`, folded through negations and constants.
    fn neg(&mut self, x: ValueId) -> ValueId {
        if let Some(&a) = self.negof.get(&x) {
            return a;
        }
        if let Some(&c) = self.fconst.get(&x) {
            return self.konst(-c);
        }
        self.changed = true;
        self.emit(OpKind::Unary(UnaryOp::Neg), vec![x], Type::F64)
    }

    /// The sign rules of the module docs for a scalar f64 binary op.
    fn sign_fold(&mut self, b: BinaryOp, x: ValueId, y: ValueId) -> Option<ValueId> {
        let (nx, ny) = (self.negof.get(&x).copied(), self.negof.get(&y).copied());
        let (cx, cy) = (self.fconst.get(&x).copied(), self.fconst.get(&y).copied());
        match b {
            BinaryOp::Mul | BinaryOp::Div => {
                if b == BinaryOp::Mul && cx == Some(-1.0) {
                    return Some(self.neg(y));
                }
                if cy == Some(-1.0) {
                    return Some(self.neg(x));
                }
                match (nx, ny) {
                    (Some(a), Some(c)) => Some(self.scalar_binary(b, a, c)),
                    (Some(a), None) => {
                        let p = self.scalar_binary(b, a, y);
                        Some(self.neg(p))
                    }
                    (None, Some(c)) => {
                        let p = self.scalar_binary(b, x, c);
                        Some(self.neg(p))
                    }
                    (None, None) => None,
                }
            }
            BinaryOp::Add => match (nx, ny) {
                (Some(a), Some(c)) => {
                    let p = self.scalar_binary(BinaryOp::Add, a, c);
                    Some(self.neg(p))
                }
                (None, Some(c)) => Some(self.scalar_binary(BinaryOp::Sub, x, c)),
                (Some(a), None) => Some(self.scalar_binary(BinaryOp::Sub, y, a)),
                (None, None) => None,
            },
            BinaryOp::Sub => match (nx, ny) {
                (Some(a), Some(c)) => Some(self.scalar_binary(BinaryOp::Sub, c, a)),
                (None, Some(c)) => Some(self.scalar_binary(BinaryOp::Add, x, c)),
                (Some(a), None) => {
                    let p = self.scalar_binary(BinaryOp::Add, a, y);
                    Some(self.neg(p))
                }
                (None, None) => None,
            },
            _ => None,
        }
    }

    /// `select(c, a, b)` of f64 scalars with negated arms → `−select(c, …)`.
    fn sign_select(&mut self, c: ValueId, a: ValueId, b: ValueId) -> Option<ValueId> {
        let arm = |s: &Self, v: ValueId| -> Option<Result<ValueId, f64>> {
            match (s.negof.get(&v), s.fconst.get(&v)) {
                (Some(&n), _) => Some(Ok(n)),
                (None, Some(&k)) => Some(Err(k)),
                _ => None,
            }
        };
        let (pa, pb) = (arm(self, a)?, arm(self, b)?);
        if pa.is_err() && pb.is_err() {
            return None;
        }
        let inner = |s: &mut Self, p: Result<ValueId, f64>| match p {
            Ok(v) => v,
            Err(k) => s.konst(-k),
        };
        let (ia, ib) = (inner(self, pa), inner(self, pb));
        self.changed = true;
        let sel = self.emit(OpKind::Select, vec![c, ia, ib], Type::F64);
        Some(self.neg(sel))
    }

    fn scalar_binary(&mut self, b: BinaryOp, x: ValueId, y: ValueId) -> ValueId {
        let (cx, cy) = (self.fconst.get(&x).copied(), self.fconst.get(&y).copied());
        if let Some(v) = self.sign_fold(b, x, y) {
            return v;
        }
        match b {
            BinaryOp::Mul if cx == Some(0.0) || cy == Some(0.0) => return self.zero(),
            BinaryOp::Mul if cx == Some(1.0) => return y,
            BinaryOp::Mul if cy == Some(1.0) => return x,
            BinaryOp::Div if cx == Some(0.0) => return self.zero(),
            BinaryOp::Add if cx == Some(0.0) => return y,
            BinaryOp::Add | BinaryOp::Sub if cy == Some(0.0) => return x,
            BinaryOp::Sub if cx == Some(0.0) => return self.scalar_unary(UnaryOp::Neg, y),
            _ => {}
        }
        self.changed = true;
        self.emit(OpKind::Binary(b), vec![x, y], Type::F64)
    }

    fn scalar_unary(&mut self, u: UnaryOp, x: ValueId) -> ValueId {
        if u == UnaryOp::Neg {
            return self.neg(x);
        }
        self.changed = true;
        self.emit(OpKind::Unary(u), vec![x], Type::F64)
    }

    /// Folds op `id` (operands already resolved); returns whether to keep it.
    fn fold(&mut self, id: OpId) -> bool {
        let op = self.f.ops[id].clone();
        if op.results.len() != 1 || !op.regions.is_empty() {
            return true;
        }
        let res = op.results[0];
        let rty = self.f.ty(res).clone();
        let replace = |s: &mut Self, v: ValueId| {
            s.map.insert(res, v);
            s.changed = true;
            false
        };
        match op.kind {
            OpKind::TupleGet(i) => {
                if let Some(c) = self
                    .comps
                    .get(&op.operands[0])
                    .and_then(|c| c.get(i as usize))
                    .copied()
                {
                    return replace(self, c);
                }
            }
            OpKind::Extract(i) => {
                if let Some(c) = self
                    .comps
                    .get(&op.operands[0])
                    .and_then(|c| c.get(i as usize))
                    .copied()
                {
                    return replace(self, c);
                }
            }
            OpKind::Index if op.operands.len() == 2 => {
                if let (Some(c), Some(&i)) = (
                    self.comps.get(&op.operands[0]),
                    self.iconst.get(&op.operands[1]),
                ) && let Some(&v) = usize::try_from(i).ok().and_then(|i| c.get(i))
                {
                    return replace(self, v);
                }
            }
            OpKind::Insert if op.operands.len() == 3 => {
                if let (Some(c), Some(&i)) = (
                    self.comps.get(&op.operands[0]).cloned(),
                    self.iconst.get(&op.operands[2]),
                ) && let Ok(i) = usize::try_from(i)
                    && i < c.len()
                    && *self.f.ty(op.operands[1]) == Type::F64
                {
                    let mut c = c;
                    c[i] = op.operands[1];
                    self.comps.insert(res, c);
                }
            }
            OpKind::Sum => {
                if let Some(c) = self.comps.get(&op.operands[0]).cloned()
                    && !c.is_empty()
                    && rty == Type::F64
                {
                    let mut acc = c[0];
                    for &x in &c[1..] {
                        acc = self.scalar_binary(BinaryOp::Add, acc, x);
                    }
                    return replace(self, acc);
                }
            }
            OpKind::Unary(u) if rank1_len(&rty).is_some() => {
                let n = rank1_len(&rty).unwrap_or(0);
                if matches!(u, UnaryOp::Not) {
                    return true;
                }
                if let Some(p) = self.parts(op.operands[0], n) {
                    let c: Vec<ValueId> = p.into_iter().map(|x| self.scalar_unary(u, x)).collect();
                    self.comps.insert(res, c);
                }
            }
            OpKind::Binary(b) if rank1_len(&rty).is_some() && !b.is_comparison() => {
                let n = rank1_len(&rty).unwrap_or(0);
                if let (Some(p), Some(q)) =
                    (self.parts(op.operands[0], n), self.parts(op.operands[1], n))
                {
                    let c: Vec<ValueId> = p
                        .into_iter()
                        .zip(q)
                        .map(|(x, y)| self.scalar_binary(b, x, y))
                        .collect();
                    self.comps.insert(res, c);
                }
            }
            OpKind::Binary(b) if rty == Type::F64 => {
                let (x, y) = (op.operands[0], op.operands[1]);
                let (cx, cy) = (self.fconst.get(&x).copied(), self.fconst.get(&y).copied());
                let folded = match b {
                    BinaryOp::Mul if cx == Some(0.0) || cy == Some(0.0) => Some(self.zero()),
                    BinaryOp::Mul if cx == Some(1.0) => Some(y),
                    BinaryOp::Mul if cy == Some(1.0) => Some(x),
                    BinaryOp::Div if cx == Some(0.0) => Some(self.zero()),
                    BinaryOp::Add if cx == Some(0.0) => Some(y),
                    BinaryOp::Add | BinaryOp::Sub if cy == Some(0.0) => Some(x),
                    BinaryOp::Sub if cx == Some(0.0) => Some(self.scalar_unary(UnaryOp::Neg, y)),
                    _ => None,
                };
                let folded = match folded {
                    Some(v) => Some(v),
                    None => self.sign_fold(b, x, y),
                };
                if let Some(v) = folded {
                    return replace(self, v);
                }
            }
            OpKind::Binary(b) if rty == Type::BOOL && b.is_comparison() => {
                if let (Some(&x), Some(&y)) = (
                    self.fconst.get(&op.operands[0]),
                    self.fconst.get(&op.operands[1]),
                ) {
                    let v = match b {
                        BinaryOp::Eq => x == y,
                        BinaryOp::Ne => x != y,
                        BinaryOp::Lt => x < y,
                        BinaryOp::Le => x <= y,
                        BinaryOp::Gt => x > y,
                        _ => x >= y,
                    };
                    let c = self.emit(OpKind::Const(Literal::Bool(v)), vec![], Type::BOOL);
                    return replace(self, c);
                }
            }
            OpKind::Unary(UnaryOp::Neg) if rty == Type::F64 => {
                let x = op.operands[0];
                if self.negof.contains_key(&x) || self.fconst.contains_key(&x) {
                    let v = self.neg(x);
                    return replace(self, v);
                }
            }
            OpKind::Select => {
                let (c, a, b) = (op.operands[0], op.operands[1], op.operands[2]);
                if let Some(&cv) = self.bconst.get(&c) {
                    return replace(self, if cv { a } else { b });
                }
                if a == b {
                    return replace(self, a);
                }
                if rty == Type::F64
                    && let Some(v) = self.sign_select(c, a, b)
                {
                    return replace(self, v);
                }
            }
            _ => {}
        }
        true
    }
}

/// One folding sweep over `f`'s top-level region; returns whether it changed.
pub fn fold(module: &mut Module, f: FuncRef) -> bool {
    let func = &mut module.functions[f];
    let ops = std::mem::take(&mut func.body.ops);
    let mut fo = Folder {
        f: func,
        out: Vec::with_capacity(ops.len()),
        map: HashMap::new(),
        comps: HashMap::new(),
        fconst: HashMap::new(),
        negof: HashMap::new(),
        bconst: HashMap::new(),
        iconst: HashMap::new(),
        zero: None,
        changed: false,
        span: mad_grammar::span::Span::default(),
    };
    for id in ops {
        let operands: Vec<ValueId> = fo.f.ops[id].operands.iter().map(|&v| fo.r(v)).collect();
        fo.f.ops[id].operands = operands;
        fo.span = fo.f.span(id);
        // Scalar ops emitted while folding go before the op itself.
        if fo.fold(id) {
            fo.out.push(id);
            fo.note(id);
        }
    }
    let map = std::mem::take(&mut fo.map);
    let changed = fo.changed;
    let out = std::mem::take(&mut fo.out);
    drop(fo);
    let func = &mut module.functions[f];
    func.body.ops = out;
    if !map.is_empty() {
        super::inline::substitute(func, &map);
    }
    changed
}
