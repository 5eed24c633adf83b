//! The ONNX ops the importer knows, each as IR ops (one function per family).

use super::OnnxError;
use super::import::GraphImport;
use super::proto::{AttributeProto, NodeProto};
use crate::ir::{BinaryOp, Dim, Literal, OpKind, Reduce, ScalarKind, Type, UnaryOp, ValueId};

/// The IR values of `node`'s outputs.
pub(super) fn lower_node(g: &mut GraphImport<'_>, node: &NodeProto) -> Result<Vec<ValueId>, OnnxError> {
    let op = node.op_type.clone().unwrap_or_default();
    let domain = node.domain.as_deref().unwrap_or("");
    let opset = g.opset;
    let unsupported = || OnnxError::UnsupportedOp { op: op.clone(), node: node_name(node), opset };
    if !matches!(domain, "" | "ai.onnx") {
        return Err(OnnxError::UnsupportedOp { op: format!("{domain}.{op}"), node: node_name(node), opset: g.opset });
    }
    let inputs = node.input.len();
    let n = node_name(node);
    let v = match op.as_str() {
        "Identity" => arg(g, node, 0)?,
        "Neg" | "Abs" | "Exp" | "Log" | "Sqrt" | "Sin" | "Cos" | "Tan" | "Asin" | "Acos" | "Atan" | "Sinh" | "Cosh" | "Tanh" | "Sigmoid"
        | "Softplus" | "Erf" | "Floor" | "Ceil" | "Not" => {
            let u = unary(&op).ok_or_else(unsupported)?;
            let a = arg(g, node, 0)?;
            infer(g, OpKind::Unary(u), vec![a])?
        }
        "Relu" => {
            let a = arg(g, node, 0)?;
            let zero = float(g, a, 0.0);
            infer(g, OpKind::Binary(BinaryOp::Max), vec![a, zero])?
        }
        "Reciprocal" => {
            let a = arg(g, node, 0)?;
            let one = float(g, a, 1.0);
            infer(g, OpKind::Binary(BinaryOp::Div), vec![one, a])?
        }
        "Add" | "Sub" | "Mul" | "Div" | "Pow" | "Equal" | "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual" | "And" | "Or" => {
            let (a, b) = (arg(g, node, 0)?, arg(g, node, 1)?);
            binary(g, binary_op(&op).ok_or_else(unsupported)?, a, b, &n)?
        }
        "Min" | "Max" | "Sum" | "Mean" => {
            let b = match op.as_str() {
                "Min" => BinaryOp::Min,
                "Max" => BinaryOp::Max,
                _ => BinaryOp::Add,
            };
            let mut acc = arg(g, node, 0)?;
            for i in 1..inputs {
                let x = arg(g, node, i)?;
                acc = binary(g, b, acc, x, &n)?;
            }
            if op == "Mean" {
                let count = float(g, acc, inputs as f64);
                acc = infer(g, OpKind::Binary(BinaryOp::Div), vec![acc, count])?;
            }
            acc
        }
        "MatMul" => {
            let (a, b) = (arg(g, node, 0)?, arg(g, node, 1)?);
            matmul(g, a, b, &n)?
        }
        "Gemm" => {
            let (a, b, c) = (arg(g, node, 0)?, arg(g, node, 1)?, opt_arg(g, node, 2)?);
            gemm(g, node, a, b, c, &n)?
        }
        "Transpose" => {
            let a = arg(g, node, 0)?;
            let rank = g.dims(a).len();
            let perm = ints(node, "perm").unwrap_or_else(|| (0..rank as i64).rev().collect());
            let identity = perm.iter().enumerate().all(|(i, &p)| p == i as i64);
            match (rank, perm.as_slice()) {
                _ if identity && perm.len() == rank => a,
                (2, [1, 0]) => infer(g, OpKind::Transpose, vec![a])?,
                _ => {
                    let perm: Vec<u32> = perm.iter().map(|&p| u32::try_from(p).unwrap_or(u32::MAX)).collect();
                    infer(g, OpKind::Permute(perm), vec![a])?
                }
            }
        }
        "Cast" => {
            let to = int(node, "to").unwrap_or(0) as i32;
            let k = super::load::scalar_kind(to).ok_or_else(|| OnnxError::Invalid(format!("node '{n}': Cast to {}, which mad does not compute with", super::load::elem_name(to))))?;
            let a = arg(g, node, 0)?;
            cast(g, a, k)?
        }
        "ReduceSum" | "ReduceMean" | "ReduceMax" | "ReduceMin" | "ReduceSumSquare" | "ReduceL1" | "ReduceL2" | "ReduceLogSum" | "ReduceLogSumExp" => {
            let a = arg(g, node, 0)?;
            reduce(g, node, &op, a, node.input.get(1).filter(|s| !s.is_empty()).cloned(), &n)?
        }
        "Reshape" => {
            let a = arg(g, node, 0)?;
            let target = known_ints(g, node, 1)?;
            let target: Vec<ValueId> = target.iter().map(|&t| g.int(t)).collect();
            let allowzero = int(node, "allowzero").unwrap_or(0) != 0;
            reshape(g, a, &target, allowzero, &n)?
        }
        "Flatten" => {
            let a = arg(g, node, 0)?;
            let d = g.dims(a);
            let axis = int(node, "axis").unwrap_or(1);
            let axis = if axis < 0 { axis + d.len() as i64 } else { axis };
            if axis < 0 || axis > d.len() as i64 {
                return Err(OnnxError::Invalid(format!("node '{n}': Flatten axis out of range")));
            }
            let (lo, hi) = d.split_at(axis as usize);
            let prod = |ds: &[Dim]| ds.iter().try_fold(1i64, |p, d| if let Dim::Fixed(k) = d { Some(p * *k as i64) } else { None });
            match (prod(lo), prod(hi)) {
                (Some(a0), Some(a1)) => {
                    let target = [g.int(a0), g.int(a1)];
                    reshape(g, a, &target, false, &n)?
                }
                _ => return Err(OnnxError::Invalid(format!("node '{n}': Flatten needs fixed extents"))),
            }
        }
        "Squeeze" | "Unsqueeze" => {
            let a = arg(g, node, 0)?;
            let axes = if inputs > 1 { Some(known_ints(g, node, 1)?) } else { ints(node, "axes") };
            let d = g.dims(a);
            let mut out: Vec<Dim> = d.clone();
            if op == "Squeeze" {
                let rank = d.len() as i64;
                let axes: Vec<i64> = match axes {
                    Some(ax) => ax.iter().map(|&k| if k < 0 { k + rank } else { k }).collect(),
                    None => (0..rank).filter(|&k| d[k as usize] == Dim::Fixed(1)).collect(),
                };
                out = d.iter().enumerate().filter(|(i, _)| !axes.contains(&(*i as i64))).map(|(_, d)| d.clone()).collect();
            } else {
                let rank = (d.len() + axes.as_ref().map_or(0, Vec::len)) as i64;
                let mut ax: Vec<i64> = axes.unwrap_or_default().iter().map(|&k| if k < 0 { k + rank } else { k }).collect();
                ax.sort();
                for k in ax {
                    if k < 0 || k > out.len() as i64 {
                        return Err(OnnxError::Invalid(format!("node '{n}': Unsqueeze axis out of range")));
                    }
                    out.insert(k as usize, Dim::Fixed(1));
                }
            }
            let v = reshape_to(g, a, &out, &n)?;
            if op == "Unsqueeze" && out.len() == d.len() + 1 && out[0] == Dim::Fixed(1) && out[1..] == d[..] {
                g.unsqueezed.insert(v, a);
            }
            v
        }
        _ => match super::import_nn::lower_nn(g, node, &op)? {
            Some(v) => v,
            None => return super::import_layout::lower_layout(g, node, &op)?.ok_or_else(unsupported),
        },
    };
    Ok(vec![v])
}

/// The value of input `i` of `node`.
pub(super) fn arg(g: &mut GraphImport<'_>, node: &NodeProto, i: usize) -> Result<ValueId, OnnxError> {
    opt_arg(g, node, i)?.ok_or_else(|| OnnxError::Invalid(format!("node '{}' ({}) lacks input {i}", node_name(node), node.op_type.as_deref().unwrap_or(""))))
}

/// The value of optional input `i` of `node` (absent or named `""`: `None`).
pub(super) fn opt_arg(g: &mut GraphImport<'_>, node: &NodeProto, i: usize) -> Result<Option<ValueId>, OnnxError> {
    match node.input.get(i).filter(|s| !s.is_empty()) {
        Some(name) => g.value(name).map(Some),
        None => Ok(None),
    }
}

pub(super) fn node_name(node: &NodeProto) -> String {
    node.name.clone().filter(|s| !s.is_empty()).unwrap_or_else(|| node.output.first().cloned().unwrap_or_default())
}

pub(super) fn attr<'a>(node: &'a NodeProto, name: &str) -> Option<&'a AttributeProto> {
    node.attribute.iter().find(|a| a.name.as_deref() == Some(name))
}

pub(super) fn int(node: &NodeProto, name: &str) -> Option<i64> {
    attr(node, name).and_then(|a| a.i)
}

pub(super) fn ints(node: &NodeProto, name: &str) -> Option<Vec<i64>> {
    attr(node, name).map(|a| a.ints.clone())
}

pub(super) fn float_attr(node: &NodeProto, name: &str) -> Option<f64> {
    attr(node, name).and_then(|a| a.f).map(f64::from)
}

/// The `i64` data of constant input `i` (a shape or axes operand).
pub(super) fn known_ints(g: &GraphImport<'_>, node: &NodeProto, i: usize) -> Result<Vec<i64>, OnnxError> {
    let name = node.input.get(i).cloned().unwrap_or_default();
    match g.known.get(&name).map(|t| &t.data) {
        Some(mad_runtime::TensorData::I64(v)) => Ok(v.clone()),
        _ => Err(OnnxError::Invalid(format!("node '{}': input '{name}' must be a constant int64 tensor (an initializer or a Constant)", node_name(node)))),
    }
}

pub(super) fn infer(g: &mut GraphImport<'_>, kind: OpKind, ops: Vec<ValueId>) -> Result<ValueId, OnnxError> {
    g.b.infer(kind, ops).map_err(OnnxError::Invalid)
}

/// A float constant of `like`'s kind.
pub(super) fn float(g: &mut GraphImport<'_>, like: ValueId, x: f64) -> ValueId {
    let lit = match g.kind(like) {
        ScalarKind::F32 => Literal::F32(x as f32),
        ScalarKind::I64 => Literal::I64(x as i64),
        _ => Literal::F64(x),
    };
    g.b.constant(lit)
}

fn unary(op: &str) -> Option<UnaryOp> {
    Some(match op {
        "Neg" => UnaryOp::Neg,
        "Abs" => UnaryOp::Abs,
        "Exp" => UnaryOp::Exp,
        "Log" => UnaryOp::Log,
        "Sqrt" => UnaryOp::Sqrt,
        "Sin" => UnaryOp::Sin,
        "Cos" => UnaryOp::Cos,
        "Tan" => UnaryOp::Tan,
        "Asin" => UnaryOp::Asin,
        "Acos" => UnaryOp::Acos,
        "Atan" => UnaryOp::Atan,
        "Sinh" => UnaryOp::Sinh,
        "Cosh" => UnaryOp::Cosh,
        "Tanh" => UnaryOp::Tanh,
        "Sigmoid" => UnaryOp::Sigmoid,
        "Softplus" => UnaryOp::Softplus,
        "Erf" => UnaryOp::Erf,
        "Floor" => UnaryOp::Floor,
        "Ceil" => UnaryOp::Ceil,
        "Not" => UnaryOp::Not,
        _ => return None,
    })
}

fn binary_op(op: &str) -> Option<BinaryOp> {
    Some(match op {
        "Add" => BinaryOp::Add,
        "Sub" => BinaryOp::Sub,
        "Mul" => BinaryOp::Mul,
        "Div" => BinaryOp::Div,
        "Pow" => BinaryOp::Pow,
        "Equal" => BinaryOp::Eq,
        "Less" => BinaryOp::Lt,
        "Greater" => BinaryOp::Gt,
        "LessOrEqual" => BinaryOp::Le,
        "GreaterOrEqual" => BinaryOp::Ge,
        "And" => BinaryOp::And,
        "Or" => BinaryOp::Or,
        _ => return None,
    })
}

/// An elementwise binary op with numpy broadcasting (`Pow` with an exponent of another
/// kind casts it to the base's kind, as ONNX allows mixed kinds there).
pub(super) fn binary(g: &mut GraphImport<'_>, op: BinaryOp, a: ValueId, b: ValueId, node: &str) -> Result<ValueId, OnnxError> {
    let b = if op == BinaryOp::Pow && g.kind(a) != g.kind(b) { infer(g, OpKind::Cast(g.kind(a)), vec![b])? } else { b };
    let ops = g.broadcast_all(&[a, b], node)?;
    infer(g, OpKind::Binary(op), ops)
}

/// `MatMul` (numpy's `matmul`): batch axes broadcast; a vector on the left is a row.
fn matmul(g: &mut GraphImport<'_>, a: ValueId, b: ValueId, node: &str) -> Result<ValueId, OnnxError> {
    match (g.dims(a).len(), g.dims(b).len()) {
        (0, _) | (_, 0) => Err(OnnxError::Invalid(format!("node '{node}': MatMul of a scalar"))),
        (1, 1) => {
            let p = infer(g, OpKind::Binary(BinaryOp::Mul), vec![a, b])?;
            infer(g, OpKind::Sum, vec![p])
        }
        (1, 2) => {
            let bt = infer(g, OpKind::Transpose, vec![b])?;
            infer(g, OpKind::MatMul, vec![bt, a])
        }
        (1, _) => {
            // [k] as [1, k]; the product's unit row axis dropped again.
            let mut row = vec![Dim::Fixed(1)];
            row.extend(g.dims(a));
            let a = reshape_to(g, a, &row, node)?;
            let p = infer(g, OpKind::MatMul, vec![a, b])?;
            let mut d = g.dims(p);
            d.remove(d.len() - 2);
            reshape_to(g, p, &d, node)
        }
        _ => infer(g, OpKind::MatMul, vec![a, b]),
    }
}

/// `Gemm`: `alpha·A'·B' + beta·C`.
fn gemm(g: &mut GraphImport<'_>, node_p: &NodeProto, a: ValueId, b: ValueId, c: Option<ValueId>, node: &str) -> Result<ValueId, OnnxError> {
    let a = if int(node_p, "transA").unwrap_or(0) != 0 { infer(g, OpKind::Transpose, vec![a])? } else { a };
    let b = if int(node_p, "transB").unwrap_or(0) != 0 { infer(g, OpKind::Transpose, vec![b])? } else { b };
    let mut y = infer(g, OpKind::MatMul, vec![a, b])?;
    let alpha = float_attr(node_p, "alpha").unwrap_or(1.0);
    if alpha != 1.0 {
        let k = float(g, y, alpha);
        y = infer(g, OpKind::Binary(BinaryOp::Mul), vec![y, k])?;
    }
    if let Some(c) = c {
        let beta = float_attr(node_p, "beta").unwrap_or(1.0);
        let c = if beta != 1.0 {
            let k = float(g, c, beta);
            infer(g, OpKind::Binary(BinaryOp::Mul), vec![c, k])?
        } else {
            c
        };
        y = binary(g, BinaryOp::Add, y, c, node)?;
    }
    Ok(y)
}

/// `a` converted to kind `k` as ONNX's `Cast` does: to bool by comparing with zero, from
/// bool to a float through `i64` (the IR's casts of bool go to `i64` only).
pub(super) fn cast(g: &mut GraphImport<'_>, a: ValueId, k: ScalarKind) -> Result<ValueId, OnnxError> {
    let from = g.kind(a);
    if from == k {
        return Ok(a);
    }
    if k == ScalarKind::Bool {
        let zero = float(g, a, 0.0);
        return infer(g, OpKind::Binary(BinaryOp::Ne), vec![a, zero]);
    }
    let a = if from == ScalarKind::Bool && k != ScalarKind::I64 { infer(g, OpKind::Cast(ScalarKind::I64), vec![a])? } else { a };
    infer(g, OpKind::Cast(k), vec![a])
}

/// The reductions (`ReduceSum`, `ReduceMean`, `ReduceMax`, `ReduceMin`, `ReduceSumSquare`,
/// `ReduceL1`, `ReduceL2`, `ReduceLogSum`, `ReduceLogSumExp`) over constant axes (an
/// attribute before opset 13 or 18, an input after), with `keepdims` and
/// `noop_with_empty_axes`.
fn reduce(g: &mut GraphImport<'_>, node_p: &NodeProto, op: &str, a: ValueId, axes_input: Option<String>, node: &str) -> Result<ValueId, OnnxError> {
    let rank = g.dims(a).len() as i64;
    let axes = match axes_input {
        Some(_) => Some(known_ints(g, node_p, 1)?),
        None => ints(node_p, "axes"),
    };
    let keep = int(node_p, "keepdims").unwrap_or(1) != 0;
    let noop = int(node_p, "noop_with_empty_axes").unwrap_or(0) != 0;
    let axes: Vec<usize> = match axes {
        Some(ax) if !ax.is_empty() => {
            let mut out = Vec::new();
            for k in ax {
                let k = if k < 0 { k + rank } else { k };
                if k < 0 || k >= rank {
                    return Err(OnnxError::Invalid(format!("node '{node}': {op} axis out of range")));
                }
                out.push(k as usize);
            }
            out
        }
        _ if noop || rank == 0 => return Ok(a),
        _ => (0..rank as usize).collect(),
    };
    let sq = |g: &mut GraphImport<'_>, x| infer(g, OpKind::Binary(BinaryOp::Mul), vec![x, x]);
    let y = match op {
        "ReduceSum" => fold(g, a, Reduce::Sum, &axes)?,
        "ReduceMax" => fold(g, a, Reduce::Max, &axes)?,
        "ReduceMin" => fold(g, a, Reduce::Min, &axes)?,
        "ReduceMean" => mean(g, a, &axes)?,
        "ReduceSumSquare" | "ReduceL2" => {
            let s = sq(g, a)?;
            let y = fold(g, s, Reduce::Sum, &axes)?;
            if op == "ReduceL2" { infer(g, OpKind::Unary(UnaryOp::Sqrt), vec![y])? } else { y }
        }
        "ReduceL1" => {
            let m = infer(g, OpKind::Unary(UnaryOp::Abs), vec![a])?;
            fold(g, m, Reduce::Sum, &axes)?
        }
        "ReduceLogSum" => {
            let y = fold(g, a, Reduce::Sum, &axes)?;
            infer(g, OpKind::Unary(UnaryOp::Log), vec![y])?
        }
        _ => log_sum_exp(g, a, &axes)?,
    };
    if keep {
        return Ok(y);
    }
    let out: Vec<Dim> = g.dims(a).iter().enumerate().filter(|(i, _)| !axes.contains(i)).map(|(_, x)| x.clone()).collect();
    reshape_to(g, y, &out, node)
}

/// `x` folded over `axes` by `how`, the reduced axes kept with extent 1.
pub(super) fn fold(g: &mut GraphImport<'_>, x: ValueId, how: Reduce, axes: &[usize]) -> Result<ValueId, OnnxError> {
    let kept: Vec<Dim> = g.dims(x).iter().enumerate().map(|(i, d)| if axes.contains(&i) { Dim::Fixed(1) } else { d.clone() }).collect();
    let extents = g.extents(&kept, &[x])?;
    let mut ops = vec![x];
    ops.extend(extents);
    let k = g.kind(x);
    Ok(g.b.push1(OpKind::ReduceTo(how), ops, Type::Tensor { elem: k, shape: kept }))
}

/// The mean of `x` over `axes` (kept with extent 1).
pub(super) fn mean(g: &mut GraphImport<'_>, x: ValueId, axes: &[usize]) -> Result<ValueId, OnnxError> {
    let sum = fold(g, x, Reduce::Sum, axes)?;
    let mut count = g.int(1);
    for &a in axes {
        let n = g.extent(x, a)?;
        count = infer(g, OpKind::Binary(BinaryOp::Mul), vec![count, n])?;
    }
    let count = infer(g, OpKind::Cast(g.kind(x)), vec![count])?;
    infer(g, OpKind::Binary(BinaryOp::Div), vec![sum, count])
}

/// `log(sum(exp(x)))` over `axes` (kept), shifted by the maximum so that it does not
/// overflow.
pub(super) fn log_sum_exp(g: &mut GraphImport<'_>, x: ValueId, axes: &[usize]) -> Result<ValueId, OnnxError> {
    let m = fold(g, x, Reduce::Max, axes)?;
    let shifted = binary(g, BinaryOp::Sub, x, m, "")?;
    let e = infer(g, OpKind::Unary(UnaryOp::Exp), vec![shifted])?;
    let s = fold(g, e, Reduce::Sum, axes)?;
    let l = infer(g, OpKind::Unary(UnaryOp::Log), vec![s])?;
    infer(g, OpKind::Binary(BinaryOp::Add), vec![l, m])
}

/// `Reshape` to the extents `target` (`i64` values; a constant `0` copies the extent unless
/// `allowzero`, one constant `-1` is the element count over the others).
pub(super) fn reshape(g: &mut GraphImport<'_>, a: ValueId, target: &[ValueId], allowzero: bool, node: &str) -> Result<ValueId, OnnxError> {
    let d = g.dims(a);
    if target.is_empty() || matches!(g.ty(a), Type::Scalar(_)) {
        let dims: Vec<Dim> = target.iter().map(|&t| g.dim_of_extent(t)).collect();
        return reshape_to(g, a, &dims, node);
    }
    let (mut out, mut extents, mut infer_at) = (Vec::with_capacity(target.len()), Vec::with_capacity(target.len()), None);
    for (i, &t) in target.iter().enumerate() {
        match g.constant_of(t) {
            Some(0) if !allowzero => {
                out.push(d.get(i).cloned().ok_or_else(|| OnnxError::Invalid(format!("node '{node}': Reshape copies extent {i} of a rank-{} tensor", d.len())))?);
                extents.push(g.extent(a, i)?);
            }
            Some(-1) if infer_at.is_none() => {
                infer_at = Some(i);
                out.push(Dim::Dyn);
                extents.push(t);
            }
            Some(k) if k < 0 => return Err(OnnxError::Invalid(format!("node '{node}': Reshape to extent {k}"))),
            _ => {
                out.push(g.dim_of_extent(t));
                extents.push(t);
            }
        }
    }
    if let Some(i) = infer_at {
        let product = |ds: Vec<&Dim>| ds.into_iter().try_fold(1u64, |p, x| if let Dim::Fixed(n) = x { Some(p * n) } else { None });
        let total = product(d.iter().collect());
        let rest = product(out.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, x)| x).collect());
        if let (Some(t), Some(r)) = (total, rest) {
            if r == 0 || t % r != 0 {
                return Err(OnnxError::Invalid(format!("node '{node}': Reshape of {t} elements to extents whose product is {r}")));
            }
            out[i] = Dim::Fixed(t / r);
            extents[i] = g.int((t / r) as i64);
        } else {
            // Known at run time only: the element count over the other extents.
            let mut count = g.int(1);
            for axis in 0..d.len() {
                let e = g.extent(a, axis)?;
                count = infer(g, OpKind::Binary(BinaryOp::Mul), vec![count, e])?;
            }
            let mut rest = g.int(1);
            for (j, &e) in extents.clone().iter().enumerate() {
                if j != i {
                    rest = infer(g, OpKind::Binary(BinaryOp::Mul), vec![rest, e])?;
                }
            }
            extents[i] = infer(g, OpKind::Binary(BinaryOp::Div), vec![count, rest])?;
        }
    }
    if out == d {
        return Ok(a);
    }
    let k = g.kind(a);
    let mut ops = vec![a];
    ops.extend(extents);
    Ok(g.b.push1(OpKind::Reshape, ops, Type::Tensor { elem: k, shape: out }))
}

/// `a`'s elements under the extents `dims`.
pub(super) fn reshape_to(g: &mut GraphImport<'_>, a: ValueId, dims: &[Dim], node: &str) -> Result<ValueId, OnnxError> {
    if g.dims(a) == dims && matches!(g.ty(a), Type::Tensor { .. }) {
        return Ok(a);
    }
    let k = g.kind(a);
    if dims.is_empty() {
        // A scalar: the one element (as a sum, whose adjoint is a broadcast, not a scatter).
        if !g.dims(a).iter().all(|d| *d == Dim::Fixed(1)) {
            return Err(OnnxError::Invalid(format!("node '{node}': reshape of {} to a scalar", g.ty(a))));
        }
        return infer(g, OpKind::Sum, vec![a]);
    }
    if matches!(g.ty(a), Type::Scalar(_)) {
        let extents = g.extents(dims, &[])?;
        let mut ops = vec![a];
        ops.extend(extents);
        return Ok(g.b.push1(OpKind::Full, ops, Type::Tensor { elem: k, shape: dims.to_vec() }));
    }
    // Where only unit axes come and go (squeeze, unsqueeze, kept reduced axes), the
    // other axes pair up in order and an extent not fixed is read off its partner.
    let source = g.dims(a);
    let non_unit = |ds: &[Dim]| ds.iter().enumerate().filter(|(_, d)| **d != Dim::Fixed(1)).map(|(i, _)| i).collect::<Vec<_>>();
    let (from, to) = (non_unit(&source), non_unit(dims));
    let partner = |i: usize| (from.len() == to.len()).then(|| to.iter().position(|&j| j == i).map(|k| from[k])).flatten();
    let mut extents = Vec::new();
    for (i, d) in dims.iter().enumerate() {
        extents.push(match d {
            Dim::Fixed(n) => g.int(*n as i64),
            _ => {
                let same = partner(i).filter(|&s| source[s] == *d).or_else(|| source.iter().position(|x| x == d).filter(|_| matches!(d, Dim::Sym(_))));
                let Some(axis) = same else {
                    return Err(OnnxError::Invalid(format!("node '{node}': extent {i} of the result is unknown")));
                };
                g.extent(a, axis)?
            }
        });
    }
    let mut ops = vec![a];
    ops.extend(extents);
    Ok(g.b.push1(OpKind::Reshape, ops, Type::Tensor { elem: k, shape: dims.to_vec() }))
}
