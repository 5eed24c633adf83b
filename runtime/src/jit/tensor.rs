//! Tensor-level semantics of the ops that compiled code hands to the run time
//! (all ops on heap tensors, and mixes of heap and small tensors).
//!
//! Conventions shared with the inline (scalarized) lowering:
//! - elementwise ops visit elements in row-major order; the first failing
//!   element's error is the op's error;
//! - `sum` and the dot products of `matmul` add left to right starting from
//!   zero: `((0 + t0) + t1) + …` (multiply then add, no fused multiply-add);
//! - `index`/`insert` check their indices axis by axis, first axis first.

use std::borrow::Cow;

use super::layout::{Arg, FlatLayout};
use super::scalar;
use crate::ops::{BinaryOp, RtError, UnaryOp};
use crate::value::{ScalarKind, Tensor, TensorData, Value};

/// The op a heap-tensor routine performs.
#[derive(Clone, Debug, PartialEq)]
pub enum TensorOp {
    Unary(UnaryOp),
    Binary(BinaryOp),
    Cast(ScalarKind),
    Pack,
    Full,
    Extract(u64),
    Index,
    Insert,
    DimOf(u32),
    MatMul,
    Transpose,
    Sum,
    /// A tensor known when the program was compiled (a literal of constants): a copy of it.
    Literal(Tensor),
    /// A copy of the operand, which the program then updates in place.
    Copy,
    /// Rows `lo..hi` of the first axis ([`super::reshape::slice_rows`]).
    Slice,
    /// The operands stacked along their first axis ([`super::reshape::concat_rows`]).
    Concat,
    /// The elements under the shape of the `i64` operands ([`super::reshape::reshape`]).
    Reshape,
    /// Elementwise `select`: a bool tensor picks from two tensors of its shape.
    Select,
    /// The axes reordered ([`super::reshape::permute`]).
    Permute(Vec<u32>),
    /// The first operand stretched to the extents of the `i64` operands
    /// ([`super::broadcast::broadcast_to`]).
    Broadcast,
    /// The first operand folded down to the extents of the `i64` operands
    /// ([`super::broadcast::reduce_to`]).
    ReduceTo(super::broadcast::Reduce),
}

/// One op site of a compiled program: the op, its operands' layouts and its result's.
#[derive(Clone, Debug, PartialEq)]
pub struct ApplyDesc {
    pub op: TensorOp,
    pub args: Vec<FlatLayout>,
    pub result: FlatLayout,
}

fn shape_err(what: &str, a: &[usize], b: &[usize]) -> RtError {
    RtError::ShapeMismatch(format!("{what}: {a:?} vs {b:?}"))
}

/// Tensor data of kind `k` from scalar values of that kind.
pub fn data_from_values(k: ScalarKind, vs: &[Value]) -> TensorData {
    match k {
        ScalarKind::F64 => TensorData::F64(vs.iter().map(|v| v.as_f64().unwrap_or(0.0)).collect()),
        ScalarKind::F32 => TensorData::F32(
            vs.iter()
                .map(|v| if let Value::F32(x) = v { *x } else { 0.0 })
                .collect(),
        ),
        ScalarKind::I64 => TensorData::I64(vs.iter().map(|v| v.as_i64().unwrap_or(0)).collect()),
        ScalarKind::Bool => {
            TensorData::Bool(vs.iter().map(|v| v.as_bool().unwrap_or(false)).collect())
        }
    }
}

/// `n` copies of scalar `v` of kind `k`, or `None` when the memory cannot be had (an
/// error for the program rather than an abort).
fn full_data(k: ScalarKind, v: &Value, n: usize) -> Option<TensorData> {
    fn filled<T: Clone>(x: T, n: usize) -> Option<Vec<T>> {
        let mut out = Vec::new();
        out.try_reserve_exact(n).ok()?;
        out.resize(n, x);
        Some(out)
    }
    Some(match k {
        ScalarKind::F64 => TensorData::F64(filled(v.as_f64().unwrap_or(0.0), n)?),
        ScalarKind::F32 => TensorData::F32(filled(if let Value::F32(x) = v { *x } else { 0.0 }, n)?),
        ScalarKind::I64 => TensorData::I64(filled(v.as_i64().unwrap_or(0), n)?),
        ScalarKind::Bool => TensorData::Bool(filled(v.as_bool().unwrap_or(false), n)?),
    })
}

fn elements(t: &Tensor) -> impl Iterator<Item = Value> + '_ {
    (0..t.data.len()).map(|i| t.data.get(i))
}

fn map_tensor(
    t: &Tensor,
    k: ScalarKind,
    f: impl FnMut(Value) -> Result<Value, RtError>,
) -> Result<Tensor, RtError> {
    let vs: Vec<Value> = elements(t).map(f).collect::<Result<_, _>>()?;
    Ok(Tensor {
        shape: t.shape.clone(),
        data: data_from_values(k, &vs),
    })
}

fn result_kind(op: BinaryOp, k: ScalarKind) -> ScalarKind {
    if op.is_comparison() {
        ScalarKind::Bool
    } else {
        k
    }
}

fn unary(op: UnaryOp, x: &Arg<'_>) -> Result<Value, RtError> {
    match x {
        Arg::Scalar(v) => scalar::unary(op, v),
        Arg::Tensor(t) => map_tensor(t, t.kind(), |v| scalar::unary(op, &v)).map(Value::Tensor),
    }
}

fn binary(op: BinaryOp, a: &Arg<'_>, b: &Arg<'_>) -> Result<Value, RtError> {
    match (a, b) {
        (Arg::Scalar(a), Arg::Scalar(b)) => scalar::binary(op, a, b),
        (Arg::Tensor(t), Arg::Scalar(s)) => {
            map_tensor(t, result_kind(op, t.kind()), |v| scalar::binary(op, &v, s))
                .map(Value::Tensor)
        }
        (Arg::Scalar(s), Arg::Tensor(t)) => {
            map_tensor(t, result_kind(op, t.kind()), |v| scalar::binary(op, s, &v))
                .map(Value::Tensor)
        }
        (Arg::Tensor(x), Arg::Tensor(y)) => {
            if x.shape != y.shape {
                return Err(RtError::ShapeMismatch(format!(
                    "`{}` of operands of shapes {:?} and {:?}",
                    op.source_form(),
                    x.shape,
                    y.shape
                )));
            }
            if x.kind() != y.kind() {
                return Err(RtError::BadOperand(op.name()));
            }
            let vs: Vec<Value> = elements(x)
                .zip(elements(y))
                .map(|(a, b)| scalar::binary(op, &a, &b))
                .collect::<Result<_, _>>()?;
            Ok(Value::Tensor(Tensor {
                shape: x.shape.clone(),
                data: data_from_values(result_kind(op, x.kind()), &vs),
            }))
        }
    }
}

fn tensor_arg<'a>(args: &'a [Arg<'_>], i: usize, op: &'static str) -> Result<&'a Tensor, RtError> {
    match args.get(i) {
        Some(Arg::Tensor(t)) => Ok(t),
        _ => Err(RtError::BadOperand(op)),
    }
}

fn i64_arg(args: &[Arg<'_>], i: usize, op: &'static str) -> Result<i64, RtError> {
    match args.get(i) {
        Some(Arg::Scalar(Value::I64(x))) => Ok(*x),
        _ => Err(RtError::BadOperand(op)),
    }
}

/// The sub-tensor (or scalar) at row-major `offset` with the given trailing shape.
fn slice(t: &Tensor, offset: usize, shape: &[usize]) -> Value {
    if shape.is_empty() {
        return t.data.get(offset);
    }
    let n: usize = shape.iter().product();
    let vs: Vec<Value> = (offset..offset + n).map(|i| t.data.get(i)).collect();
    Value::Tensor(Tensor {
        shape: shape.to_vec(),
        data: data_from_values(t.kind(), &vs),
    })
}

/// `tensor.insert` written into `t` itself: `t[idx..] = value`, a scalar at a full index or a
/// tensor of the trailing shape at a leading one. The copying insert is this on a copy; an
/// insert whose operand is dead afterwards (`crate`'s users decide) writes in place. On
/// error `t` is unchanged.
pub fn insert_into(t: &mut Tensor, value: &Arg<'_>, idx: &[i64]) -> Result<(), RtError> {
    let off = offset_of(t, idx)?;
    let inner = &t.shape[idx.len()..];
    match value {
        Arg::Scalar(v) if inner.is_empty() => set_element(&mut t.data, off, v),
        Arg::Tensor(v) if v.shape == inner => {
            for j in 0..v.data.len() {
                set_element(&mut t.data, off + j, &v.data.get(j));
            }
        }
        Arg::Tensor(v) => {
            return Err(RtError::ShapeMismatch(format!(
                "a value of shape {:?} stored into an element of shape {inner:?}",
                v.shape
            )));
        }
        Arg::Scalar(_) => {
            return Err(RtError::ShapeMismatch(format!(
                "a scalar stored into an element of shape {inner:?}"
            )));
        }
    }
    Ok(())
}

/// Stores `v` at `i`, converted to the data's kind as [`data_from_values`] does.
fn set_element(data: &mut TensorData, i: usize, v: &Value) {
    match data {
        TensorData::F64(xs) => xs[i] = v.as_f64().unwrap_or(0.0),
        TensorData::F32(xs) => xs[i] = if let Value::F32(x) = v { *x } else { 0.0 },
        TensorData::I64(xs) => xs[i] = v.as_i64().unwrap_or(0),
        TensorData::Bool(xs) => xs[i] = v.as_bool().unwrap_or(false),
    }
}

/// The row-major offset of `t[idx..]`, checking each index against its axis.
fn offset_of(t: &Tensor, idx: &[i64]) -> Result<usize, RtError> {
    if idx.len() > t.shape.len() {
        return Err(RtError::ShapeMismatch(format!(
            "{} indices into a tensor of rank {}",
            idx.len(),
            t.shape.len()
        )));
    }
    let mut off = 0usize;
    for (axis, &i) in idx.iter().enumerate() {
        let len = t.shape[axis];
        if i < 0 || i as u64 >= len as u64 {
            return Err(RtError::IndexOutOfBounds {
                index: i,
                len: len as i64,
            });
        }
        off = off * len + i as usize;
    }
    let inner: usize = t.shape[idx.len()..].iter().product();
    Ok(off * inner)
}

fn add_values(a: &Value, b: &Value) -> Value {
    match (a, b) {
        (Value::F64(a), Value::F64(b)) => Value::F64(a + b),
        (Value::F32(a), Value::F32(b)) => Value::F32(a + b),
        (Value::I64(a), Value::I64(b)) => Value::I64(a.wrapping_add(*b)),
        _ => a.clone(),
    }
}

fn mul_values(a: &Value, b: &Value) -> Value {
    match (a, b) {
        (Value::F64(a), Value::F64(b)) => Value::F64(a * b),
        (Value::F32(a), Value::F32(b)) => Value::F32(a * b),
        (Value::I64(a), Value::I64(b)) => Value::I64(a.wrapping_mul(*b)),
        _ => a.clone(),
    }
}

/// Left-to-right sum from the first term ([`super::kernels::sum_f64`]); zero when empty.
pub fn sum_values(k: ScalarKind, mut terms: impl Iterator<Item = Value>) -> Value {
    match terms.next() {
        Some(first) => terms.fold(first, |a, b| add_values(&a, &b)),
        None => scalar::zero(k),
    }
}

fn matmul(a: &Tensor, b: &Tensor) -> Result<Value, RtError> {
    let Some(layout) = super::broadcast::matmul_shape(&a.shape, &b.shape) else {
        return Err(RtError::ShapeMismatch(format!(
            "a matrix product of shapes {:?} and {:?}",
            a.shape, b.shape
        )));
    };
    if !a.kind().is_float() || a.kind() != b.kind() {
        return Err(RtError::BadOperand("tensor.matmul"));
    }
    let (m, k, n) = (layout.m, layout.k, layout.n);
    let shape = layout.result();
    let total = tensor_size(&shape, "tensor.matmul")?;
    let mut out = Vec::new();
    out.try_reserve_exact(total)
        .map_err(|_| RtError::Other(format!("a matrix product: no memory for {total} entries")))?;
    for (&ao, &bo) in layout.a_offsets.iter().zip(&layout.b_offsets) {
        for i in 0..m {
            for j in 0..n {
                let terms = (0..k).map(|p| mul_values(&a.data.get(ao + i * k + p), &b.data.get(bo + p * n + j)));
                out.push(sum_values(a.kind(), terms));
            }
        }
    }
    Ok(Value::Tensor(Tensor {
        shape,
        data: data_from_values(a.kind(), &out),
    }))
}

/// `c ? a : b` element by element: `c` a bool tensor, `a` and `b` tensors of one kind, all
/// of one shape.
pub fn select_elements(c: &Tensor, a: &Tensor, b: &Tensor) -> Result<Tensor, RtError> {
    let TensorData::Bool(cs) = &c.data else {
        return Err(RtError::BadOperand("select"));
    };
    if c.shape != a.shape || a.shape != b.shape {
        return Err(RtError::ShapeMismatch(format!("`select` of shapes {:?}, {:?} and {:?}", c.shape, a.shape, b.shape)));
    }
    fn pick<T: Copy>(cs: &[bool], a: &[T], b: &[T]) -> Vec<T> {
        cs.iter().zip(a.iter().zip(b)).map(|(&c, (&x, &y))| if c { x } else { y }).collect()
    }
    let data = match (&a.data, &b.data) {
        (TensorData::F64(x), TensorData::F64(y)) => TensorData::F64(pick(cs, x, y)),
        (TensorData::F32(x), TensorData::F32(y)) => TensorData::F32(pick(cs, x, y)),
        (TensorData::I64(x), TensorData::I64(y)) => TensorData::I64(pick(cs, x, y)),
        (TensorData::Bool(x), TensorData::Bool(y)) => TensorData::Bool(pick(cs, x, y)),
        _ => return Err(RtError::BadOperand("select")),
    };
    Ok(Tensor { shape: a.shape.clone(), data })
}

/// The most entries a tensor built at run time may have (both engines).
pub const MAX_ELEMENTS: usize = 1 << 32;

/// The entry count of a new tensor of `shape`, or the "too large" error of `what`: 0 when
/// an extent is 0 (however large the others), else the product, at most [`MAX_ELEMENTS`].
pub fn tensor_size(shape: &[usize], what: &str) -> Result<usize, RtError> {
    if shape.contains(&0) {
        return Ok(0);
    }
    shape
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n))
        .filter(|&t| t <= MAX_ELEMENTS)
        .ok_or_else(|| RtError::Other(format!("{}: a tensor of shape {shape:?} is too large", user_form(what))))
}

/// How run-time messages name a `tensor.full`: what the source writes, and the buffer that
/// reverse mode keeps for a loop (one entry per iteration: it is also made by a `full`).
pub const FULL_FORM: &str = "`zeros`, `ones`, a repeat `[x; n]` or a loop's reverse-mode buffer";

/// How run-time messages name the tensor op `what` (an IR name): as the source writes it.
pub fn user_form(what: &str) -> &str {
    match what {
        "tensor.matmul" => "a matrix product",
        "tensor.full" => FULL_FORM,
        "tensor.pack" => "an array or matrix literal",
        "tensor.insert" => "an element assignment",
        other => other,
    }
}

/// Computes one op on its operands.
pub fn apply(op: &TensorOp, args: &[Arg<'_>]) -> Result<Value, RtError> {
    match super::kernels::fast(op, args) {
        Some(v) => Ok(v),
        None => apply_general(op, args),
    }
}

/// [`apply`] on [`Value`]s element by element, for every kind and every error case.
pub(crate) fn apply_general(op: &TensorOp, args: &[Arg<'_>]) -> Result<Value, RtError> {
    match op {
        TensorOp::Unary(u) => unary(*u, args.first().ok_or(RtError::BadOperand(u.name()))?),
        TensorOp::Binary(b) => match args {
            [x, y] => binary(*b, x, y),
            _ => Err(RtError::BadOperand(b.name())),
        },
        TensorOp::Cast(k) => match args.first() {
            Some(Arg::Scalar(v)) => scalar::cast(v, *k),
            Some(Arg::Tensor(t)) => map_tensor(t, *k, |v| scalar::cast(&v, *k)).map(Value::Tensor),
            None => Err(RtError::BadOperand("cast")),
        },
        TensorOp::Pack => {
            let first = args.first().ok_or(RtError::BadOperand("tensor.pack"))?;
            let (kind, inner): (ScalarKind, Vec<usize>) = match first {
                Arg::Scalar(v) => (
                    scalar::kind_of(v).ok_or(RtError::BadOperand("tensor.pack"))?,
                    Vec::new(),
                ),
                Arg::Tensor(t) => (t.kind(), t.shape.clone()),
            };
            let mut vs = Vec::new();
            for a in args {
                match a {
                    Arg::Scalar(v) if inner.is_empty() => vs.push(v.clone()),
                    Arg::Scalar(_) => {
                        return Err(RtError::ShapeMismatch(format!(
                            "an array or matrix literal with elements of shapes {inner:?} and []"
                        )));
                    }
                    Arg::Tensor(t) => {
                        if t.shape != inner {
                            return Err(RtError::ShapeMismatch(format!(
                                "an array or matrix literal with elements of shapes {inner:?} and {:?}",
                                t.shape
                            )));
                        }
                        vs.extend(elements(t));
                    }
                }
            }
            let mut shape = vec![args.len()];
            shape.extend(inner);
            Ok(Value::Tensor(Tensor {
                shape,
                data: data_from_values(kind, &vs),
            }))
        }
        TensorOp::Full => {
            let v = match args.first() {
                Some(Arg::Scalar(v)) => v.clone(),
                _ => return Err(RtError::BadOperand("tensor.full")),
            };
            let mut shape = Vec::new();
            for i in 1..args.len() {
                let n = i64_arg(args, i, "tensor.full")?;
                if n < 0 {
                    return Err(RtError::Other(format!(
                        "negative size {n} for a new tensor (`zeros`, `ones`)"
                    )));
                }
                shape.push(n as usize);
            }
            let total = tensor_size(&shape, "tensor.full")?;
            let kind = scalar::kind_of(&v).ok_or(RtError::BadOperand("tensor.full"))?;
            let data = full_data(kind, &v, total)
                .ok_or_else(|| RtError::Other(format!("{FULL_FORM}: no memory for {total} entries")))?;
            Ok(Value::Tensor(Tensor { shape, data }))
        }
        TensorOp::Extract(i) => {
            let t = tensor_arg(args, 0, "tensor.extract")?;
            let idx = i64::try_from(*i).unwrap_or(i64::MAX);
            let off = offset_of(t, &[idx])?;
            Ok(slice(t, off, &t.shape[1..]))
        }
        TensorOp::Index => {
            let t = tensor_arg(args, 0, "tensor.index")?;
            let idx: Vec<i64> = (1..args.len())
                .map(|i| i64_arg(args, i, "tensor.index"))
                .collect::<Result<_, _>>()?;
            let off = offset_of(t, &idx)?;
            Ok(slice(t, off, &t.shape[idx.len()..]))
        }
        TensorOp::Insert => {
            let mut t = tensor_arg(args, 0, "tensor.insert")?.clone();
            let idx: Vec<i64> = (2..args.len())
                .map(|i| i64_arg(args, i, "tensor.insert"))
                .collect::<Result<_, _>>()?;
            let value = args.get(1).ok_or(RtError::BadOperand("tensor.insert"))?;
            insert_into(&mut t, value, &idx)?;
            Ok(Value::Tensor(t))
        }
        TensorOp::DimOf(axis) => {
            let t = tensor_arg(args, 0, "tensor.dim")?;
            let n = t.shape.get(*axis as usize).ok_or_else(|| {
                RtError::ShapeMismatch(format!("axis {axis} of a tensor of rank {}", t.shape.len()))
            })?;
            Ok(Value::I64(*n as i64))
        }
        TensorOp::MatMul => matmul(
            tensor_arg(args, 0, "tensor.matmul")?,
            tensor_arg(args, 1, "tensor.matmul")?,
        ),
        TensorOp::Transpose => {
            let t = tensor_arg(args, 0, "tensor.transpose")?;
            if t.shape.len() != 2 {
                return Err(RtError::ShapeMismatch(format!(
                    "`tensor.transpose` of shape {:?}",
                    t.shape
                )));
            }
            let (m, n) = (t.shape[0], t.shape[1]);
            let vs: Vec<Value> = (0..n)
                .flat_map(|j| (0..m).map(move |i| (i, j)))
                .map(|(i, j)| t.data.get(i * n + j))
                .collect();
            Ok(Value::Tensor(Tensor {
                shape: vec![n, m],
                data: data_from_values(t.kind(), &vs),
            }))
        }
        TensorOp::Slice => {
            let t = tensor_arg(args, 0, "slice")?;
            let (lo, hi) = (i64_arg(args, 1, "slice")?, i64_arg(args, 2, "slice")?);
            super::reshape::slice_rows(t, lo, hi).map(Value::Tensor)
        }
        TensorOp::Concat => {
            let ts: Vec<&Tensor> = (0..args.len()).map(|i| tensor_arg(args, i, "concat")).collect::<Result<_, _>>()?;
            super::reshape::concat_rows(&ts).map(Value::Tensor)
        }
        TensorOp::Reshape => {
            let t = tensor_arg(args, 0, "reshape")?;
            let dims: Vec<i64> = (1..args.len()).map(|i| i64_arg(args, i, "reshape")).collect::<Result<_, _>>()?;
            super::reshape::reshape(t, &dims).map(Value::Tensor)
        }
        TensorOp::Select => {
            let (c, a, b) = (tensor_arg(args, 0, "select")?, tensor_arg(args, 1, "select")?, tensor_arg(args, 2, "select")?);
            select_elements(c, a, b).map(Value::Tensor)
        }
        TensorOp::Permute(perm) => super::reshape::permute(tensor_arg(args, 0, "permute")?, perm).map(Value::Tensor),
        TensorOp::Broadcast | TensorOp::ReduceTo(_) => {
            let what = if *op == TensorOp::Broadcast { "broadcast" } else { "reduce_to" };
            let t = tensor_arg(args, 0, what)?;
            let dims: Vec<i64> = (1..args.len()).map(|i| i64_arg(args, i, what)).collect::<Result<_, _>>()?;
            match op {
                TensorOp::ReduceTo(how) => super::broadcast::reduce_to(t, &dims, *how).map(Value::Tensor),
                _ => super::broadcast::broadcast_to(t, &dims).map(Value::Tensor),
            }
        }
        TensorOp::Literal(t) => Ok(Value::Tensor(t.clone())),
        TensorOp::Copy => Ok(Value::Tensor(tensor_arg(args, 0, "copy")?.clone())),
        TensorOp::Sum => {
            let t = tensor_arg(args, 0, "tensor.sum")?;
            if t.kind() == ScalarKind::Bool {
                return Err(RtError::BadOperand("tensor.sum"));
            }
            Ok(sum_values(t.kind(), elements(t)))
        }
    }
}

/// Writes `v` as the slots of `layout` (small tensors must have the layout's shape).
pub fn write_result(
    v: Value,
    layout: &FlatLayout,
    alloc: &mut dyn FnMut(Tensor) -> u64,
    out: &mut Vec<u64>,
) -> Result<(), RtError> {
    match (layout, v) {
        (FlatLayout::Scalar(k), v) if scalar::kind_of(&v) == Some(*k) => {
            out.push(super::layout::scalar_to_slot(&v))
        }
        (FlatLayout::Small { elem, shape }, Value::Tensor(t)) if t.kind() == *elem => {
            if t.shape != *shape {
                return Err(shape_err("result", shape, &t.shape));
            }
            super::layout::data_to_slots(&t.data, out);
        }
        (FlatLayout::Small { elem, shape }, v)
            if shape.is_empty() && scalar::kind_of(&v) == Some(*elem) =>
        {
            out.push(super::layout::scalar_to_slot(&v))
        }
        (FlatLayout::Heap { elem, shape }, Value::Tensor(t)) if t.kind() == *elem => {
            let fits = t.shape.len() == shape.len()
                && t.shape
                    .iter()
                    .zip(shape)
                    .all(|(n, d)| d.is_none_or(|d| d == *n));
            if !fits {
                return Err(RtError::ShapeMismatch(format!(
                    "result: {shape:?} vs {:?}",
                    t.shape
                )));
            }
            out.push(alloc(t));
        }
        (FlatLayout::Heap { elem, shape }, v)
            if shape.is_empty() && scalar::kind_of(&v) == Some(*elem) =>
        {
            out.push(alloc(Tensor {
                shape: Vec::new(),
                data: data_from_values(*elem, &[v]),
            }))
        }
        _ => {
            return Err(RtError::Other(
                "internal: result does not fit its layout".into(),
            ));
        }
    }
    Ok(())
}

/// Borrowed or owned tensor operand (helper for tests and routines).
pub fn owned(t: Tensor) -> Arg<'static> {
    Arg::Tensor(Cow::Owned(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vecf(xs: &[f64]) -> Arg<'static> {
        owned(Tensor::vector(xs.to_vec()))
    }

    #[test]
    fn elementwise_and_broadcast() {
        let r = apply(
            &TensorOp::Binary(BinaryOp::Mul),
            &[vecf(&[1.0, 2.0]), Arg::Scalar(Value::F64(3.0))],
        )
        .unwrap();
        assert_eq!(r, Value::Tensor(Tensor::vector(vec![3.0, 6.0])));
        let e = apply(
            &TensorOp::Binary(BinaryOp::Add),
            &[vecf(&[1.0]), vecf(&[1.0, 2.0])],
        );
        assert!(matches!(e, Err(RtError::ShapeMismatch(_))));
    }

    #[test]
    fn matmul_index_insert() {
        let a = owned(Tensor::from_f64(vec![2, 2], vec![1.0, 2.0, 3.0, 4.0]).unwrap());
        let r = apply(&TensorOp::MatMul, &[a.clone(), vecf(&[1.0, 1.0])]).unwrap();
        assert_eq!(r, Value::Tensor(Tensor::vector(vec![3.0, 7.0])));
        let r = apply(
            &TensorOp::Index,
            &[
                a.clone(),
                Arg::Scalar(Value::I64(1)),
                Arg::Scalar(Value::I64(0)),
            ],
        )
        .unwrap();
        assert_eq!(r, Value::F64(3.0));
        let e = apply(&TensorOp::Index, &[a.clone(), Arg::Scalar(Value::I64(2))]);
        assert_eq!(e, Err(RtError::IndexOutOfBounds { index: 2, len: 2 }));
        let r = apply(
            &TensorOp::Insert,
            &[a, vecf(&[9.0, 8.0]), Arg::Scalar(Value::I64(0))],
        )
        .unwrap();
        assert_eq!(
            r,
            Value::Tensor(Tensor::from_f64(vec![2, 2], vec![9.0, 8.0, 3.0, 4.0]).unwrap())
        );
    }

    #[test]
    fn sum_starts_from_the_first_term() {
        // A sum of negative zeros is −0, as adding the terms alone gives; the empty sum is +0.
        let s = apply(&TensorOp::Sum, &[vecf(&[-0.0])]).unwrap();
        assert!(matches!(s, Value::F64(x) if x.to_bits() == (-0.0f64).to_bits()));
        let s = apply(&TensorOp::Sum, &[vecf(&[-0.0, -0.0])]).unwrap();
        assert!(matches!(s, Value::F64(x) if x.to_bits() == (-0.0f64).to_bits()));
        let s = apply(&TensorOp::Sum, &[vecf(&[-0.0, 0.0])]).unwrap();
        assert!(matches!(s, Value::F64(x) if x.to_bits() == 0));
        let s = apply(&TensorOp::Sum, &[vecf(&[])]).unwrap();
        assert!(matches!(s, Value::F64(x) if x.to_bits() == 0));
    }
}
