//! The ONNX ops on shapes and indices: `Shape`, `Gather`, `Concat`, `Unsqueeze`/`Squeeze`
//! of `int64` lists, `Reshape` and `Expand` to computed shapes, `ConstantOfShape`, `Slice`,
//! `ScatterND` of one index tuple, `Where` on a scalar condition and `Mod`.
//!
//! A 1-D `int64` value that holds extents is kept element by element
//! ([`GraphImport::lists`]), so that a shape computed in the graph becomes the extent
//! operands of the IR op that takes it.

use super::OnnxError;
use super::import::GraphImport;
use super::import_ops::{infer, int, node_name, reshape, reshape_to};
use super::proto::NodeProto;
use crate::ir::{BinaryOp, Dim, OpKind, ScalarKind, Type, ValueId};

/// Lowers `node` if it is one of this file's ops; returns whether it was.
pub(super) fn lower_shape_node(g: &mut GraphImport<'_>, node: &NodeProto) -> Result<bool, OnnxError> {
    let op = node.op_type.as_deref().unwrap_or("");
    if !matches!(node.domain.as_deref(), None | Some("") | Some("ai.onnx")) {
        return Ok(false);
    }
    let n = node_name(node);
    let input = |i: usize| node.input.get(i).cloned().filter(|s| !s.is_empty()).ok_or_else(|| OnnxError::Invalid(format!("node '{n}' ({op}) lacks input {i}")));
    let out = node.output.first().cloned().unwrap_or_default();
    match op {
        "Shape" => {
            let t = g.value(&input(0)?)?;
            let rank = g.dims(t).len() as i64;
            let clamp = |k: i64| (if k < 0 { k + rank } else { k }).clamp(0, rank) as usize;
            let (lo, hi) = (clamp(int(node, "start").unwrap_or(0)), clamp(int(node, "end").unwrap_or(rank)));
            let mut l = Vec::new();
            for axis in lo..hi.max(lo) {
                l.push(g.extent(t, axis)?);
            }
            g.lists.insert(out, l);
        }
        "Gather" => {
            let data = input(0)?;
            let idx = input(1)?;
            let axis = int(node, "axis").unwrap_or(0);
            if let Some(list) = g.list(&data).filter(|_| axis == 0) {
                let pick = |_: &GraphImport<'_>, i: i64| usize::try_from(if i < 0 { i + list.len() as i64 } else { i }).ok().and_then(|i| list.get(i).copied());
                let index = g.known.get(&idx).cloned();
                match index.map(|t| (t.shape.len(), t.data)) {
                    Some((0, mad_runtime::TensorData::I64(v))) => {
                        let e = pick(g, v[0]).ok_or_else(|| OnnxError::Invalid(format!("node '{n}': index out of range")))?;
                        g.values.insert(out, e);
                    }
                    Some((1, mad_runtime::TensorData::I64(v))) => {
                        let l = v.iter().map(|&i| pick(g, i).ok_or_else(|| OnnxError::Invalid(format!("node '{n}': index out of range")))).collect::<Result<_, _>>()?;
                        g.lists.insert(out, l);
                    }
                    _ => return Err(OnnxError::Invalid(format!("node '{n}': Gather of a shape needs constant indices"))),
                }
                return Ok(true);
            }
            let t = g.value(&data)?;
            let rank = g.dims(t).len() as i64;
            let axis = if axis < 0 { axis + rank } else { axis };
            if axis < 0 || axis >= rank {
                return Err(OnnxError::Invalid(format!("node '{n}': Gather axis {axis} of a rank-{rank} tensor")));
            }
            let t = to_front(g, t, axis as usize)?;
            let v = match g.known.get(&idx).cloned() {
                // Constant indices of rank ≥ 2 on axis 0 (a lookup table): the rows, packed,
                // under the indices' shape.
                Some(k) if k.shape.len() >= 2 && axis == 0 => {
                    let mad_runtime::TensorData::I64(v) = k.data else {
                        return Err(OnnxError::Invalid(format!("node '{n}': Gather indices must be int64")));
                    };
                    let packed = rows_at(g, t, &v)?;
                    let mut dims: Vec<Dim> = k.shape.iter().map(|&s| Dim::Fixed(s as u64)).collect();
                    dims.extend(g.dims(t).into_iter().skip(1));
                    reshape_to(g, packed, &dims, &n)?
                }
                Some(k) if k.shape.len() == 1 => {
                    let mad_runtime::TensorData::I64(v) = k.data else {
                        return Err(OnnxError::Invalid(format!("node '{n}': Gather indices must be int64")));
                    };
                    let packed = rows_at(g, t, &v)?;
                    from_front(g, packed, axis as usize)?
                }
                _ => {
                    let i = g.value(&idx)?;
                    if !matches!(g.ty(i), Type::Scalar(ScalarKind::I64)) {
                        return Err(OnnxError::Invalid(format!("node '{n}': Gather with indices of type {} is not supported yet", g.ty(i))));
                    }
                    infer(g, OpKind::Index, vec![t, i])?
                }
            };
            g.values.insert(out, v);
        }
        "Unsqueeze" | "Squeeze" => {
            let x = input(0)?;
            let is_int_scalar = g.values.get(&x).is_some_and(|&v| matches!(g.ty(v), Type::Scalar(ScalarKind::I64)));
            if op == "Unsqueeze" && (is_int_scalar || g.known.get(&x).is_some_and(|t| t.shape.is_empty() && t.kind() == ScalarKind::I64)) {
                let v = g.value(&x)?;
                g.lists.insert(out, vec![v]);
                return Ok(true);
            }
            let axes_zero = node.input.get(1).and_then(|a| g.known.get(a)).is_some_and(|t| t.data == mad_runtime::TensorData::I64(vec![0]))
                || super::import_ops::ints(node, "axes").as_deref() == Some(&[0]);
            if op == "Unsqueeze" && axes_zero && let Some(l) = g.lists.get(&x).cloned() {
                g.index_rows.insert(out, l);
                return Ok(false);
            }
            if op == "Squeeze" && let Some(l) = g.list(&x).filter(|l| l.len() == 1) {
                g.values.insert(out, l[0]);
                return Ok(true);
            }
            return Ok(false);
        }
        "Concat" => {
            let names: Vec<String> = node.input.clone();
            let all_lists = names.iter().all(|s| g.lists.contains_key(s) || g.known.get(s).is_some_and(|t| t.kind() == ScalarKind::I64 && t.shape.len() == 1));
            if all_lists {
                let mut l = Vec::new();
                for s in &names {
                    l.extend(g.list(s).unwrap_or_default());
                }
                g.lists.insert(out, l);
                return Ok(true);
            }
            let axis = int(node, "axis").unwrap_or(0);
            let mut vs = Vec::new();
            for s in &names {
                vs.push(g.value(s)?);
            }
            let rank = g.dims(vs[0]).len() as i64;
            let axis = if axis < 0 { axis + rank } else { axis };
            let packed: Option<Vec<_>> = vs.iter().map(|v| g.unsqueezed.get(v).copied()).collect();
            if let (0, Some(items)) = (axis, packed) {
                let v = infer(g, OpKind::Pack, items)?;
                g.values.insert(out, v);
                return Ok(true);
            }
            if axis < 0 || axis >= rank.max(1) {
                return Err(OnnxError::Invalid(format!("node '{n}': Concat axis {axis} of rank-{rank} tensors")));
            }
            let mut ts = Vec::new();
            for &v in &vs {
                ts.push(to_front(g, v, axis as usize)?);
            }
            let c = infer(g, OpKind::Concat, ts)?;
            let v = from_front(g, c, axis as usize)?;
            g.values.insert(out, v);
        }
        "Reshape" => {
            let t = g.value(&input(0)?)?;
            let shape = input(1)?;
            let list = g.list(&shape).ok_or_else(|| OnnxError::Invalid(format!("node '{n}': the shape of a Reshape must be constant or computed from shapes")))?;
            let v = reshape(g, t, &list, int(node, "allowzero").unwrap_or(0) != 0, &n)?;
            g.values.insert(out, v);
        }
        "Expand" | "ConstantOfShape" => {
            let (x, shape) = if op == "Expand" {
                (g.value(&input(0)?)?, input(1)?)
            } else {
                let value = node.attribute.iter().find(|a| a.name.as_deref() == Some("value")).and_then(|a| a.t.as_ref()).map(super::load::tensor_value).transpose()?;
                let lit = value.map(|t| super::import::literal(&t.data, 0)).unwrap_or(crate::ir::Literal::F32(0.0));
                (g.b.constant(lit), input(0)?)
            };
            let list = g.list(&shape).ok_or_else(|| OnnxError::Invalid(format!("node '{n}': the shape of {op} must be constant or computed from shapes")))?;
            let xd = g.dims(x);
            let rank = list.len().max(xd.len());
            let mut dims = Vec::new();
            let mut extents = Vec::new();
            for axis in 0..rank {
                let from_x = (axis + xd.len()).checked_sub(rank).map(|i| (i, xd[i].clone()));
                let from_list = (axis + list.len()).checked_sub(rank).map(|i| list[i]);
                let (d, e) = match (from_x, from_list) {
                    (Some((i, d)), Some(e)) if g.constant_of(e) == Some(1) => (d, g.extent(x, i)?),
                    (_, Some(e)) => (g.dim_of_extent(e), e),
                    (Some((i, d)), None) => (d, g.extent(x, i)?),
                    (None, None) => unreachable!("axis below the rank of one of them"),
                };
                dims.push(d);
                extents.push(e);
            }
            let k = g.kind(x);
            let kind = if matches!(g.ty(x), Type::Scalar(_)) { OpKind::Full } else { OpKind::Broadcast };
            let mut ops = vec![x];
            ops.extend(extents);
            let v = g.b.push1(kind, ops, Type::Tensor { elem: k, shape: dims });
            g.values.insert(out, v);
        }
        "Slice" if node.input.len() >= 3 => {
            let t = g.value(&input(0)?)?;
            let list = |g: &mut GraphImport<'_>, i: usize| node.input.get(i).filter(|s| !s.is_empty()).and_then(|s| g.list(s));
            let (Some(starts), Some(ends)) = (list(g, 1), list(g, 2)) else {
                return Err(OnnxError::Invalid(format!("node '{n}': Slice needs starts and ends computed from shapes or constant")));
            };
            let axes = list(g, 3).map(|l| l.iter().map(|&a| g.constant_of(a)).collect::<Option<Vec<_>>>());
            let axes = match axes {
                None => Some((0..starts.len() as i64).collect()),
                Some(a) => a,
            };
            let steps = list(g, 4).map(|l| l.iter().map(|&a| g.constant_of(a)).collect::<Vec<_>>());
            let constant = |l: &[crate::ir::ValueId], g: &GraphImport<'_>| l.iter().all(|&v| g.constant_of(v).is_some());
            let fixed = g.dims(t).iter().all(|d| d.fixed().is_some());
            if fixed && constant(&starts, g) && constant(&ends, g) {
                // Constant bounds on fixed extents (with ONNX's clamping, any step): `import_layout`.
                return Ok(false);
            }
            // Bounds known at run time: rows lo..hi of each axis (in range, step 1).
            let (Some(axes), true) = (axes, steps.is_none_or(|s| s.iter().all(|&k| k == Some(1)))) else {
                return Err(OnnxError::Invalid(format!("node '{n}': a Slice with bounds known only at run time needs constant axes and step 1")));
            };
            let rank = g.dims(t).len() as i64;
            let mut v = t;
            for ((&a, &lo), &hi) in axes.iter().zip(&starts).zip(&ends) {
                let axis = if a < 0 { a + rank } else { a };
                if axis < 0 || axis >= rank {
                    return Err(OnnxError::Invalid(format!("node '{n}': Slice axis {a} of a rank-{rank} tensor")));
                }
                let front = to_front(g, v, axis as usize)?;
                let rows = infer(g, OpKind::Slice, vec![front, lo, hi])?;
                v = from_front(g, rows, axis as usize)?;
            }
            g.values.insert(out, v);
        }
        "ScatterND" => {
            let data = g.value(&input(0)?)?;
            let idx = input(1)?;
            let update = g.value(&input(2)?)?;
            let Some(tuple) = g.index_rows.get(&idx).cloned().or_else(|| g.known.get(&idx).and_then(|t| match &t.data {
                mad_runtime::TensorData::I64(v) if t.shape.first() == Some(&1) => Some(v.clone()),
                _ => None,
            }).map(|v| v.iter().map(|&i| g.int(i)).collect())) else {
                return Err(OnnxError::Invalid(format!("node '{n}': ScatterND of one index tuple is supported, so far")));
            };
            let rows = g.dims(update);
            let update = if rows.first() == Some(&Dim::Fixed(1)) { reshape_to(g, update, &rows[1..], &n)? } else { update };
            let mut ops = vec![data, update];
            ops.extend(tuple);
            let v = infer(g, OpKind::Insert, ops)?;
            g.values.insert(out, v);
        }
        "Where" => {
            let (c, a, b) = (g.value(&input(0)?)?, g.value(&input(1)?)?, g.value(&input(2)?)?);
            let all = g.broadcast_all(&[c, a, b], &n)?;
            // Scalars among them take the tensors' shape (an elementwise select needs it).
            let dims = all.iter().map(|&v| g.dims(v)).max_by_key(Vec::len).unwrap_or_default();
            let mut vs = Vec::new();
            for &v in &all {
                vs.push(if dims.is_empty() || !g.dims(v).is_empty() { v } else { g.broadcast_to(v, &dims, &all)? });
            }
            let v = infer(g, OpKind::Select, vs)?;
            g.values.insert(out, v);
        }
        "Mod" => {
            let (a, b) = (g.value(&input(0)?)?, g.value(&input(1)?)?);
            if int(node, "fmod").unwrap_or(0) == 0 && g.kind(a).is_float() {
                return Err(OnnxError::Invalid(format!("node '{n}': Mod of floats needs fmod=1")));
            }
            if int(node, "fmod").unwrap_or(0) == 0 {
                return Err(OnnxError::Invalid(format!("node '{n}': integer Mod with the divisor's sign (fmod=0) is not supported yet")));
            }
            let ops = g.broadcast_all(&[a, b], &n)?;
            let v = infer(g, OpKind::Binary(BinaryOp::Rem), ops)?;
            g.values.insert(out, v);
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// `t` with axis `axis` moved to the front (a no-op for axis 0).
pub(super) fn to_front(g: &mut GraphImport<'_>, t: ValueId, axis: usize) -> Result<ValueId, OnnxError> {
    if axis == 0 {
        return Ok(t);
    }
    let rank = g.dims(t).len() as u32;
    let perm: Vec<u32> = std::iter::once(axis as u32).chain((0..rank).filter(|&a| a != axis as u32)).collect();
    infer(g, OpKind::Permute(perm), vec![t])
}

/// The inverse of [`to_front`]: the first axis moved back to position `axis`.
pub(super) fn from_front(g: &mut GraphImport<'_>, t: ValueId, axis: usize) -> Result<ValueId, OnnxError> {
    if axis == 0 {
        return Ok(t);
    }
    let rank = g.dims(t).len() as u32;
    let perm: Vec<u32> = (1..=axis as u32).chain([0]).chain(axis as u32 + 1..rank).collect();
    infer(g, OpKind::Permute(perm), vec![t])
}

/// The rows of `t` (along its first axis) at the constant `indices`, packed in that order.
pub(super) fn rows_at(g: &mut GraphImport<'_>, t: ValueId, indices: &[i64]) -> Result<ValueId, OnnxError> {
    let mut rows = Vec::with_capacity(indices.len());
    for &i in indices {
        let i = g.int(i);
        rows.push(infer(g, OpKind::Index, vec![t, i])?);
    }
    infer(g, OpKind::Pack, rows)
}
