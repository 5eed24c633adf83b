//! The derivative kernels of a term's `local(z, o…)` function (see [`super::kernels`]):
//! thin IR wrappers around [`crate::ad::vjp`] and [`crate::ad::forward::jvp_active`]
//! that keep only the dof directions and return flat tuples.

use crate::ad::emit::Emitter;
use crate::ad::forward::jvp_active;
use crate::ad::{AdError, vjp};
use crate::ir::{FuncRef, Function, Literal, Module, OpKind, ScalarKind, Type, ValueId};

fn finish(module: &mut Module, e: Emitter, r: ValueId) -> Result<FuncRef, AdError> {
    let h = module.add_function(e.finish(r));
    crate::ad::check(module, h)?;
    Ok(h)
}

fn call(e: &mut Emitter, module: &Module, f: FuncRef, args: Vec<ValueId>) -> ValueId {
    let ret = module.functions[f].ret.clone();
    let id = e.push(OpKind::Call(f), args, vec![ret]);
    e.results(id)[0]
}

/// `name$eg(z, o…) -> (value, ∂/∂z)`.
pub fn value_grad(
    module: &mut Module,
    local: FuncRef,
    _active: &[bool],
) -> Result<FuncRef, AdError> {
    let src = module.functions[local].clone();
    let v = vjp(module, local)?;
    let zt = src.param_types()[0].clone();
    let func = Function::new(
        format!("{}$eg", src.name),
        &src.param_types(),
        Type::Tuple(vec![Type::F64, zt]),
    );
    let params = func.params().to_vec();
    let mut e = Emitter::new(func);
    let one = e.float(ScalarKind::F64, 1.0);
    let mut args = params;
    args.push(one);
    let out = call(&mut e, module, v, args);
    let val = e.op(OpKind::TupleGet(0), vec![out])?;
    let g = e.op(OpKind::TupleGet(1), vec![out])?;
    let r = e.op(OpKind::Tuple, vec![val, g])?;
    finish(module, e, r)
}

/// A unit tuple `e_i` of k scalars (constants).
fn unit(e: &mut Emitter, k: usize, i: usize) -> Result<ValueId, AdError> {
    let zero = e.konst(Literal::F64(0.0));
    let one = e.konst(Literal::F64(1.0));
    let parts = (0..k).map(|j| if j == i { one } else { zero }).collect();
    e.op(OpKind::Tuple, parts)
}

/// `name$egh(z, o…) -> (value, ∂/∂z, (col₀, …))`: forward (k unit seeds in `z`)
/// over reverse; column s is the derivative of the gradient along `z_s`.
pub fn value_grad_hess(
    module: &mut Module,
    local: FuncRef,
    active: &[bool],
    k: usize,
) -> Result<FuncRef, AdError> {
    let src = module.functions[local].clone();
    let eg = value_grad(module, local, active)?;
    crate::energy::inline::inline_all(module, eg).map_err(AdError::Internal)?;
    let j = jvp_active(module, eg, k, active)?;
    let zt = src.param_types()[0].clone();
    let ht = Type::Tuple(vec![zt.clone(); k]);
    let func = Function::new(
        format!("{}$egh", src.name),
        &src.param_types(),
        Type::Tuple(vec![Type::F64, zt, ht]),
    );
    let params = func.params().to_vec();
    let mut e = Emitter::new(func);
    let mut args = params;
    for s in 0..k {
        args.push(unit(&mut e, k, s)?);
    }
    let out = call(&mut e, module, j, args);
    let primal = e.op(OpKind::TupleGet(0), vec![out])?;
    let val = e.op(OpKind::TupleGet(0), vec![primal])?;
    let g = e.op(OpKind::TupleGet(1), vec![primal])?;
    let mut cols = Vec::new();
    for s in 0..k {
        let t = e.op(OpKind::TupleGet(s as u32 + 1), vec![out])?;
        cols.push(e.op(OpKind::TupleGet(1), vec![t])?);
    }
    let h = e.op(OpKind::Tuple, cols)?;
    let r = e.op(OpKind::Tuple, vec![val, g, h])?;
    finish(module, e, r)
}

/// `name$hvp(z, o…, v) -> H·v` (one forward seed over the reverse pass; no k×k matrix).
pub fn grad_hvp(module: &mut Module, local: FuncRef, active: &[bool]) -> Result<FuncRef, AdError> {
    let src = module.functions[local].clone();
    let eg = value_grad(module, local, active)?;
    crate::energy::inline::inline_all(module, eg).map_err(AdError::Internal)?;
    let j = jvp_active(module, eg, 1, active)?;
    let zt = src.param_types()[0].clone();
    let mut ptypes = src.param_types();
    ptypes.push(zt.clone());
    let func = Function::new(format!("{}$hvp", src.name), &ptypes, zt);
    let params = func.params().to_vec();
    let mut e = Emitter::new(func);
    let out = call(&mut e, module, j, params);
    let t = e.op(OpKind::TupleGet(1), vec![out])?;
    let hv = e.op(OpKind::TupleGet(1), vec![t])?;
    finish(module, e, hv)
}

/// `name$ej(z, o…) -> (value, (∂R/∂z₀, …, ∂R/∂z_{k-1}))` for a residual of m
/// components: the m×k Jacobian by columns.
pub fn value_jac(
    module: &mut Module,
    local: FuncRef,
    active: &[bool],
    k: usize,
) -> Result<FuncRef, AdError> {
    let src = module.functions[local].clone();
    let j = jvp_active(module, local, k, active)?;
    let jt = Type::Tuple(vec![src.ret.clone(); k]);
    let func = Function::new(
        format!("{}$ej", src.name),
        &src.param_types(),
        Type::Tuple(vec![src.ret.clone(), jt]),
    );
    let params = func.params().to_vec();
    let mut e = Emitter::new(func);
    let mut args = params;
    for s in 0..k {
        args.push(unit(&mut e, k, s)?);
    }
    let out = call(&mut e, module, j, args);
    let val = e.op(OpKind::TupleGet(0), vec![out])?;
    let mut cols = Vec::new();
    for s in 0..k {
        cols.push(e.op(OpKind::TupleGet(s as u32 + 1), vec![out])?);
    }
    let jm = e.op(OpKind::Tuple, cols)?;
    let r = e.op(OpKind::Tuple, vec![val, jm])?;
    finish(module, e, r)
}

/// `name$mixed{i}(z, o…) -> ∂/∂o_i (∂/∂z)`: one forward seed on the `f64` input
/// `o_i` (kernel parameter `input`) over the reverse pass: the mixed second
/// derivative ∂²E/∂z∂θ.
pub fn grad_mixed(module: &mut Module, local: FuncRef, input: usize) -> Result<FuncRef, AdError> {
    let src = module.functions[local].clone();
    let eg = value_grad(module, local, &[])?;
    crate::energy::inline::inline_all(module, eg).map_err(AdError::Internal)?;
    let mut mask = vec![false; src.param_types().len()];
    mask[input] = true;
    let j = jvp_active(module, eg, 1, &mask)?;
    let zt = src.param_types()[0].clone();
    let func = Function::new(format!("{}$mixed{input}", src.name), &src.param_types(), zt);
    let params = func.params().to_vec();
    let mut e = Emitter::new(func);
    let one = e.float(ScalarKind::F64, 1.0);
    let mut args = params;
    args.push(one);
    let out = call(&mut e, module, j, args);
    let t = e.op(OpKind::TupleGet(1), vec![out])?;
    let g = e.op(OpKind::TupleGet(1), vec![t])?;
    finish(module, e, g)
}
