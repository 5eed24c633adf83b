//! `jacobian(f)` and `hessian(f)` of functions with dynamic float arguments (`vector`,
//! `matrix`, `[f64]`, mixed with fixed-size ones): the number of input scalars `n` is known
//! only at run time, so instead of one forward pass with `n` seeds (the fixed-size
//! construction in [`super::derive`]), the derivative is a loop over the `n` flattened
//! inputs, each iteration one forward pass with one unit seed: `f$jvp` (column `s` of the
//! Jacobian) or `f$grad$jvp` (column `s` of the Hessian, forward over reverse). The inputs
//! are flattened in argument order, row-major inside a tensor, as in the fixed-size case;
//! the result is a dense `matrix`.

use crate::ad::emit::Emitter;
use crate::ad::{self, AdError};
use crate::front::types::SurfaceType;
use crate::ir::{BinaryOp, Dim, FuncRef, Function, Module, OpKind, Region, ScalarKind, Type, ValueId};

/// Whether every float parameter of `f` is an `f64` scalar or tensor (fixed or dynamic
/// extents): what the looped construction accepts.
pub fn f64_params(types: &[Type], floats: &[usize]) -> bool {
    floats.iter().all(|&i| types[i].scalar_kind() == Some(ScalarKind::F64) && !matches!(types[i], Type::Tuple(_)))
}

/// Whether some float parameter has a dynamic extent (so the looped construction is needed).
pub fn has_dynamic(types: &[Type], floats: &[usize]) -> bool {
    floats.iter().any(|&i| matches!(&types[i], Type::Tensor { shape, .. } if shape.iter().any(|d| !matches!(d, Dim::Fixed(_)))))
}

/// The number of scalars in `v` (1 for a scalar).
fn size(e: &mut Emitter, v: ValueId) -> Result<ValueId, AdError> {
    let mut n = e.int(1);
    if matches!(e.ty(v), Type::Tensor { .. }) {
        for x in e.extents(v)? {
            n = e.binary(BinaryOp::Mul, n, x)?;
        }
    }
    Ok(n)
}

/// `v` as a rank-1 `f64` tensor of its scalars, row-major (a scalar as one element).
fn flat(e: &mut Emitter, v: ValueId) -> Result<ValueId, AdError> {
    match e.ty(v) {
        Type::Scalar(_) => {
            let one = e.int(1);
            let z = e.float(ScalarKind::F64, 0.0);
            let t = e.push(OpKind::Full, vec![z, one], vec![SurfaceType::Vector.ir_type()]);
            let t = e.results(t)[0];
            let zero = e.int(0);
            e.op(OpKind::Insert, vec![t, v, zero])
        }
        _ => {
            let n = size(e, v)?;
            e.op(OpKind::Reshape, vec![v, n])
        }
    }
}

/// The unit seed for parameter `p` (its flattened scalars start at `off`) in direction `s`:
/// 1 at scalar `s − off` when `off ≤ s < off + size(p)`, zeros elsewhere, of `p`'s type.
fn seed(e: &mut Emitter, p: ValueId, off: ValueId, len: ValueId, s: ValueId) -> Result<ValueId, AdError> {
    let ty = e.ty(p);
    let one = e.float(ScalarKind::F64, 1.0);
    let zero = e.float(ScalarKind::F64, 0.0);
    if matches!(ty, Type::Scalar(_)) {
        let here = e.binary(BinaryOp::Eq, s, off)?;
        return e.op(OpKind::Select, vec![here, one, zero]);
    }
    let end = e.binary(BinaryOp::Add, off, len)?;
    let from = e.binary(BinaryOp::Ge, s, off)?;
    let below = e.binary(BinaryOp::Lt, s, end)?;
    let inside = e.binary(BinaryOp::And, from, below)?;
    let extents = e.extents(p)?;
    // Then: zeros of `p`'s shape with a 1 at the multi-index of `s − off` (row-major).
    e.begin_region(&[]);
    let mut ops = vec![zero];
    ops.extend(&extents);
    let z = e.push(OpKind::Full, ops, vec![ty.clone()]);
    let z = e.results(z)[0];
    let mut k = e.binary(BinaryOp::Sub, s, off)?;
    let mut idx = Vec::new();
    for &x in extents.iter().rev() {
        idx.push(e.binary(BinaryOp::Rem, k, x)?);
        k = e.binary(BinaryOp::Div, k, x)?;
    }
    idx.reverse();
    let mut ins = vec![z, one];
    ins.extend(idx);
    let unit = e.op(OpKind::Insert, ins)?;
    let then: Region = e.end_region(vec![unit]);
    e.begin_region(&[]);
    let mut ops = vec![zero];
    ops.extend(&extents);
    let z = e.push(OpKind::Full, ops, vec![ty.clone()]);
    let z = e.results(z)[0];
    let other: Region = e.end_region(vec![z]);
    let id = e.push_with_regions(OpKind::If, vec![inside], vec![ty], vec![then, other]);
    Ok(e.results(id)[0])
}

/// What the loop differentiates per seed.
enum Dense {
    /// Column `s` of the Jacobian: the output tangent of `f$jvp` (an `f64` or a rank-1 tensor).
    Jacobian,
    /// Column `s` of the Hessian: the tangent of `f$grad` (its partials flattened in order).
    Hessian,
}

/// The body of `jacobian(f)` or `hessian(f)` (`which`) for `func`, the operator's signature:
/// a loop over the flattened inputs, one forward pass per input.
fn dense_body(m: &mut Module, tf: FuncRef, floats: &[usize], func: Function, which: Dense) -> Result<Function, AdError> {
    let d = match which {
        Dense::Jacobian => ad::jvp(m, tf, 1)?,
        Dense::Hessian => {
            let g = ad::grad(m, tf)?;
            ad::jvp(m, g, 1)?
        }
    };
    let d_ret = m.functions[d].ret.clone();
    let params = func.params().to_vec();
    let mut e = Emitter::new(func);
    // Offsets and sizes of the float parameters in the flattened input.
    let mut offs = Vec::new();
    let mut lens = Vec::new();
    let mut n = e.int(0);
    for &i in floats {
        let len = size(&mut e, params[i])?;
        offs.push(n);
        lens.push(len);
        n = e.binary(BinaryOp::Add, n, len)?;
    }
    // The output count: n for the Hessian, the length of f's value for the Jacobian.
    let rows = match which {
        Dense::Hessian => n,
        Dense::Jacobian => {
            let ret = m.functions[tf].ret.clone();
            let id = e.push(OpKind::Call(tf), params.clone(), vec![ret]);
            let y = e.results(id)[0];
            size(&mut e, y)?
        }
    };
    let matrix = SurfaceType::Matrix.ir_type();
    let zero_f = e.float(ScalarKind::F64, 0.0);
    let j0 = e.push(OpKind::Full, vec![zero_f, rows, n], vec![matrix.clone()]);
    let j0 = e.results(j0)[0];
    let lo = e.int(0);
    let args = e.begin_region(&[Type::I64, matrix.clone()]);
    let (s, jac) = (args[0], args[1]);
    let mut call_args = params.clone();
    for (q, &i) in floats.iter().enumerate() {
        call_args.push(seed(&mut e, params[i], offs[q], lens[q], s)?);
    }
    let id = e.push(OpKind::Call(d), call_args, vec![d_ret]);
    let out = e.results(id)[0];
    let tangent = e.op(OpKind::TupleGet(1), vec![out])?;
    let column = match (&which, e.ty(tangent)) {
        (Dense::Hessian, Type::Tuple(items)) => {
            let mut parts = Vec::new();
            for k in 0..items.len() {
                let part = e.op(OpKind::TupleGet(k as u32), vec![tangent])?;
                parts.push(flat(&mut e, part)?);
            }
            e.op(OpKind::Concat, parts)?
        }
        _ => flat(&mut e, tangent)?,
    };
    // Column s of the result: row r is `column[r]`.
    let inner = e.begin_region(&[Type::I64, matrix.clone()]);
    let x = e.op(OpKind::Index, vec![column, inner[0]])?;
    let next = e.op(OpKind::Insert, vec![inner[1], x, inner[0], s])?;
    let inner_region = e.end_region(vec![next]);
    let filled = e.push_with_regions(OpKind::For, vec![lo, rows, jac], vec![matrix.clone()], vec![inner_region]);
    let filled = e.results(filled)[0];
    let body = e.end_region(vec![filled]);
    let id = e.push_with_regions(OpKind::For, vec![lo, n, j0], vec![matrix], vec![body]);
    let r = e.results(id)[0];
    Ok(e.finish(r))
}

/// `jacobian(f)` with dynamic float arguments.
pub fn jacobian_body(m: &mut Module, tf: FuncRef, floats: &[usize], func: Function) -> Result<Function, AdError> {
    dense_body(m, tf, floats, func, Dense::Jacobian)
}

/// `hessian(f)` with dynamic float arguments.
pub fn hessian_body(m: &mut Module, tf: FuncRef, floats: &[usize], func: Function) -> Result<Function, AdError> {
    dense_body(m, tf, floats, func, Dense::Hessian)
}
