//! Tensor ops: `Pack`, `Full`, `Extract`, `Index`, `Insert`, `DimOf`, `MatMul`,
//! `Transpose`, `Sum`, and the row-major data helpers they share.
//!
//! Reductions are sequential and left to right, in the element kind, starting
//! from the first term: `sum` is `((t0 + t1) + t2) + …` (0 when empty), a matmul entry is
//! `(a[i,0]*b[0,j] + a[i,1]*b[1,j]) + …` (multiply then add, no fused
//! multiply-add), so every back end can reproduce the same bits.

use mad_runtime::{RtError, ScalarKind, Tensor, TensorData, Value};

fn kind_mismatch(what: &str) -> RtError {
    RtError::ShapeMismatch(format!("{what}: element kinds differ"))
}

/// A tensor's data from scalar values of `kind`.
pub fn data_from_scalars(kind: ScalarKind, values: &[Value]) -> Result<TensorData, RtError> {
    macro_rules! collect {
        ($variant:ident) => {
            TensorData::$variant(
                values
                    .iter()
                    .map(|v| match v {
                        Value::$variant(x) => Ok(*x),
                        _ => Err(kind_mismatch("tensor elements")),
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            )
        };
    }
    Ok(match kind {
        ScalarKind::F64 => collect!(F64),
        ScalarKind::F32 => collect!(F32),
        ScalarKind::I64 => collect!(I64),
        ScalarKind::Bool => collect!(Bool),
    })
}

/// Applies `f` to every element; the results must be scalars of `out`.
pub fn map_data(
    data: &TensorData,
    out: ScalarKind,
    f: impl Fn(&Value) -> Result<Value, RtError>,
) -> Result<TensorData, RtError> {
    let values = (0..data.len())
        .map(|i| f(&data.get(i)))
        .collect::<Result<Vec<_>, _>>()?;
    data_from_scalars(out, &values)
}

/// Elements `start..start + len`.
fn slice(data: &TensorData, start: usize, len: usize) -> TensorData {
    let r = start..start + len;
    match data {
        TensorData::F64(v) => TensorData::F64(v[r].to_vec()),
        TensorData::F32(v) => TensorData::F32(v[r].to_vec()),
        TensorData::I64(v) => TensorData::I64(v[r].to_vec()),
        TensorData::Bool(v) => TensorData::Bool(v[r].to_vec()),
    }
}

/// Overwrites elements from `start` with `src`.
fn splice(data: &mut TensorData, start: usize, src: &TensorData) -> Result<(), RtError> {
    let r = start..start + src.len();
    match (data, src) {
        (TensorData::F64(d), TensorData::F64(s)) => d[r].copy_from_slice(s),
        (TensorData::F32(d), TensorData::F32(s)) => d[r].copy_from_slice(s),
        (TensorData::I64(d), TensorData::I64(s)) => d[r].copy_from_slice(s),
        (TensorData::Bool(d), TensorData::Bool(s)) => d[r].copy_from_slice(s),
        _ => return Err(kind_mismatch("tensor.insert")),
    }
    Ok(())
}

/// Appends `src` to `dst` (same kinds).
fn append(dst: &mut TensorData, src: &TensorData) -> Result<(), RtError> {
    match (dst, src) {
        (TensorData::F64(d), TensorData::F64(s)) => d.extend_from_slice(s),
        (TensorData::F32(d), TensorData::F32(s)) => d.extend_from_slice(s),
        (TensorData::I64(d), TensorData::I64(s)) => d.extend_from_slice(s),
        (TensorData::Bool(d), TensorData::Bool(s)) => d.extend_from_slice(s),
        _ => return Err(kind_mismatch("tensor.pack")),
    }
    Ok(())
}

fn scalar_kind(v: &Value) -> Option<ScalarKind> {
    match v {
        Value::F64(_) => Some(ScalarKind::F64),
        Value::F32(_) => Some(ScalarKind::F32),
        Value::I64(_) => Some(ScalarKind::I64),
        Value::Bool(_) => Some(ScalarKind::Bool),
        _ => None,
    }
}

/// A scalar or tensor as (shape, data).
fn as_array(v: &Value, what: &'static str) -> Result<(Vec<usize>, TensorData), RtError> {
    match v {
        Value::Tensor(t) => Ok((t.shape.clone(), t.data.clone())),
        Value::Tuple(_) => Err(RtError::BadOperand(what)),
        s => {
            let kind = scalar_kind(s).ok_or(RtError::BadOperand(what))?;
            Ok((
                Vec::new(),
                data_from_scalars(kind, std::slice::from_ref(s))?,
            ))
        }
    }
}

/// A tensor of `shape` from `data`, or the scalar when `shape` is empty.
fn from_parts(shape: Vec<usize>, data: TensorData) -> Value {
    if shape.is_empty() && data.len() == 1 {
        data.get(0)
    } else {
        Value::Tensor(Tensor { shape, data })
    }
}

pub fn tensor<'v>(v: &'v Value, what: &'static str) -> Result<&'v Tensor, RtError> {
    v.as_tensor().ok_or(RtError::BadOperand(what))
}

fn index_of(v: &Value, what: &'static str) -> Result<i64, RtError> {
    v.as_i64().ok_or(RtError::BadOperand(what))
}

fn check_index(index: i64, len: usize) -> Result<usize, RtError> {
    if index < 0 || index as u64 >= len as u64 {
        Err(RtError::IndexOutOfBounds {
            index,
            len: len as i64,
        })
    } else {
        Ok(index as usize)
    }
}

pub fn pack(items: &[Value]) -> Result<Value, RtError> {
    let Some(first) = items.first() else {
        return Err(RtError::Other("`tensor.pack` of no values".into()));
    };
    let (inner, mut data) = as_array(first, "tensor.pack")?;
    for it in &items[1..] {
        let (shape, d) = as_array(it, "tensor.pack")?;
        if shape != inner {
            return Err(RtError::ShapeMismatch(format!(
                "an array or matrix literal with elements of shapes {inner:?} and {shape:?}"
            )));
        }
        append(&mut data, &d)?;
    }
    let mut shape = vec![items.len()];
    shape.extend(inner);
    Ok(Value::Tensor(Tensor { shape, data }))
}

pub fn full(value: &Value, extents: &[Value]) -> Result<Value, RtError> {
    let mut shape = Vec::with_capacity(extents.len());
    for e in extents {
        let n = index_of(e, "tensor.full")?;
        if n < 0 {
            return Err(RtError::Other(format!(
                "negative size {n} for a new tensor (`zeros`, `ones`)"
            )));
        }
        shape.push(n as usize);
    }
    let count = mad_runtime::jit::tensor::tensor_size(&shape, "tensor.full")?;
    fn filled<T: Copy>(x: T, count: usize) -> Result<Vec<T>, RtError> {
        let mut v = Vec::new();
        v.try_reserve_exact(count).map_err(|_| {
            RtError::Other(format!("{}: no memory for {count} entries", mad_runtime::jit::tensor::FULL_FORM))
        })?;
        v.resize(count, x);
        Ok(v)
    }
    let data = match *value {
        Value::F64(x) => TensorData::F64(filled(x, count)?),
        Value::F32(x) => TensorData::F32(filled(x, count)?),
        Value::I64(x) => TensorData::I64(filled(x, count)?),
        Value::Bool(x) => TensorData::Bool(filled(x, count)?),
        _ => return Err(RtError::BadOperand("tensor.full")),
    };
    Ok(Value::Tensor(Tensor { shape, data }))
}

/// The offset and sub-shape of `t[indices..]`.
fn locate(t: &Tensor, indices: &[i64]) -> Result<(usize, Vec<usize>), RtError> {
    if indices.len() > t.shape.len() {
        return Err(RtError::ShapeMismatch(format!(
            "{} indices into a tensor of rank {}",
            indices.len(),
            t.shape.len()
        )));
    }
    let mut offset = 0;
    for (axis, &i) in indices.iter().enumerate() {
        let i = check_index(i, t.shape[axis])?;
        offset = offset * t.shape[axis] + i;
    }
    let sub: Vec<usize> = t.shape[indices.len()..].to_vec();
    let sub_len: usize = sub.iter().product();
    Ok((offset * sub_len, sub))
}

pub fn extract(t: &Value, index: u64) -> Result<Value, RtError> {
    let t = tensor(t, "tensor.extract")?;
    let index = i64::try_from(index).unwrap_or(i64::MAX);
    index_tensor(t, &[index])
}

pub fn index(t: &Value, indices: &[Value]) -> Result<Value, RtError> {
    let t = tensor(t, "tensor.index")?;
    let idx = indices
        .iter()
        .map(|v| index_of(v, "tensor.index"))
        .collect::<Result<Vec<_>, _>>()?;
    index_tensor(t, &idx)
}

fn index_tensor(t: &Tensor, idx: &[i64]) -> Result<Value, RtError> {
    let (offset, sub) = locate(t, idx)?;
    let len = sub.iter().product();
    Ok(from_parts(sub, slice(&t.data, offset, len)))
}

pub fn insert(t: &Value, v: &Value, indices: &[Value]) -> Result<Value, RtError> {
    let t = tensor(t, "tensor.insert")?;
    let idx = indices
        .iter()
        .map(|v| index_of(v, "tensor.insert"))
        .collect::<Result<Vec<_>, _>>()?;
    let (offset, sub) = locate(t, &idx)?;
    let (vshape, vdata) = as_array(v, "tensor.insert")?;
    if vshape != sub {
        return Err(RtError::ShapeMismatch(if vshape.is_empty() {
            format!("a scalar stored into an element of shape {sub:?}")
        } else {
            format!("a value of shape {vshape:?} stored into an element of shape {sub:?}")
        }));
    }
    let mut out = t.clone();
    splice(&mut out.data, offset, &vdata)?;
    Ok(Value::Tensor(out))
}

pub fn dim(t: &Value, axis: u32) -> Result<Value, RtError> {
    let t = tensor(t, "tensor.dim")?;
    t.shape
        .get(axis as usize)
        .map(|&n| Value::I64(n as i64))
        .ok_or_else(|| {
            RtError::ShapeMismatch(format!("axis {axis} of a tensor of rank {}", t.shape.len()))
        })
}

pub fn matmul(a: &Value, b: &Value) -> Result<Value, RtError> {
    let (a, b) = (tensor(a, "tensor.matmul")?, tensor(b, "tensor.matmul")?);
    if a.shape.len() != 2 || !(b.shape.len() == 1 || b.shape.len() == 2) || a.shape[1] != b.shape[0]
    {
        return Err(RtError::ShapeMismatch(format!(
            "a matrix product of shapes {:?} and {:?}",
            a.shape, b.shape
        )));
    }
    let (m, k) = (a.shape[0], a.shape[1]);
    let n = if b.shape.len() == 2 { b.shape[1] } else { 1 };
    let mut shape = vec![m];
    if b.shape.len() == 2 {
        shape.push(n);
    }
    let total = mad_runtime::jit::tensor::tensor_size(&[m, n], "tensor.matmul")?;
    macro_rules! product {
        ($x:expr, $y:expr, $zero:expr) => {{
            let mut c = Vec::new();
            c.try_reserve_exact(total).map_err(|_| {
                RtError::Other(format!("a matrix product: no memory for {total} entries"))
            })?;
            for i in 0..m {
                for j in 0..n {
                    let mut acc = if k == 0 { $zero } else { $x[i * k] * $y[j] };
                    for l in 1..k {
                        acc += $x[i * k + l] * $y[l * n + j];
                    }
                    c.push(acc);
                }
            }
            c
        }};
    }
    let data = match (&a.data, &b.data) {
        (TensorData::F64(x), TensorData::F64(y)) => TensorData::F64(product!(x, y, 0.0f64)),
        (TensorData::F32(x), TensorData::F32(y)) => TensorData::F32(product!(x, y, 0.0f32)),
        _ => return Err(RtError::BadOperand("tensor.matmul")),
    };
    Ok(Value::Tensor(Tensor { shape, data }))
}

pub fn transpose(t: &Value) -> Result<Value, RtError> {
    let t = tensor(t, "tensor.transpose")?;
    if t.shape.len() != 2 {
        return Err(RtError::ShapeMismatch(format!(
            "`tensor.transpose` of shape {:?}",
            t.shape
        )));
    }
    let (m, n) = (t.shape[0], t.shape[1]);
    let values: Vec<Value> = (0..n)
        .flat_map(|j| (0..m).map(move |i| (i, j)))
        .map(|(i, j)| t.data.get(i * n + j))
        .collect();
    Ok(Value::Tensor(Tensor {
        shape: vec![n, m],
        data: data_from_scalars(t.kind(), &values)?,
    }))
}

pub fn sum(t: &Value) -> Result<Value, RtError> {
    let t = tensor(t, "tensor.sum")?;
    Ok(match &t.data {
        TensorData::F64(v) => Value::F64(mad_runtime::jit::kernels::sum_f64(v)),
        TensorData::F32(v) => Value::F32(match v.split_first() {
            Some((&first, rest)) => rest.iter().fold(first, |acc, x| acc + x),
            None => 0.0,
        }),
        TensorData::I64(v) => Value::I64(v.iter().fold(0i64, |acc, x| acc.wrapping_add(*x))),
        TensorData::Bool(_) => return Err(RtError::BadOperand("tensor.sum")),
    })
}
