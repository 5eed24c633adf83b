//! Kernel-local folding after inlining: scalarizes small f64 vectors and matrices and
//! tuples whose components are known, and folds the structural zeros that
//! derivative seeds leave (see the numerics note in [`crate::energy`]).
//!
//! Rewrites, in every region of a function (a nested region sees what is known of the
//! values around it; what is learnt inside it stays there):
//! - `tuple.get[i](tuple(a…))` → `aᵢ`; `tensor.extract[i]` / `tensor.index` with
//!   constant indices of a tensor whose components are known (`tensor.pack`,
//!   `tensor.full`, `tensor.insert` at a constant index, `tensor.transpose`,
//!   `tensor.matmul`, or an elementwise op of such) → the component (or the row);
//! - an elementwise unary or binary op on known components → one scalar op per
//!   component; `tensor.sum` → a chain of additions; `tensor.matmul` with a known
//!   operand → per entry the products and the left-to-right sum the code generator
//!   would emit (the other operand's entries read by `tensor.index`), so that the zeros
//!   and ones of a seed's tangent (`[u₁ − u₀, u₂ − u₀]` seeded at one coordinate)
//!   fold away instead of costing a product each;
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
    known: Known,
    /// Matrices and nested regions too (see [`fold`]).
    deep: bool,
    changed: bool,
    span: mad_grammar::span::Span,
}

fn rank1_len(t: &Type) -> Option<usize> {
    small_shape_upto(t, 1).map(|s| s[0])
}

/// The extents of an f64 vector or matrix of fixed shape with at most 64 entries.
fn small_shape_upto(t: &Type, max_rank: usize) -> Option<Vec<usize>> {
    let Type::Tensor {
        elem: ScalarKind::F64,
        shape,
    } = t
    else {
        return None;
    };
    if shape.is_empty() || shape.len() > max_rank {
        return None;
    }
    let dims: Option<Vec<usize>> = shape
        .iter()
        .map(|d| match d {
            Dim::Fixed(n) if *n >= 1 && *n <= 64 => Some(*n as usize),
            _ => None,
        })
        .collect();
    dims.filter(|d| d.iter().product::<usize>() <= 64)
}

/// What a [`Folder`] knows about values. A nested region starts from a copy of what is
/// known around it, and what it learns is dropped on leaving it (it names values only
/// that region sees).
#[derive(Clone, Default)]
struct Known {
    comps: HashMap<ValueId, Vec<ValueId>>,
    fconst: HashMap<ValueId, f64>,
    /// `v` → `a` where `v = −a` (f64 scalars).
    negof: HashMap<ValueId, ValueId>,
    bconst: HashMap<ValueId, bool>,
    iconst: HashMap<ValueId, i64>,
    /// The `i64` index constants emitted so far (in this region or around it).
    icache: HashMap<usize, ValueId>,
    zero: Option<ValueId>,
}

impl Folder<'_> {
    /// The extents of a vector (or, when folding deeply, a matrix) this pass scalarizes.
    fn small_shape(&self, t: &Type) -> Option<Vec<usize>> {
        small_shape_upto(t, if self.deep { 2 } else { 1 })
    }

    /// The number of entries of a [`Self::small_shape`] type.
    fn small_len(&self, t: &Type) -> Option<usize> {
        self.small_shape(t).map(|s| s.iter().product())
    }

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
        if let Some(z) = self.known.zero {
            return z;
        }
        let z = self.emit(OpKind::Const(Literal::F64(0.0)), vec![], Type::F64);
        self.known.zero = Some(z);
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
                self.known.fconst.insert(res, *x);
            }
            OpKind::Unary(UnaryOp::Neg) if *self.f.ty(res) == Type::F64 => {
                self.known.negof.insert(res, op.operands[0]);
            }
            OpKind::Const(Literal::Bool(b)) => {
                self.known.bconst.insert(res, *b);
            }
            OpKind::Const(Literal::I64(i)) => {
                self.known.iconst.insert(res, *i);
            }
            OpKind::Tuple => {
                self.known.comps.insert(res, op.operands.clone());
            }
            OpKind::Pack if rank1_len(self.f.ty(res)).is_some() => {
                self.known.comps.insert(res, op.operands.clone());
            }
            OpKind::Pack
                if self
                    .small_shape(self.f.ty(res))
                    .is_some_and(|s| s.len() == 2) =>
            {
                // Rows of known components, concatenated (row-major).
                let rows: Option<Vec<Vec<ValueId>>> = op
                    .operands
                    .iter()
                    .map(|r| self.known.comps.get(r).cloned())
                    .collect();
                if let Some(rows) = rows {
                    let flat: Vec<ValueId> = rows.concat();
                    if Some(flat.len()) == self.small_len(self.f.ty(res)) {
                        self.known.comps.insert(res, flat);
                    }
                }
            }
            OpKind::Full => {
                if let Some(n) = self.small_len(self.f.ty(res))
                    && *self.f.ty(op.operands[0]) == Type::F64
                {
                    self.known.comps.insert(res, vec![op.operands[0]; n]);
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
        self.known.comps.get(&v).filter(|c| c.len() == n).cloned()
    }

    /// Row `i` of a small matrix whose entries are known.
    fn row(&self, v: ValueId, i: Option<i64>) -> Option<Vec<ValueId>> {
        let c = self.known.comps.get(&v)?;
        let [m, n] = self.small_shape(self.f.ty(v))?[..] else {
            return None;
        };
        let i = usize::try_from(i?).ok().filter(|&i| i < m)?;
        Some(c[i * n..(i + 1) * n].to_vec())
    }

    /// An i64 constant (one per value in a region).
    fn index_const(&mut self, i: usize) -> ValueId {
        if let Some(&v) = self.known.icache.get(&i) {
            return v;
        }
        let v = self.emit(OpKind::Const(Literal::I64(i as i64)), vec![], Type::I64);
        self.known.icache.insert(i, v);
        v
    }

    /// The entries of small tensor `v` (row-major): known ones, or `tensor.index` reads.
    fn entries(&mut self, v: ValueId) -> Option<Vec<ValueId>> {
        if let Some(c) = self.known.comps.get(&v) {
            return Some(c.clone());
        }
        let shape = self.small_shape(self.f.ty(v))?;
        let mut out = Vec::with_capacity(shape.iter().product());
        match shape[..] {
            [n] => {
                for i in 0..n {
                    let ii = self.index_const(i);
                    out.push(self.emit(OpKind::Index, vec![v, ii], Type::F64));
                }
            }
            [m, n] => {
                for i in 0..m {
                    for j in 0..n {
                        let (ii, jj) = (self.index_const(i), self.index_const(j));
                        out.push(self.emit(OpKind::Index, vec![v, ii, jj], Type::F64));
                    }
                }
            }
            _ => return None,
        }
        self.known.comps.insert(v, out.clone());
        Some(out)
    }

    /// `a · b` of small matrices (or a matrix and a vector) when either one's entries
    /// are known: the products and their left-to-right sums, entry by entry.
    fn matmul(&mut self, a: ValueId, b: ValueId) -> Option<Vec<ValueId>> {
        if !self.known.comps.contains_key(&a) && !self.known.comps.contains_key(&b) {
            return None;
        }
        let (sa, sb) = (
            self.small_shape(self.f.ty(a))?,
            self.small_shape(self.f.ty(b))?,
        );
        let [m, k] = sa[..] else { return None };
        let n = match sb[..] {
            [k2, n] if k2 == k => n,
            [k2] if k2 == k => 1,
            _ => return None,
        };
        let (xs, ys) = (self.entries(a)?, self.entries(b)?);
        let mut out = Vec::with_capacity(m * n);
        for i in 0..m {
            for j in 0..n {
                let mut acc = self.scalar_binary(BinaryOp::Mul, xs[i * k], ys[j]);
                for p in 1..k {
                    let t = self.scalar_binary(BinaryOp::Mul, xs[i * k + p], ys[p * n + j]);
                    acc = self.scalar_binary(BinaryOp::Add, acc, t);
                }
                out.push(acc);
            }
        }
        Some(out)
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
        if let Some(&a) = self.known.negof.get(&x) {
            return a;
        }
        if let Some(&c) = self.known.fconst.get(&x) {
            return self.konst(-c);
        }
        self.changed = true;
        self.emit(OpKind::Unary(UnaryOp::Neg), vec![x], Type::F64)
    }

    /// The sign rules of the module docs for a scalar f64 binary op.
    fn sign_fold(&mut self, b: BinaryOp, x: ValueId, y: ValueId) -> Option<ValueId> {
        let (nx, ny) = (
            self.known.negof.get(&x).copied(),
            self.known.negof.get(&y).copied(),
        );
        let (cx, cy) = (
            self.known.fconst.get(&x).copied(),
            self.known.fconst.get(&y).copied(),
        );
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
            match (s.known.negof.get(&v), s.known.fconst.get(&v)) {
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
        let (cx, cy) = (
            self.known.fconst.get(&x).copied(),
            self.known.fconst.get(&y).copied(),
        );
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
                    .known
                    .comps
                    .get(&op.operands[0])
                    .and_then(|c| c.get(i as usize))
                    .copied()
                {
                    return replace(self, c);
                }
            }
            OpKind::Extract(i) if rank1_len(self.f.ty(op.operands[0])).is_some() => {
                if let Some(c) = self
                    .known
                    .comps
                    .get(&op.operands[0])
                    .and_then(|c| c.get(i as usize))
                    .copied()
                {
                    return replace(self, c);
                }
            }
            OpKind::Extract(i) => {
                if let Some(row) = self.row(op.operands[0], Some(i as i64)) {
                    self.known.comps.insert(res, row);
                }
            }
            OpKind::Index
                if op.operands.len() == 2 && rank1_len(self.f.ty(op.operands[0])).is_some() =>
            {
                if let (Some(c), Some(&i)) = (
                    self.known.comps.get(&op.operands[0]),
                    self.known.iconst.get(&op.operands[1]),
                ) && let Some(&v) = usize::try_from(i).ok().and_then(|i| c.get(i))
                {
                    return replace(self, v);
                }
            }
            OpKind::Index if op.operands.len() == 2 => {
                let i = self.known.iconst.get(&op.operands[1]).copied();
                if let Some(row) = self.row(op.operands[0], i) {
                    self.known.comps.insert(res, row);
                }
            }
            OpKind::Index if op.operands.len() == 3 => {
                if let (Some(c), Some(shape), Some(&i), Some(&j)) = (
                    self.known.comps.get(&op.operands[0]),
                    self.small_shape(self.f.ty(op.operands[0])),
                    self.known.iconst.get(&op.operands[1]),
                    self.known.iconst.get(&op.operands[2]),
                ) && let [m, n] = shape[..]
                    && let (Ok(i), Ok(j)) = (usize::try_from(i), usize::try_from(j))
                    && i < m
                    && j < n
                {
                    let v = c[i * n + j];
                    return replace(self, v);
                }
            }
            OpKind::Transpose => {
                if let (Some(c), Some(shape)) = (
                    self.known.comps.get(&op.operands[0]),
                    self.small_shape(self.f.ty(op.operands[0])),
                ) && let [m, n] = shape[..]
                {
                    let t = (0..n)
                        .flat_map(|j| (0..m).map(move |i| c[i * n + j]))
                        .collect();
                    self.known.comps.insert(res, t);
                }
            }
            OpKind::MatMul if op.operands.len() == 2 && self.small_len(&rty).is_some() => {
                if let Some(c) = self.matmul(op.operands[0], op.operands[1]) {
                    self.known.comps.insert(res, c);
                }
            }
            OpKind::Insert if op.operands.len() == 3 && rank1_len(&rty).is_some() => {
                if let (Some(c), Some(&i)) = (
                    self.known.comps.get(&op.operands[0]).cloned(),
                    self.known.iconst.get(&op.operands[2]),
                ) && let Ok(i) = usize::try_from(i)
                    && i < c.len()
                    && *self.f.ty(op.operands[1]) == Type::F64
                {
                    let mut c = c;
                    c[i] = op.operands[1];
                    self.known.comps.insert(res, c);
                }
            }
            OpKind::Sum if self.small_len(self.f.ty(op.operands[0])).is_some() => {
                if let Some(c) = self.known.comps.get(&op.operands[0]).cloned()
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
            OpKind::Unary(u) if self.small_len(&rty).is_some() => {
                let n = self.small_len(&rty).unwrap_or(0);
                if matches!(u, UnaryOp::Not) {
                    return true;
                }
                if let Some(p) = self.parts(op.operands[0], n) {
                    let c: Vec<ValueId> = p.into_iter().map(|x| self.scalar_unary(u, x)).collect();
                    self.known.comps.insert(res, c);
                }
            }
            OpKind::Binary(b) if self.small_len(&rty).is_some() && !b.is_comparison() => {
                let n = self.small_len(&rty).unwrap_or(0);
                if let (Some(p), Some(q)) =
                    (self.parts(op.operands[0], n), self.parts(op.operands[1], n))
                {
                    let c: Vec<ValueId> = p
                        .into_iter()
                        .zip(q)
                        .map(|(x, y)| self.scalar_binary(b, x, y))
                        .collect();
                    self.known.comps.insert(res, c);
                }
            }
            OpKind::Binary(b) if rty == Type::F64 => {
                let (x, y) = (op.operands[0], op.operands[1]);
                let (cx, cy) = (
                    self.known.fconst.get(&x).copied(),
                    self.known.fconst.get(&y).copied(),
                );
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
                    self.known.fconst.get(&op.operands[0]),
                    self.known.fconst.get(&op.operands[1]),
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
                if self.known.negof.contains_key(&x) || self.known.fconst.contains_key(&x) {
                    let v = self.neg(x);
                    return replace(self, v);
                }
            }
            OpKind::Select => {
                let (c, a, b) = (op.operands[0], op.operands[1], op.operands[2]);
                if let Some(&cv) = self.known.bconst.get(&c) {
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

impl Folder<'_> {
    /// Folds `ops` in order into `self.out`, nested regions first (each into its own list).
    fn ops(&mut self, ops: Vec<OpId>) {
        for id in ops {
            let operands: Vec<ValueId> =
                self.f.ops[id].operands.iter().map(|&v| self.r(v)).collect();
            self.f.ops[id].operands = operands;
            let mut regions = std::mem::take(&mut self.f.ops[id].regions);
            let deep = self.deep;
            for region in regions.iter_mut().filter(|_| deep) {
                let known = self.known.clone();
                let outer = std::mem::take(&mut self.out);
                let inner = std::mem::take(&mut region.ops);
                self.ops(inner);
                region.ops = std::mem::replace(&mut self.out, outer);
                self.known = known;
            }
            self.f.ops[id].regions = regions;
            self.span = self.f.span(id);
            // Scalar ops emitted while folding go before the op itself.
            if self.fold(id) {
                self.out.push(id);
                self.note(id);
            }
        }
    }
}

/// One folding sweep over `f`; returns whether it changed. `deep`: matrices and the
/// regions nested in `f` too; otherwise vectors and tuples of `f`'s top-level region
/// only. A function that is differentiated afterwards is folded shallowly: its
/// tensor ops keep their tensor derivative rules (see the module docs of [`crate::ad`]);
/// scalarized, each product would take the scalar rules' guards for zero adjoints.
pub fn fold(module: &mut Module, f: FuncRef, deep: bool) -> bool {
    let func = &mut module.functions[f];
    let ops = std::mem::take(&mut func.body.ops);
    let mut fo = Folder {
        f: func,
        out: Vec::with_capacity(ops.len()),
        map: HashMap::new(),
        known: Known::default(),
        deep,
        changed: false,
        span: mad_grammar::span::Span::default(),
    };
    fo.ops(ops);
    let map = std::mem::take(&mut fo.map);
    let changed = fo.changed;
    let out = std::mem::take(&mut fo.out);
    drop(fo);
    let func = &mut module.functions[f];
    func.body.ops = out;
    if !map.is_empty() {
        crate::passes::subst::apply(func, &map);
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::fold;
    use crate::back::interp;
    use crate::ir::parse::parse_module;
    use crate::ir::print::print_function;
    use mad_runtime::value::{Tensor, Value};

    /// `[e₀ 0]ᵀ·M` (a seed's tangent of `[u₁ − u₀, u₂ − u₀]` times a rest matrix)
    /// inside an `if`, then `sum` of it: deep folding leaves M's first row and no
    /// product with a constant.
    const SEEDED: &str = "func @f(%m: tensor<f64; 2, 2>, %x: f64) -> f64 {
  %z = const 0.0 : f64
  %o = const 1.0 : f64
  %c = le %x, %z : bool
  %r = scf.if %c : f64 {
    yield %z
  } else {
    %a = tensor.pack %o, %z : tensor<f64; 2>
    %b = tensor.pack %z, %z : tensor<f64; 2>
    %d = tensor.pack %a, %b : tensor<f64; 2, 2>
    %t = tensor.transpose %d : tensor<f64; 2, 2>
    %p = tensor.matmul %t, %m : tensor<f64; 2, 2>
    %q = mul %p, %p : tensor<f64; 2, 2>
    %s = tensor.sum %q : f64
    %y = mul %s, %x : f64
    yield %y
  }
  return %r
}";

    fn run(m: &crate::ir::Module, entries: [f64; 4], x: f64) -> Value {
        let f = m.find("f").unwrap();
        let t = Tensor::from_f64(vec![2, 2], entries.to_vec()).unwrap();
        interp::call(
            m,
            f,
            &[Value::Tensor(t), Value::F64(x)],
            &mut std::io::sink(),
        )
        .unwrap()
    }

    fn folded(deep: bool) -> crate::ir::Module {
        let mut m = parse_module(SEEDED).unwrap();
        let f = m.find("f").unwrap();
        while fold(&mut m, f, deep) {
            crate::passes::cleanup(&mut m, f).unwrap();
        }
        crate::passes::cleanup(&mut m, f).unwrap();
        m
    }

    #[test]
    fn deep_folding_scalarizes_seeded_matrices_inside_an_if() {
        let m = folded(true);
        let text = print_function(&m, m.find("f").unwrap());
        assert!(!text.contains("tensor.matmul"), "{text}");
        // Two squares of M's first row (t·M has zeros in its second row), their sum,
        // the product by x: three `mul`s, no product with the constants.
        assert_eq!(text.matches(" mul ").count(), 3, "{text}");
        let before = parse_module(SEEDED).unwrap();
        for (entries, x) in [([1.5, -2.0, 0.25, 3.0], 2.0), ([0.0, 7.0, -1.0, 0.5], 0.5)] {
            assert_eq!(run(&m, entries, x), run(&before, entries, x));
        }
        assert_eq!(run(&m, [1.0, 2.0, 3.0, 4.0], -1.0), Value::F64(0.0));
    }

    #[test]
    fn shallow_folding_keeps_matrices_and_nested_regions() {
        let m = folded(false);
        let text = print_function(&m, m.find("f").unwrap());
        assert!(text.contains("tensor.matmul"), "{text}");
    }
}
