//! `grad` and `hessian`, built from [`vjp`] and [`jvp`].
//!
//! - `@f$grad(p…)` (for `f` returning `f64`): the partials of `f` with respect to
//!   every parameter that has a tangent type, each shaped like its parameter — a
//!   tuple when there are several, the single partial otherwise. It is `f$vjp` with
//!   the cotangent `1.0`.
//! - `@f$hessian(p…) -> tensor<f64; n, n>` (forward over reverse): `n` is the number
//!   of scalars in all float parameters (`f64` scalars or tensors of fixed shape),
//!   flattened in argument order, row-major within a tensor. It is
//!   `f$grad$jvp{n}` seeded with the `n` unit vectors.
//!
//! Both are ordinary functions, so they compose: `jvp` of a `$hessian` gives third
//! derivatives.

use super::emit::Emitter;
use super::forward::jvp;
use super::reverse::vjp;
use super::tangent::tangent_type;
use super::{AdError, check};
use crate::ir::{Derivation, DerivedKey, FuncRef, Function, Module, OpKind, ScalarKind, Type, ValueId};

/// Creates (or finds) `f$grad`.
pub fn grad(module: &mut Module, f: FuncRef) -> Result<FuncRef, AdError> {
    let src = module
        .functions
        .get(f)
        .cloned()
        .ok_or_else(|| AdError::Internal("no such function".into()))?;
    let key = DerivedKey { of: f, derivation: Derivation::Grad };
    if let Some(h) = module.derived(&key) {
        return Ok(h);
    }
    let name = key.derivation.name(&src.name);
    if src.ret != Type::F64 {
        return Err(AdError::Signature {
            function: src.name,
            message: format!("`grad` needs an f64 result, found {}", src.ret),
        });
    }
    let ptypes = src.param_types();
    let partials: Vec<Type> = ptypes.iter().filter_map(tangent_type).collect();
    if partials.is_empty() {
        return Err(AdError::Signature {
            function: src.name,
            message: "`grad` needs a floating-point parameter".into(),
        });
    }
    let v = vjp(module, f)?;
    let ret = if partials.len() == 1 {
        partials[0].clone()
    } else {
        Type::Tuple(partials.clone())
    };
    let func = Function::new(name, &ptypes, ret);
    let params = func.params().to_vec();
    let mut e = Emitter::new(func);
    let one = e.float(ScalarKind::F64, 1.0);
    let mut args = params;
    args.push(one);
    let vret = module.functions[v].ret.clone();
    let id = e.push(OpKind::Call(v), args, vec![vret]);
    let out = e.results(id)[0];
    let mut parts = Vec::new();
    for i in 0..partials.len() {
        parts.push(e.op(OpKind::TupleGet(i as u32 + 1), vec![out])?);
    }
    let r = if parts.len() == 1 {
        parts[0]
    } else {
        e.op(OpKind::Tuple, parts)?
    };
    let h = module.add_derived(key, e.finish(r));
    check(module, h)?;
    Ok(h)
}

/// The fixed shape of a float parameter the Hessian is taken over.
fn static_shape(fname: &str, t: &Type) -> Result<Vec<u64>, AdError> {
    let bad = || AdError::Signature {
        function: fname.to_string(),
        message: format!("`hessian` needs f64 scalars or f64 tensors of fixed shape, found {t}"),
    };
    match t {
        Type::Scalar(ScalarKind::F64) => Ok(vec![]),
        Type::Tensor {
            elem: ScalarKind::F64,
            shape,
        } => shape
            .iter()
            .map(|d| match d {
                crate::ir::Dim::Fixed(n) => Ok(*n),
                _ => Err(bad()),
            })
            .collect(),
        _ => Err(bad()),
    }
}

/// The row-major multi-indices of a shape.
fn multi_indices(shape: &[u64]) -> Vec<Vec<u64>> {
    let mut out = vec![vec![]];
    for &n in shape {
        out = out
            .into_iter()
            .flat_map(|p| {
                (0..n).map(move |i| {
                    let mut q = p.clone();
                    q.push(i);
                    q
                })
            })
            .collect();
    }
    out
}

/// Creates (or finds) `f$hessian`.
pub fn hessian(module: &mut Module, f: FuncRef) -> Result<FuncRef, AdError> {
    let src = module
        .functions
        .get(f)
        .cloned()
        .ok_or_else(|| AdError::Internal("no such function".into()))?;
    let key = DerivedKey { of: f, derivation: Derivation::Hessian };
    if let Some(h) = module.derived(&key) {
        return Ok(h);
    }
    let name = key.derivation.name(&src.name);
    // `hessian` checks the signature itself, so that its errors name it rather than the
    // `grad` it is built on.
    if src.ret != Type::F64 {
        return Err(AdError::Signature {
            function: src.name,
            message: format!("`hessian` needs an f64 result, found {}", src.ret),
        });
    }
    let ptypes = src.param_types();
    if !ptypes.iter().any(|t| tangent_type(t).is_some()) {
        return Err(AdError::Signature {
            function: src.name,
            message: "`hessian` needs a floating-point parameter".into(),
        });
    }
    // (parameter index, shape) of every float parameter.
    let mut inputs = Vec::new();
    for (i, t) in ptypes.iter().enumerate() {
        if tangent_type(t).is_some() {
            inputs.push((i, static_shape(&src.name, t)?));
        }
    }
    let n: usize = inputs
        .iter()
        .map(|(_, s)| s.iter().product::<u64>() as usize)
        .sum();
    let g = grad(module, f)?;
    let gj = jvp(module, g, n)?;
    let ret = Type::tensor(ScalarKind::F64, &[n as u64, n as u64]);
    let func = Function::new(name, &ptypes, ret.clone());
    let params = func.params().to_vec();
    let mut e = Emitter::new(func);
    let zero = e.float(ScalarKind::F64, 0.0);
    let one = e.float(ScalarKind::F64, 1.0);
    let mut zeros: Vec<ValueId> = Vec::new();
    for &(i, ref shape) in &inputs {
        zeros.push(if shape.is_empty() {
            zero
        } else {
            e.full_like(zero, params[i])?
        });
    }
    let mut args = params.clone();
    let mut s_global = 0;
    for (k, (_, shape)) in inputs.iter().enumerate() {
        for idx in multi_indices(shape) {
            // Seed `s_global`: the unit vector of this scalar.
            for (q, _) in inputs.iter().enumerate() {
                if q != k {
                    args.push(zeros[q]);
                } else if shape.is_empty() {
                    args.push(one);
                } else {
                    let mut ops = vec![zeros[q], one];
                    for &x in &idx {
                        ops.push(e.int(x as i64));
                    }
                    args.push(e.op(OpKind::Insert, ops)?);
                }
            }
            s_global += 1;
        }
    }
    debug_assert_eq!(s_global, n);
    let jret = module.functions[gj].ret.clone();
    let id = e.push(OpKind::Call(gj), args, vec![jret]);
    let out = e.results(id)[0];
    let mut rows = Vec::new();
    for s in 0..n {
        let t = e.op(OpKind::TupleGet(s as u32 + 1), vec![out])?;
        // One vector parameter (`[f64; N]`, `vecN`): the tangent is the row as it is (taking
        // it apart into N entries and packing them again made the function O(N²) ops).
        if let [(_, shape)] = inputs.as_slice()
            && shape.len() == 1
        {
            rows.push(t);
            continue;
        }
        let mut flat = Vec::new();
        for (q, (_, shape)) in inputs.iter().enumerate() {
            let part = if inputs.len() == 1 {
                t
            } else {
                e.op(OpKind::TupleGet(q as u32), vec![t])?
            };
            if shape.is_empty() {
                flat.push(part);
            } else {
                for idx in multi_indices(shape) {
                    let mut ops = vec![part];
                    for &x in &idx {
                        ops.push(e.int(x as i64));
                    }
                    flat.push(e.op(OpKind::Index, ops)?);
                }
            }
        }
        rows.push(e.op(OpKind::Pack, flat)?);
    }
    let m = e.op(OpKind::Pack, rows)?;
    let h_t = e.op(OpKind::Transpose, vec![m])?;
    let h = module.add_derived(key, e.finish(h_t));
    check(module, h)?;
    Ok(h)
}
