//! The derivative kernels of a term's `local(z, o…)` function (see [`super::term`]):
//! thin IR wrappers around [`crate::ad::vjp`] and [`crate::ad::forward::jvp_active`]
//! that keep only the dof directions and return flat tuples.

use crate::ad::emit::Emitter;
use crate::ad::forward::jvp_active;
use crate::ad::{AdError, vjp_plain_products};
use std::collections::HashMap;

use crate::ir::{
    BinaryOp, FuncRef, Function, Literal, Module, OpId, OpKind, ScalarKind, Type, UnaryOp, ValueId,
};

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
    let v = vjp_plain_products(module, local)?;
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

/// Every op of `r` and of the regions nested in it, with the yields of each region.
fn walk<'a>(func: &'a Function, r: &'a crate::ir::Region, out: &mut Vec<(Option<OpId>, &'a [ValueId])>) {
    for &op in &r.ops {
        out.push((Some(op), &func.ops[op].operands));
        for inner in &func.ops[op].regions {
            walk(func, inner, out);
        }
    }
    out.push((None, &r.yields));
}

/// Whether `local(z, o…)` reads its vertex-major dof vector z (`nverts` vertices ×
/// `dim` components, index `v·dim + c`) **only through differences of vertex points**:
/// z is used only by `tuple.get`; each component z_{v·dim+c} only inside the point
/// `P_v = (z_{v·dim}, …, z_{v·dim+dim−1})` (a `tensor.pack` of the components in order)
/// or in a scalar `sub` with the same component c of a vertex (what folding leaves of a
/// difference of points); and each point only as an operand of `sub` whose other operand
/// is a point too. Then z enters the function only
/// through values `P_a − P_b`, so the function is invariant under every translation
/// z + s·t_c (t_c = Σ_v e_{v·dim+c}), and so is every derivative: the exact Hessian
/// satisfies H·t_c = 0. This is a syntactic proof on the term's own IR (after inlining),
/// so it holds at every z; a term that reads a point in any other way (a vertex position
/// on a sphere, gravity, a pinned target) answers `false`.
fn reads_dofs_through_differences(func: &Function, k: usize, dim: usize) -> bool {
    let Some(&z) = func.body.args.first() else {
        return false;
    };
    let mut uses: Vec<(Option<OpId>, &[ValueId])> = Vec::new();
    walk(func, &func.body, &mut uses);
    let users = |v: ValueId| -> Vec<Option<OpId>> {
        uses.iter()
            .filter(|(_, ops)| ops.contains(&v))
            .map(|(op, _)| *op)
            .collect()
    };
    // The components read from z: value → index.
    let mut comp: HashMap<ValueId, usize> = HashMap::new();
    for user in users(z) {
        let Some(op) = user else {
            return false;
        };
        match func.ops[op].kind {
            OpKind::TupleGet(i) if (i as usize) < k && func.ops[op].results.len() == 1 => {
                comp.insert(func.ops[op].results[0], i as usize);
            }
            _ => return false,
        }
    }
    // The points built from the components; a component may also be used in a scalar
    // difference with the same component of a vertex (what folding leaves of `P_a − P_b`).
    let mut points: Vec<ValueId> = Vec::new();
    for (&c, &i) in &comp {
        for user in users(c) {
            let Some(op) = user else {
                return false;
            };
            let o = &func.ops[op];
            let scalar_difference = matches!(o.kind, OpKind::Binary(BinaryOp::Sub))
                && o.operands
                    .iter()
                    .all(|x| comp.get(x).is_some_and(|j| j % dim == i % dim));
            if scalar_difference {
                continue;
            }
            let v = i / dim;
            let is_point = dim > 1
                && matches!(o.kind, OpKind::Pack)
                && o.operands.len() == dim
                && o.operands
                    .iter()
                    .enumerate()
                    .all(|(j, x)| comp.get(x) == Some(&(v * dim + j)));
            if !is_point {
                return false;
            }
            if !points.contains(&o.results[0]) {
                points.push(o.results[0]);
            }
        }
    }
    points.iter().all(|&p| {
        users(p).into_iter().all(|user| {
            user.is_some_and(|op| {
                let o = &func.ops[op];
                matches!(o.kind, OpKind::Binary(BinaryOp::Sub))
                    && o.operands.iter().all(|x| points.contains(x))
            })
        })
    })
}

/// `name$egh(z, o…) -> (value, ∂/∂z, (col₀, …))`: forward (k unit seeds in `z`)
/// over reverse; column s is the derivative of the gradient along `z_s`. Returns the
/// function and the number of forward seeds it runs.
///
/// `translation = Some((nverts, dim))` says that z is vertex-major over `nverts` vertices
/// of `dim` components (index `v·dim + c`). When the gradient is then provably
/// translation-invariant (`reads_dofs_through_differences`), H·t_c = 0 for every
/// translation t_c = Σ_v e_{v·dim+c}, so the columns of vertex 0 follow from the others:
/// col_{0·dim+c} = −Σ_{v≥1} col_{v·dim+c}. Only the (nverts − 1)·dim seeds of the other
/// vertices are then run forward over the reverse pass (4 instead of 6 for a face of
/// 2-vectors, 6 instead of 9 for a face of 3-vectors, 9 instead of 12 for a diamond); the
/// sums add vertex 1, 2, … in order, so the result is deterministic. Its entries differ
/// from a direct evaluation of those columns by rounding only, and the block keeps the
/// exact translation null space to that rounding.
pub fn value_grad_hess(
    module: &mut Module,
    local: FuncRef,
    active: &[bool],
    k: usize,
    translation: Option<(usize, usize)>,
) -> Result<(FuncRef, usize), AdError> {
    let src = module.functions[local].clone();
    let eg = value_grad(module, local, active)?;
    super::inline::inline_all(module, eg).map_err(AdError::Internal)?;
    let reduced = match translation {
        Some((nverts, dim))
            if nverts >= 2
                && dim >= 1
                && nverts * dim == k
                && reads_dofs_through_differences(&src, k, dim) =>
        {
            Some(dim)
        }
        _ => None,
    };
    // Seeds e_s for s ≥ first: all of them, or those of the vertices after the first.
    let first = reduced.unwrap_or(0);
    let seeds = k - first;
    let j = jvp_active(module, eg, seeds, active)?;
    let zt = src.param_types()[0].clone();
    let ht = Type::Tuple(vec![zt.clone(); k]);
    let func = Function::new(
        format!("{}$egh", src.name),
        &src.param_types(),
        Type::Tuple(vec![Type::F64, zt, ht]),
    );
    let mut args = func.params().to_vec();
    let mut e = Emitter::new(func);
    for s in first..k {
        args.push(unit(&mut e, k, s)?);
    }
    let out = call(&mut e, module, j, args);
    let primal = e.op(OpKind::TupleGet(0), vec![out])?;
    let val = e.op(OpKind::TupleGet(0), vec![primal])?;
    let g = e.op(OpKind::TupleGet(1), vec![primal])?;
    let mut seeded = Vec::with_capacity(seeds);
    for s in 0..seeds {
        let t = e.op(OpKind::TupleGet(s as u32 + 1), vec![out])?;
        seeded.push(e.op(OpKind::TupleGet(1), vec![t])?);
    }
    let h = match reduced {
        None => e.op(OpKind::Tuple, seeded)?,
        Some(dim) => {
            // Columns of vertices 1.., as k scalars each; those of vertex 0 are their
            // negated sums over the vertices.
            let mut cols: Vec<Vec<ValueId>> = Vec::with_capacity(seeds);
            for col in seeded {
                let parts = (0..k)
                    .map(|i| e.op(OpKind::TupleGet(i as u32), vec![col]))
                    .collect::<Result<Vec<_>, _>>()?;
                cols.push(parts);
            }
            let mut all = Vec::with_capacity(k);
            for c in 0..dim {
                let mut parts = Vec::with_capacity(k);
                for (i, &first) in cols[c].iter().enumerate().take(k) {
                    let mut sum = first;
                    for v in 2..k / dim {
                        let next = cols[(v - 1) * dim + c][i];
                        sum = e.op(OpKind::Binary(BinaryOp::Add), vec![sum, next])?;
                    }
                    parts.push(e.op(OpKind::Unary(UnaryOp::Neg), vec![sum])?);
                }
                all.push(e.op(OpKind::Tuple, parts)?);
            }
            for parts in cols {
                all.push(e.op(OpKind::Tuple, parts)?);
            }
            e.op(OpKind::Tuple, all)?
        }
    };
    let r = e.op(OpKind::Tuple, vec![val, g, h])?;
    Ok((finish(module, e, r)?, seeds))
}

/// `name$hvp(z, o…, v) -> H·v` (one forward seed over the reverse pass; no k×k matrix).
pub fn grad_hvp(module: &mut Module, local: FuncRef, active: &[bool]) -> Result<FuncRef, AdError> {
    let src = module.functions[local].clone();
    let eg = value_grad(module, local, active)?;
    super::inline::inline_all(module, eg).map_err(AdError::Internal)?;
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
    super::inline::inline_all(module, eg).map_err(AdError::Internal)?;
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

/// Whether the `$egh` kernel `f` (after inlining and clean-up) returns Hessian columns that
/// are constant zeros only: a term linear in its dofs (a gravity or a load term), whose
/// Hessian blocks need not be evaluated, projected or scattered. Conservative: any part that
/// is not a literal 0 (or a tuple of them) makes it false.
pub fn hessian_is_zero(module: &Module, f: FuncRef) -> bool {
    let func = &module.functions[f];
    let mut def: HashMap<ValueId, OpId> = HashMap::new();
    for &op in &func.body.ops {
        for &r in &func.ops[op].results {
            def.insert(r, op);
        }
    }
    fn zero(func: &Function, def: &HashMap<ValueId, OpId>, v: ValueId, depth: usize) -> bool {
        let Some(&op) = def.get(&v) else { return false };
        let o = &func.ops[op];
        match &o.kind {
            OpKind::Const(Literal::F64(x)) => *x == 0.0,
            OpKind::Tuple if depth < 3 => o.operands.iter().all(|&w| zero(func, def, w, depth + 1)),
            _ => false,
        }
    }
    let Some(&root) = func.body.yields.first() else { return false };
    let Some(&op) = def.get(&root) else { return false };
    let o = &func.ops[op];
    matches!(o.kind, OpKind::Tuple) && o.operands.len() == 3 && zero(func, &def, o.operands[2], 0)
}
