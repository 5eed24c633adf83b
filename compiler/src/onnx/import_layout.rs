//! The ONNX ops that rearrange a tensor's elements along its axes, for constant parameters
//! and fixed extents: `Slice` (any axes and steps; axis 0 with step 1 also for computed
//! bounds, in `import_shapes`), `Split`, `Pad` (constant mode), `Tile`, `CumSum`, and the
//! constant-valued `Range` and `Size`; `Dropout` at inference is the identity.

use super::OnnxError;
use super::import::GraphImport;
use super::import_ops::{arg, infer, int, ints, node_name};
use super::proto::NodeProto;
use crate::ir::{Dim, Literal, OpKind, ScalarKind, Type, ValueId};
use mad_runtime::TensorData;

/// The outputs of `node` if it is one of this file's ops.
pub(super) fn lower_layout(g: &mut GraphImport<'_>, node: &NodeProto, op: &str) -> Result<Option<Vec<ValueId>>, OnnxError> {
    let n = node_name(node);
    let consts = |g: &GraphImport<'_>, i: usize| -> Option<Vec<i64>> {
        let name = node.input.get(i).filter(|s| !s.is_empty())?;
        match g.known.get(name).map(|t| &t.data) {
            Some(TensorData::I64(v)) => Some(v.clone()),
            _ => None,
        }
    };
    Ok(Some(match op {
        "Dropout" => {
            if node.output.iter().skip(1).any(|o| !o.is_empty()) {
                return Err(OnnxError::Invalid(format!("node '{n}': Dropout's mask output is not supported")));
            }
            vec![arg(g, node, 0)?]
        }
        "Size" => {
            let x = arg(g, node, 0)?;
            let mut count = g.int(1);
            for axis in 0..g.dims(x).len() {
                let e = g.extent(x, axis)?;
                count = infer(g, OpKind::Binary(crate::ir::BinaryOp::Mul), vec![count, e])?;
            }
            vec![count]
        }
        "Slice" => {
            let x = arg(g, node, 0)?;
            let dims = fixed_dims(g, x, &n, op)?;
            let (starts, ends) = if g.opset < 10 {
                (ints(node, "starts").unwrap_or_default(), ints(node, "ends").unwrap_or_default())
            } else {
                match (consts(g, 1), consts(g, 2)) {
                    (Some(s), Some(e)) => (s, e),
                    _ => return Err(OnnxError::Invalid(format!("node '{n}': Slice with computed bounds is supported on axis 0 with step 1, so far"))),
                }
            };
            let axes = if g.opset < 10 { ints(node, "axes") } else { consts(g, 3) }.unwrap_or_else(|| (0..starts.len() as i64).collect());
            let steps = consts(g, 4).unwrap_or_else(|| vec![1; starts.len()]);
            if axes.len() != starts.len() || ends.len() != starts.len() || steps.len() != starts.len() {
                return Err(OnnxError::Invalid(format!("node '{n}': Slice's starts, ends, axes and steps differ in length")));
            }
            let mut v = x;
            for (((&a, &s), &e), &step) in axes.iter().zip(&starts).zip(&ends).zip(&steps) {
                let axis = norm_axis(a, dims.len(), &n)?;
                let picked = slice_indices(dims[axis], s, e, step).ok_or_else(|| OnnxError::Invalid(format!("node '{n}': Slice step 0")))?;
                v = take(g, v, axis, &picked)?;
            }
            vec![v]
        }
        "Split" => {
            let x = arg(g, node, 0)?;
            let dims = fixed_dims(g, x, &n, op)?;
            let axis = norm_axis(int(node, "axis").unwrap_or(0), dims.len(), &n)?;
            let parts = node.output.len();
            let sizes = match consts(g, 1).or_else(|| ints(node, "split")) {
                Some(s) => s,
                None => {
                    let count = int(node, "num_outputs").map_or(parts, |k| k as usize).max(1);
                    let each = (dims[axis] as usize).div_ceil(count);
                    (0..count).map(|i| each.min((dims[axis] as usize).saturating_sub(i * each)) as i64).collect()
                }
            };
            if sizes.len() != parts || sizes.iter().any(|&s| s < 0) || sizes.iter().sum::<i64>() != dims[axis] as i64 {
                return Err(OnnxError::Invalid(format!("node '{n}': Split sizes {sizes:?} do not cover extent {} in {parts} parts", dims[axis])));
            }
            let mut out = Vec::new();
            let mut at = 0i64;
            for s in sizes {
                let picked: Vec<i64> = (at..at + s).collect();
                out.push(take(g, x, axis, &picked)?);
                at += s;
            }
            out
        }
        "Tile" => {
            let x = arg(g, node, 0)?;
            let dims = fixed_dims(g, x, &n, op)?;
            let repeats = consts(g, 1).ok_or_else(|| OnnxError::Invalid(format!("node '{n}': Tile needs constant repeats")))?;
            if repeats.len() != dims.len() || repeats.iter().any(|&r| r < 0) {
                return Err(OnnxError::Invalid(format!("node '{n}': Tile repeats {repeats:?} for a rank-{} tensor", dims.len())));
            }
            let mut v = x;
            for (axis, &r) in repeats.iter().enumerate() {
                let picked: Vec<i64> = (0..r).flat_map(|_| 0..dims[axis] as i64).collect();
                v = take(g, v, axis, &picked)?;
            }
            vec![v]
        }
        "Pad" => {
            let x = arg(g, node, 0)?;
            let dims = fixed_dims(g, x, &n, op)?;
            let mode = super::import_ops::attr(node, "mode").and_then(|a| a.s.clone()).unwrap_or_else(|| b"constant".to_vec());
            if mode != b"constant" {
                return Err(OnnxError::Invalid(format!("node '{n}': Pad mode '{}' is not supported yet (constant only)", String::from_utf8_lossy(&mode))));
            }
            let pads = if g.opset < 11 { ints(node, "pads") } else { consts(g, 1) }.ok_or_else(|| OnnxError::Invalid(format!("node '{n}': Pad needs constant pads")))?;
            let axes = consts(g, 3).unwrap_or_else(|| (0..dims.len() as i64).collect());
            if pads.len() != 2 * axes.len() {
                return Err(OnnxError::Invalid(format!("node '{n}': Pad has {} pads for {} axes", pads.len(), axes.len())));
            }
            let fill = match node.input.get(2).filter(|s| !s.is_empty()) {
                Some(c) => g.value(c)?,
                None => {
                    let k = g.kind(x);
                    g.b.constant(zero_of(k))
                }
            };
            let fill = if matches!(g.ty(fill), Type::Scalar(_)) { fill } else { infer(g, OpKind::Sum, vec![fill])? };
            let mut v = x;
            for (i, &a) in axes.iter().enumerate() {
                let axis = norm_axis(a, dims.len(), &n)?;
                v = pad_axis(g, v, axis, pads[i], pads[i + axes.len()], fill)?;
            }
            vec![v]
        }
        "CumSum" => {
            let x = arg(g, node, 0)?;
            let dims = fixed_dims(g, x, &n, op)?;
            let axis = consts(g, 1).and_then(|v| v.first().copied()).ok_or_else(|| OnnxError::Invalid(format!("node '{n}': CumSum needs a constant axis")))?;
            let axis = norm_axis(axis, dims.len(), &n)?;
            let (exclusive, reverse) = (int(node, "exclusive").unwrap_or(0) != 0, int(node, "reverse").unwrap_or(0) != 0);
            vec![cumsum(g, x, axis, dims[axis], exclusive, reverse)?]
        }
        "Range" => {
            let v = |i: usize| node.input.get(i).and_then(|s| g.known.get(s)).cloned();
            let (Some(a), Some(b), Some(d)) = (v(0), v(1), v(2)) else {
                return Err(OnnxError::Invalid(format!("node '{n}': Range needs constant inputs")));
            };
            let f = |t: &mad_runtime::Tensor| t.data.get(0).as_f64().or_else(|| t.data.get(0).as_i64().map(|x| x as f64)).unwrap_or(0.0);
            let (start, limit, delta) = (f(&a), f(&b), f(&d));
            if delta == 0.0 {
                return Err(OnnxError::Invalid(format!("node '{n}': Range with delta 0")));
            }
            let count = ((limit - start) / delta).ceil().max(0.0) as usize;
            if count > 1 << 20 {
                return Err(OnnxError::Invalid(format!("node '{n}': Range of {count} elements")));
            }
            let kind = a.kind();
            let items: Vec<ValueId> = (0..count)
                .map(|i| {
                    let x = start + i as f64 * delta;
                    g.b.constant(match kind {
                        ScalarKind::I64 => Literal::I64(x as i64),
                        ScalarKind::F32 => Literal::F32(x as f32),
                        _ => Literal::F64(x),
                    })
                })
                .collect();
            if items.is_empty() {
                return Err(OnnxError::Invalid(format!("node '{n}': an empty Range is not supported")));
            }
            if kind == ScalarKind::I64 {
                g.lists.insert(node.output.first().cloned().unwrap_or_default(), items.clone());
            }
            vec![infer(g, OpKind::Pack, items)?]
        }
        _ => return Ok(None),
    }))
}

fn zero_of(k: ScalarKind) -> Literal {
    match k {
        ScalarKind::F32 => Literal::F32(0.0),
        ScalarKind::I64 => Literal::I64(0),
        ScalarKind::Bool => Literal::Bool(false),
        ScalarKind::F64 => Literal::F64(0.0),
    }
}

fn fixed_dims(g: &GraphImport<'_>, x: ValueId, node: &str, op: &str) -> Result<Vec<u64>, OnnxError> {
    g.dims(x)
        .iter()
        .map(|d| if let Dim::Fixed(n) = d { Some(*n) } else { None })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| OnnxError::Invalid(format!("node '{node}': {op} needs fixed extents, found {}", g.ty(x))))
}

fn norm_axis(a: i64, rank: usize, node: &str) -> Result<usize, OnnxError> {
    let k = if a < 0 { a + rank as i64 } else { a };
    if k < 0 || k >= rank as i64 {
        return Err(OnnxError::Invalid(format!("node '{node}': axis {a} of a rank-{rank} tensor")));
    }
    Ok(k as usize)
}

/// The indices `Slice` takes from an axis of extent `n` (ONNX's clamping rules).
fn slice_indices(n: u64, start: i64, end: i64, step: i64) -> Option<Vec<i64>> {
    if step == 0 {
        return None;
    }
    let n = n as i64;
    let wrap = |v: i64| if v < 0 { v + n } else { v };
    let (s, e) = (wrap(start), wrap(end));
    let mut out = Vec::new();
    if step > 0 {
        let (mut i, e) = (s.clamp(0, n), e.clamp(0, n));
        while i < e {
            out.push(i);
            i += step;
        }
    } else {
        let (mut i, e) = (s.clamp(-1, n - 1), e.clamp(-1, n - 1));
        while i > e {
            out.push(i);
            i += step;
        }
    }
    Some(out)
}

/// The entries of `x` at `indices` along `axis`, in that order (`Gather` by constant indices).
fn take(g: &mut GraphImport<'_>, x: ValueId, axis: usize, indices: &[i64]) -> Result<ValueId, OnnxError> {
    let dims = g.dims(x);
    if dims[axis].fixed().is_some_and(|n| indices.iter().copied().eq(0..n as i64)) {
        return Ok(x);
    }
    if indices.is_empty() {
        return Err(OnnxError::Invalid("an empty slice is not supported".into()));
    }
    let front = super::import_shapes::to_front(g, x, axis)?;
    let packed = super::import_shapes::rows_at(g, front, indices)?;
    super::import_shapes::from_front(g, packed, axis)
}

/// `x` with `before` and `after` entries of `fill` on either side of `axis` (negative pads
/// crop).
fn pad_axis(g: &mut GraphImport<'_>, x: ValueId, axis: usize, before: i64, after: i64, fill: ValueId) -> Result<ValueId, OnnxError> {
    let n = g.dims(x)[axis].fixed().unwrap_or(0) as i64;
    let keep: Vec<i64> = (before.min(0).abs()..n - after.min(0).abs()).collect();
    let x = take(g, x, axis, &keep)?;
    let (before, after) = (before.max(0), after.max(0));
    if before == 0 && after == 0 {
        return Ok(x);
    }
    let front = super::import_shapes::to_front(g, x, axis)?;
    let mut parts = Vec::new();
    let k = g.kind(x);
    for (count, at_end) in [(before, false), (after, true)] {
        if count == 0 {
            continue;
        }
        let mut shape = g.dims(front);
        shape[0] = Dim::Fixed(count as u64);
        let extents = g.extents(&shape, &[front])?;
        let mut ops = vec![fill];
        ops.extend(extents);
        let block = g.b.push1(OpKind::Full, ops, Type::Tensor { elem: k, shape });
        parts.push((at_end, block));
    }
    let mut items: Vec<ValueId> = parts.iter().filter(|(e, _)| !e).map(|p| p.1).collect();
    items.push(front);
    items.extend(parts.iter().filter(|(e, _)| *e).map(|p| p.1));
    let joined = infer(g, OpKind::Concat, items)?;
    super::import_shapes::from_front(g, joined, axis)
}

/// Running sums along `axis` (of extent `n`) as a product with a triangular matrix of ones.
fn cumsum(g: &mut GraphImport<'_>, x: ValueId, axis: usize, n: u64, exclusive: bool, reverse: bool) -> Result<ValueId, OnnxError> {
    let k = g.kind(x);
    let one = |g: &mut GraphImport<'_>, v: bool| g.b.constant(match (k, v) {
        (ScalarKind::F32, true) => Literal::F32(1.0),
        (ScalarKind::F32, false) => Literal::F32(0.0),
        (_, true) => Literal::F64(1.0),
        (_, false) => Literal::F64(0.0),
    });
    let mut rows = Vec::new();
    for i in 0..n {
        let mut row = Vec::new();
        for j in 0..n {
            let hit = match (reverse, exclusive) {
                (false, false) => j <= i,
                (false, true) => j < i,
                (true, false) => j >= i,
                (true, true) => j > i,
            };
            row.push(one(g, hit));
        }
        rows.push(infer(g, OpKind::Pack, row)?);
    }
    let tri = infer(g, OpKind::Pack, rows)?;
    // [n, …] → [n, rest] → tri · that → back.
    let front = super::import_shapes::to_front(g, x, axis)?;
    let dims = g.dims(front);
    let rest: u64 = dims[1..].iter().map(|d| d.fixed().unwrap_or(1)).product();
    let flat = super::import_ops::reshape_to(g, front, &[Dim::Fixed(n), Dim::Fixed(rest)], "CumSum")?;
    let summed = infer(g, OpKind::MatMul, vec![tri, flat])?;
    let back = super::import_ops::reshape_to(g, summed, &dims, "CumSum")?;
    super::import_shapes::from_front(g, back, axis)
}
