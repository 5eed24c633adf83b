//! IR ops as ONNX nodes.
//!
//! A value may be *batched*: it carries one extra leading axis, the seed directions of a
//! derivative model (`[k, …shape]`). Batched values come from batched inputs; an op with a
//! batched operand has a batched result, formed so that ONNX's right-aligned broadcasting
//! and batched `MatMul` apply the op to every direction at once (a batched scalar meeting a
//! tensor is first given trailing unit axes). Only ops that reach a wanted output are
//! written.

use std::collections::{HashMap, HashSet};

use super::writer::{Attr, GraphWriter, dims_of};
use crate::ir::{BinaryOp, Dim, Function, Literal, OpKind, Reduce, ScalarKind, Type, UnaryOp, ValueId};
use super::OnnxError;
use mad_runtime::{Tensor, TensorData};

/// The ONNX form of an IR value.
#[derive(Clone, Debug)]
pub enum Slot {
    Tensor { name: String, batched: bool },
    Tuple(Vec<Slot>),
}

impl Slot {
    pub fn batched(&self) -> bool {
        match self {
            Slot::Tensor { batched, .. } => *batched,
            Slot::Tuple(items) => items.iter().any(Slot::batched),
        }
    }
}

/// Writes the ops of `f`'s body that the values `wanted` need into `w`, with the
/// parameters bound to `params`; `seed_count` names a 1-D `int64` tensor `[k]` (needed
/// when a batched value must be formed from an unbatched one).
pub fn lower_function(
    f: &Function,
    w: &mut GraphWriter,
    params: Vec<Slot>,
    wanted: &[ValueId],
    seed_count: Option<&str>,
) -> Result<HashMap<ValueId, Slot>, OnnxError> {
    let needed = live_ops(f, wanted);
    let ints = f
        .ops
        .iter()
        .filter_map(|(_, op)| match (&op.kind, op.results.first()) {
            (OpKind::Const(Literal::I64(n)), Some(&r)) => Some((r, *n)),
            _ => None,
        })
        .collect();
    let mut l = Lowering { f, w, slots: HashMap::new(), seed_count: seed_count.map(str::to_string), ints };
    for (&p, s) in f.params().iter().zip(params) {
        l.slots.insert(p, s);
    }
    for (i, &id) in f.body.ops.iter().enumerate() {
        if needed.contains(&i) {
            l.op(id)?;
        }
    }
    Ok(l.slots)
}

/// The positions in the body of the ops the values `wanted` depend on.
fn live_ops(f: &Function, wanted: &[ValueId]) -> HashSet<usize> {
    let mut def: HashMap<ValueId, usize> = HashMap::new();
    for (i, &id) in f.body.ops.iter().enumerate() {
        for &r in &f.ops[id].results {
            def.insert(r, i);
        }
    }
    let mut live = HashSet::new();
    let mut stack: Vec<ValueId> = wanted.to_vec();
    let mut seen = HashSet::new();
    while let Some(v) = stack.pop() {
        if !seen.insert(v) {
            continue;
        }
        if let Some(&i) = def.get(&v) {
            live.insert(i);
            let op = &f.ops[f.body.ops[i]];
            stack.extend(op.operands.iter().copied());
            // What its regions read from outside them.
            let mut used = Vec::new();
            for r in &op.regions {
                crate::analysis::used_in(f, r, &mut used);
            }
            stack.extend(used);
        }
    }
    live
}

struct Lowering<'a> {
    f: &'a Function,
    w: &'a mut GraphWriter,
    slots: HashMap<ValueId, Slot>,
    seed_count: Option<String>,
    /// The `i64` constants of the function.
    ints: HashMap<ValueId, i64>,
}

fn unsupported(what: impl Into<String>) -> OnnxError {
    OnnxError::Export(what.into())
}

impl Lowering<'_> {
    fn ty(&self, v: ValueId) -> &Type {
        self.f.ty(v)
    }

    fn rank(&self, v: ValueId) -> usize {
        dims_of(self.ty(v)).len()
    }

    fn kind(&self, v: ValueId) -> ScalarKind {
        self.ty(v).scalar_kind().unwrap_or(ScalarKind::F64)
    }

    fn tensor(&self, v: ValueId) -> Result<(String, bool), OnnxError> {
        match self.slots.get(&v) {
            Some(Slot::Tensor { name, batched }) => Ok((name.clone(), *batched)),
            Some(Slot::Tuple(_)) => Err(unsupported("a tuple used as a tensor")),
            None => Err(unsupported(format!("value %{} has no ONNX form", v.index()))),
        }
    }

    fn set(&mut self, v: ValueId, name: String, batched: bool) {
        self.slots.insert(v, Slot::Tensor { name, batched });
    }

    fn count(&self) -> Result<String, OnnxError> {
        self.seed_count.clone().ok_or_else(|| unsupported("a batched value without a seed count"))
    }

    /// `v` with the leading seed axis (an unbatched value repeated for every direction).
    fn batched(&mut self, v: ValueId) -> Result<String, OnnxError> {
        let (name, b) = self.tensor(v)?;
        if b {
            return Ok(name);
        }
        let count = self.count()?;
        Ok(self.w.repeat(&name, &count))
    }

    /// Operand `v` of an op whose result has IR rank `rank`: a batched scalar gets trailing
    /// unit axes so that it meets the other operands' elements, not their leading extent.
    fn aligned(&mut self, v: ValueId, rank: usize) -> Result<String, OnnxError> {
        let (name, b) = self.tensor(v)?;
        if !b || rank == 0 || self.rank(v) == rank {
            return Ok(name);
        }
        let axes: Vec<i64> = (self.rank(v) as i64 + 1..=rank as i64).collect();
        let axes = self.w.ints(&axes);
        Ok(self.w.node("Unsqueeze", &[&name, &axes], vec![]))
    }

    /// A 1-D `int64` tensor of the extents given by the `i64` scalars `vs` (constants where
    /// they are known).
    fn shape_tensor(&mut self, vs: &[ValueId], batched: bool) -> Result<String, OnnxError> {
        let mut parts: Vec<String> = Vec::new();
        if batched {
            parts.push(self.count()?);
        }
        let zero = self.w.ints(&[0]);
        for &v in vs {
            let part = match self.constant_int(v) {
                Some(n) => self.w.ints(&[n]),
                None => {
                    let (s, _) = self.tensor(v)?;
                    self.w.node("Unsqueeze", &[&s, &zero], vec![])
                }
            };
            parts.push(part);
        }
        if parts.is_empty() {
            return Ok(self.w.ints(&[]));
        }
        let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
        if refs.len() == 1 {
            return Ok(parts[0].clone());
        }
        Ok(self.w.node("Concat", &refs, vec![("axis", Attr::Int(0))]))
    }

    /// The value of an `i64` constant.
    fn constant_int(&self, v: ValueId) -> Option<i64> {
        self.ints.get(&v).copied()
    }

    fn op(&mut self, id: crate::ir::OpId) -> Result<(), OnnxError> {
        let op = &self.f.ops[id];
        let (kind, xs, ys) = (op.kind.clone(), op.operands.clone(), op.results.clone());
        let batched = xs.iter().any(|x| self.slots.get(x).is_some_and(Slot::batched));
        let y = ys.first().copied();
        let r = |s: &Self| y.map_or(0, |y| s.rank(y));
        match kind {
            OpKind::Const(lit) => {
                let t = match lit {
                    Literal::F64(x) => TensorData::F64(vec![x]),
                    Literal::F32(x) => TensorData::F32(vec![x]),
                    Literal::I64(x) => TensorData::I64(vec![x]),
                    Literal::Bool(x) => TensorData::Bool(vec![x]),
                };
                let name = self.w.constant(&Tensor { shape: vec![], data: t });
                self.set(ys[0], name, false);
            }
            OpKind::Unary(u) => {
                let (x, _) = self.tensor(xs[0])?;
                let k = self.kind(xs[0]);
                let out = match u {
                    UnaryOp::Detach => self.w.node("Identity", &[&x], vec![]),
                    UnaryOp::Log1p => {
                        let one = self.w.scalar(k, 1.0);
                        let s = self.w.node("Add", &[&x, &one], vec![]);
                        self.w.node("Log", &[&s], vec![])
                    }
                    // max(x, 0) + log(1 + exp(-|x|)): stable, and ONNX Runtime has no
                    // float64 Softplus kernel.
                    UnaryOp::Softplus => {
                        let zero = self.w.scalar(k, 0.0);
                        let one = self.w.scalar(k, 1.0);
                        let relu = self.w.node("Max", &[&x, &zero], vec![]);
                        let abs = self.w.node("Abs", &[&x], vec![]);
                        let neg = self.w.node("Neg", &[&abs], vec![]);
                        let exp = self.w.node("Exp", &[&neg], vec![]);
                        let sum = self.w.node("Add", &[&exp, &one], vec![]);
                        let log = self.w.node("Log", &[&sum], vec![]);
                        self.w.node("Add", &[&relu, &log], vec![])
                    }
                    UnaryOp::Expm1 => {
                        let one = self.w.scalar(k, 1.0);
                        let e = self.w.node("Exp", &[&x], vec![]);
                        self.w.node("Sub", &[&e, &one], vec![])
                    }
                    _ => {
                        let name = onnx_unary(u).ok_or_else(|| unsupported(format!("`{}` has no ONNX form", u.name())))?;
                        self.w.node(name, &[&x], vec![])
                    }
                };
                self.set(ys[0], out, batched);
            }
            OpKind::Binary(b) => {
                let rank = r(self);
                let (a, c) = (self.aligned(xs[0], rank)?, self.aligned(xs[1], rank)?);
                let out = match b {
                    BinaryOp::Ne => {
                        let e = self.w.node("Equal", &[&a, &c], vec![]);
                        self.w.node("Not", &[&e], vec![])
                    }
                    // The sign of the dividend, as C's fmod (and Rust's `%`).
                    BinaryOp::Rem => self.w.node("Mod", &[&a, &c], vec![("fmod", Attr::Int(1))]),
                    _ => {
                        let name = onnx_binary(b).ok_or_else(|| unsupported(format!("`{}` has no ONNX form", b.name())))?;
                        self.w.node(name, &[&a, &c], vec![])
                    }
                };
                self.set(ys[0], out, batched);
            }
            OpKind::Select => {
                let rank = r(self);
                let c = self.aligned(xs[0], rank)?;
                let (a, b) = (self.aligned(xs[1], rank)?, self.aligned(xs[2], rank)?);
                let out = self.w.node("Where", &[&c, &a, &b], vec![]);
                self.set(ys[0], out, batched);
            }
            OpKind::Cast(k) => {
                let (x, _) = self.tensor(xs[0])?;
                let out = self.w.node("Cast", &[&x], vec![("to", Attr::Int(super::writer::elem_type(k) as i64))]);
                self.set(ys[0], out, batched);
            }
            OpKind::Full | OpKind::Broadcast => {
                let (x, xb) = self.tensor(xs[0])?;
                let target_rank = xs.len() - 1;
                let x = if xb && self.rank(xs[0]) < target_rank {
                    let axes: Vec<i64> = (1..=(target_rank - self.rank(xs[0])) as i64).collect();
                    let axes = self.w.ints(&axes);
                    self.w.node("Unsqueeze", &[&x, &axes], vec![])
                } else {
                    x
                };
                let shape = self.shape_tensor(&xs[1..], false)?;
                let out = self.w.node("Expand", &[&x, &shape], vec![]);
                self.set(ys[0], out, xb);
            }
            OpKind::ReduceTo(how) => {
                let out = self.reduce_to(xs[0], &xs[1..], how)?;
                let (_, xb) = self.tensor(xs[0])?;
                self.set(ys[0], out, xb);
            }
            OpKind::Sum => {
                let (x, xb) = self.tensor(xs[0])?;
                let out = if xb {
                    let axes: Vec<i64> = (1..=self.rank(xs[0]) as i64).collect();
                    let axes = self.w.ints(&axes);
                    self.w.node("ReduceSum", &[&x, &axes], vec![("keepdims", Attr::Int(0))])
                } else {
                    self.w.node("ReduceSum", &[&x], vec![("keepdims", Attr::Int(0))])
                };
                self.set(ys[0], out, xb);
            }
            OpKind::MatMul => {
                let out = self.matmul(xs[0], xs[1], y.ok_or_else(|| unsupported("a matmul without a result"))?)?;
                self.set(ys[0], out, batched);
            }
            OpKind::Transpose => {
                let (x, xb) = self.tensor(xs[0])?;
                let perm = if xb { vec![0, 2, 1] } else { vec![1, 0] };
                let out = self.w.node("Transpose", &[&x], vec![("perm", Attr::Ints(perm))]);
                self.set(ys[0], out, xb);
            }
            OpKind::Permute(perm) => {
                let (x, xb) = self.tensor(xs[0])?;
                let perm: Vec<i64> = if xb { std::iter::once(0).chain(perm.iter().map(|&p| p as i64 + 1)).collect() } else { perm.iter().map(|&p| p as i64).collect() };
                let out = self.w.node("Transpose", &[&x], vec![("perm", Attr::Ints(perm))]);
                self.set(ys[0], out, xb);
            }
            OpKind::Reshape => {
                let (x, xb) = self.tensor(xs[0])?;
                let shape = self.shape_tensor(&xs[1..], xb)?;
                let out = self.w.node("Reshape", &[&x, &shape], vec![]);
                self.set(ys[0], out, xb);
            }
            OpKind::DimOf(axis) => {
                let (x, xb) = self.tensor(xs[0])?;
                let shape = self.w.node("Shape", &[&x], vec![]);
                let at = self.w.constant(&Tensor { shape: vec![], data: TensorData::I64(vec![axis as i64 + xb as i64]) });
                let out = self.w.node("Gather", &[&shape, &at], vec![]);
                self.set(ys[0], out, false);
            }
            OpKind::Extract(i) => {
                let (x, xb) = self.tensor(xs[0])?;
                let at = self.w.constant(&Tensor { shape: vec![], data: TensorData::I64(vec![i as i64]) });
                let out = self.w.node("Gather", &[&x, &at], vec![("axis", Attr::Int(xb as i64))]);
                self.set(ys[0], out, xb);
            }
            OpKind::Index => {
                let (mut x, xb) = self.tensor(xs[0])?;
                for &i in &xs[1..] {
                    let (at, _) = self.tensor(i)?;
                    x = self.w.node("Gather", &[&x, &at], vec![("axis", Attr::Int(xb as i64))]);
                }
                self.set(ys[0], x, xb);
            }
            OpKind::Pack => {
                let mut parts = Vec::new();
                for &x in &xs {
                    let name = if batched { self.batched(x)? } else { self.tensor(x)?.0 };
                    let axis = self.w.ints(&[batched as i64]);
                    parts.push(self.w.node("Unsqueeze", &[&name, &axis], vec![]));
                }
                let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
                let out = self.w.node("Concat", &refs, vec![("axis", Attr::Int(batched as i64))]);
                self.set(ys[0], out, batched);
            }
            OpKind::Concat => {
                let mut parts = Vec::new();
                for &x in &xs {
                    parts.push(if batched { self.batched(x)? } else { self.tensor(x)?.0 });
                }
                let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
                let out = self.w.node("Concat", &refs, vec![("axis", Attr::Int(batched as i64))]);
                self.set(ys[0], out, batched);
            }
            OpKind::Slice => {
                let (x, xb) = self.tensor(xs[0])?;
                let zero = self.w.ints(&[0]);
                let (lo, _) = self.tensor(xs[1])?;
                let (hi, _) = self.tensor(xs[2])?;
                let lo = self.w.node("Unsqueeze", &[&lo, &zero], vec![]);
                let hi = self.w.node("Unsqueeze", &[&hi, &zero], vec![]);
                let axes = self.w.ints(&[xb as i64]);
                let out = self.w.node("Slice", &[&x, &lo, &hi, &axes], vec![]);
                self.set(ys[0], out, xb);
            }
            OpKind::Tuple => {
                let items = xs.iter().map(|x| self.slots.get(x).cloned().ok_or_else(|| unsupported("a tuple of unwritten values"))).collect::<Result<_, _>>()?;
                self.slots.insert(ys[0], Slot::Tuple(items));
            }
            OpKind::TupleGet(i) => {
                let Some(Slot::Tuple(items)) = self.slots.get(&xs[0]) else {
                    return Err(unsupported("tuple.get of a non-tuple"));
                };
                let item = items.get(i as usize).cloned().ok_or_else(|| unsupported("tuple.get out of range"))?;
                self.slots.insert(ys[0], item);
            }
            OpKind::Insert => {
                let out = self.insert(&xs, batched)?;
                self.set(ys[0], out, batched);
            }
            OpKind::Call(_) => return Err(unsupported("a call (inline it first)")),
            OpKind::Print | OpKind::PrintStr(_) => return Err(unsupported("`print` has no ONNX form")),
            OpKind::If => self.lower_if(id)?,
            OpKind::For | OpKind::While => {
                return Err(unsupported(format!("`{}`: loops are not written as ONNX Loop yet", kind.name())));
            }
            OpKind::TapePush | OpKind::TapePop => return Err(unsupported("a taped region (the run-time tape has no ONNX form)")),
        }
        Ok(())
    }
}

impl Lowering<'_> {
    /// `scf.if` as `If`: each region a subgraph (reading outer values by name), each
    /// yielded value an output. A result batched in either branch is batched in both.
    fn lower_if(&mut self, id: crate::ir::OpId) -> Result<(), OnnxError> {
        let op = &self.f.ops[id];
        let (cond, results, regions) = (op.operands[0], op.results.clone(), op.regions.clone());
        let (c, _) = self.tensor(cond)?;
        let mut branches = Vec::new();
        for r in &regions {
            let outer = std::mem::take(&mut self.w.nodes);
            for &inner in &r.ops {
                self.op(inner)?;
            }
            branches.push(std::mem::replace(&mut self.w.nodes, outer));
        }
        let batched: Vec<bool> = (0..results.len()).map(|i| regions.iter().any(|r| self.slots.get(&r.yields[i]).is_some_and(Slot::batched))).collect();
        let mut graphs = Vec::new();
        for (r, nodes) in regions.iter().zip(branches) {
            let outer = std::mem::replace(&mut self.w.nodes, nodes);
            let mut outputs = Vec::new();
            for (i, &y) in r.yields.iter().enumerate() {
                let name = if batched[i] { self.batched(y)? } else { self.tensor(y)?.0 };
                let out = self.w.node("Identity", &[&name], vec![]);
                let ty = self.ty(results[i]).clone();
                let mut dims = dims_of(&ty);
                if batched[i] {
                    dims.insert(0, Dim::Dyn);
                }
                outputs.push(super::writer::value_info(&out, ty.scalar_kind().unwrap_or(ScalarKind::F64), &dims.iter().map(|_| Dim::Dyn).collect::<Vec<_>>()));
            }
            let nodes = std::mem::replace(&mut self.w.nodes, outer);
            graphs.push(crate::back::onnx::proto::GraphProto { node: nodes, name: Some(self.w.fresh("branch")), output: outputs, ..Default::default() });
        }
        let else_g = graphs.pop().ok_or_else(|| unsupported("an scf.if without an else region"))?;
        let then_g = graphs.pop().ok_or_else(|| unsupported("an scf.if without a then region"))?;
        let outs = self.w.node_n("If", &[&c], vec![("then_branch", Attr::Graph(Box::new(then_g))), ("else_branch", Attr::Graph(Box::new(else_g)))], results.len());
        for ((r, name), b) in results.iter().zip(outs).zip(batched) {
            self.set(*r, name, b);
        }
        Ok(())
    }

    /// `tensor.matmul` as `MatMul`. A batched operand gets unit axes after the seed axis
    /// for the batch axes it lacks, so that ONNX's right-aligned batch broadcasting pairs
    /// the seed axis with the seed axis; a batched vector on the right becomes a column.
    fn matmul(&mut self, a: ValueId, b: ValueId, y: ValueId) -> Result<String, OnnxError> {
        let vector = self.rank(b) == 1;
        let batch_rank = self.rank(y) - if vector { 1 } else { 2 };
        let (na, ab) = self.tensor(a)?;
        let (nb, bb) = self.tensor(b)?;
        let pad = |l: &mut Self, name: String, own_batch: usize| -> String {
            if own_batch >= batch_rank {
                return name;
            }
            let axes: Vec<i64> = (1..=(batch_rank - own_batch) as i64).collect();
            let axes = l.w.ints(&axes);
            l.w.node("Unsqueeze", &[&name, &axes], vec![])
        };
        let na = if ab { pad(self, na, self.rank(a) - 2) } else { na };
        if vector && bb {
            let minus = self.w.ints(&[-1]);
            let col = self.w.node("Unsqueeze", &[&nb, &minus], vec![]);
            let col = pad(self, col, 0);
            let p = self.w.node("MatMul", &[&na, &col], vec![]);
            return Ok(self.w.node("Squeeze", &[&p, &minus], vec![]));
        }
        let nb = if bb && !vector { pad(self, nb, self.rank(b) - 2) } else { nb };
        Ok(self.w.node("MatMul", &[&na, &nb], vec![]))
    }

    /// `tensor.sum_to` (`max_to`, `min_to`) of `x` to `extents`: a `ReduceSum` (`ReduceMax`,
    /// `ReduceMin`) over the leading axes and the
    /// axes whose target extent is 1 where `x`'s is not. Where that is not known when the
    /// model is written (an extent known only at run time), the axes are chosen at run time
    /// (`Compress` of the candidates, and a `ReduceSum` whose empty axes are a no-op).
    fn reduce_to(&mut self, x: ValueId, extents: &[ValueId], how: Reduce) -> Result<String, OnnxError> {
        let onnx_op = match how {
            Reduce::Sum => "ReduceSum",
            Reduce::Max => "ReduceMax",
            Reduce::Min => "ReduceMin",
        };
        let (mut name, xb) = self.tensor(x)?;
        let from = dims_of(self.ty(x));
        let lead = from.len() - extents.len();
        let shift = xb as i64;
        let mut axes: Vec<i64> = (0..lead as i64).collect();
        let mut unknown = Vec::new();
        for (i, &e) in extents.iter().enumerate() {
            let d = &from[lead + i];
            match self.constant_int(e) {
                Some(1) if *d != Dim::Fixed(1) => axes.push((lead + i) as i64),
                Some(_) => {}
                None if matches!(d, Dim::Fixed(n) if *n != 1) => {}
                None => unknown.push(i),
            }
        }
        if !axes.is_empty() {
            let shifted: Vec<i64> = axes.iter().map(|a| a + shift).collect();
            let axes = self.w.ints(&shifted);
            name = self.w.node(onnx_op, &[&name, &axes], vec![("keepdims", Attr::Int(1))]);
        }
        if !unknown.is_empty() {
            let candidates: Vec<i64> = unknown.iter().map(|&i| (lead + i) as i64 + shift).collect();
            let candidates = self.w.ints(&candidates);
            let shape = self.w.node("Shape", &[&name], vec![]);
            let have = self.w.node("Gather", &[&shape, &candidates], vec![]);
            let want = self.shape_tensor(&unknown.iter().map(|&i| extents[i]).collect::<Vec<_>>(), false)?;
            let one = self.w.ints(&[1]);
            let want_one = self.w.node("Equal", &[&want, &one], vec![]);
            let have_one = self.w.node("Equal", &[&have, &one], vec![]);
            let have_more = self.w.node("Not", &[&have_one], vec![]);
            let reduce = self.w.node("And", &[&want_one, &have_more], vec![]);
            let chosen = self.w.node("Compress", &[&candidates, &reduce], vec![]);
            name = self.w.node(onnx_op, &[&name, &chosen], vec![("keepdims", Attr::Int(1)), ("noop_with_empty_axes", Attr::Int(1))]);
        }
        if lead == 0 {
            return Ok(name);
        }
        let shape = self.shape_tensor(extents, xb)?;
        Ok(self.w.node("Reshape", &[&name, &shape], vec![]))
    }

    /// `tensor.insert` as `ScatterND` of one update at the index tuple; batched, the seed
    /// axis is moved behind the indexed axes so that the update covers every direction.
    fn insert(&mut self, xs: &[ValueId], batched: bool) -> Result<String, OnnxError> {
        let (t, v, idx) = (xs[0], xs[1], &xs[2..]);
        let zero = self.w.ints(&[0]);
        let mut parts = Vec::new();
        for &i in idx {
            let (s, _) = self.tensor(i)?;
            parts.push(self.w.node("Unsqueeze", &[&s, &zero], vec![]));
        }
        let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
        let tuple = if refs.len() == 1 { parts[0].clone() } else { self.w.node("Concat", &refs, vec![("axis", Attr::Int(0))]) };
        let indices = self.w.node("Unsqueeze", &[&tuple, &zero], vec![]);
        if !batched {
            let (data, _) = self.tensor(t)?;
            let (update, _) = self.tensor(v)?;
            let update = self.w.node("Unsqueeze", &[&update, &zero], vec![]);
            return Ok(self.w.node("ScatterND", &[&data, &indices, &update], vec![]));
        }
        let rank = self.rank(t) as i64 + 1;
        let k = idx.len() as i64;
        // [n, d0, …] → [d0, …, d(k-1), n, rest…]
        let perm: Vec<i64> = (1..=k).chain([0]).chain(k + 1..rank).collect();
        let mut back = vec![0; rank as usize];
        for (i, &p) in perm.iter().enumerate() {
            back[p as usize] = i as i64;
        }
        let data = self.batched(t)?;
        let update = self.batched(v)?;
        let moved = self.w.node("Transpose", &[&data], vec![("perm", Attr::Ints(perm))]);
        let update = self.w.node("Unsqueeze", &[&update, &zero], vec![]);
        let scattered = self.w.node("ScatterND", &[&moved, &indices, &update], vec![]);
        Ok(self.w.node("Transpose", &[&scattered], vec![("perm", Attr::Ints(back))]))
    }
}

fn onnx_unary(u: UnaryOp) -> Option<&'static str> {
    Some(match u {
        UnaryOp::Neg => "Neg",
        UnaryOp::Not => "Not",
        UnaryOp::Sqrt => "Sqrt",
        UnaryOp::Exp => "Exp",
        UnaryOp::Log => "Log",
        UnaryOp::Sin => "Sin",
        UnaryOp::Cos => "Cos",
        UnaryOp::Tan => "Tan",
        UnaryOp::Asin => "Asin",
        UnaryOp::Acos => "Acos",
        UnaryOp::Atan => "Atan",
        UnaryOp::Sinh => "Sinh",
        UnaryOp::Cosh => "Cosh",
        UnaryOp::Tanh => "Tanh",
        UnaryOp::Erf => "Erf",
        UnaryOp::Sigmoid => "Sigmoid",
        UnaryOp::Abs => "Abs",
        UnaryOp::Floor => "Floor",
        UnaryOp::Ceil => "Ceil",
        UnaryOp::Log1p | UnaryOp::Expm1 | UnaryOp::Softplus | UnaryOp::Detach | UnaryOp::Lgamma | UnaryOp::Digamma | UnaryOp::Trigamma => return None,
    })
}

fn onnx_binary(b: BinaryOp) -> Option<&'static str> {
    Some(match b {
        BinaryOp::Add => "Add",
        BinaryOp::Sub => "Sub",
        BinaryOp::Mul => "Mul",
        BinaryOp::Div => "Div",
        BinaryOp::Pow => "Pow",
        BinaryOp::Min => "Min",
        BinaryOp::Max => "Max",
        BinaryOp::Eq => "Equal",
        BinaryOp::Lt => "Less",
        BinaryOp::Le => "LessOrEqual",
        BinaryOp::Gt => "Greater",
        BinaryOp::Ge => "GreaterOrEqual",
        BinaryOp::And => "And",
        BinaryOp::Or => "Or",
        BinaryOp::Ne | BinaryOp::Rem | BinaryOp::Atan2 | BinaryOp::Polygamma => return None,
    })
}
