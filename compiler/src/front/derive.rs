//! Generation of the bodies of differentiation-operator applications, after every
//! function body has been lowered.
//!
//! Each call site of `op(f)` calls a placeholder function with the operator's
//! surface signature (see [`super::lower::diff`]). Here each placeholder gets its
//! body from [`crate::ad`], in an order where every function a target calls is
//! complete first (so `grad(g)` works when `g` calls `grad(f)`, and `grad(grad(f))`
//! when the inner derivative is scalar); a placeholder that a target needs to
//! compute itself is a cycle (E0154). The bodies and the derivative functions
//! created for them are cleaned up ([`crate::passes::cleanup`]) and validated.
//!
//! | operator | body |
//! |---|---|
//! | `grad(f)` | `f$grad` (`f$vjp` with cotangent 1) |
//! | `grad(f, i)` | `f$grad`, the partial of argument `i` |
//! | `jvp(f)` | `f$jvp1` |
//! | `vjp(f)` | `f$vjp`, its adjoints grouped in a tuple |
//! | `hessian(f)` | `f$hessian` (forward over reverse), copied into a dynamic `matrix` |
//! | `jacobian(f)` | `f$jvp{n}` seeded with the `n` unit vectors (forward mode), columns stacked into a `matrix` |

use super::diagnostics::ErrorKind;
use super::lower::Front;
use super::lower::diff::{DiffOp, PendingDeriv, Wrt};
use super::types::SurfaceType;
use crate::ad::emit::Emitter;
use crate::ad::tangent::tangent_type;
use crate::ad::{self, AdError};
use crate::ir::{Dim, FuncRef, Function, Module, OpKind, Region, ScalarKind, Type, ValueId};
use std::collections::HashSet;

/// Generates the body of every pending operator application; reports errors on `g`.
pub fn generate(g: &mut Front) {
    let mut pending = std::mem::take(&mut g.pending_derivs);
    let mut unfilled: HashSet<FuncRef> = pending.iter().map(|p| p.func).collect();
    let mut failed: HashSet<FuncRef> = HashSet::new();
    while !pending.is_empty() {
        let mut progressed = false;
        let mut i = 0;
        while i < pending.len() {
            let Some(tf) = g.target_fref(&pending[i].key.target) else {
                let p = pending.remove(i);
                g.bugs.push(format!(
                    "no function for the operand of `{}`",
                    g.deriv_name(&p.key, false)
                ));
                failed.insert(p.func);
                unfilled.remove(&p.func);
                progressed = true;
                continue;
            };
            let reach = crate::analysis::reachable(&g.module, tf);
            if reach.iter().any(|f| failed.contains(f)) {
                // Its operand already failed (and was reported).
                let p = pending.remove(i);
                failed.insert(p.func);
                unfilled.remove(&p.func);
                progressed = true;
                continue;
            }
            if reach.iter().any(|f| unfilled.contains(f)) {
                i += 1;
                continue;
            }
            let p = pending.remove(i);
            if let Err(e) = fill(&mut g.module, &p, tf) {
                report(g, &p, e);
                failed.insert(p.func);
            }
            unfilled.remove(&p.func);
            progressed = true;
        }
        if !progressed {
            for p in pending.drain(..) {
                let name = g.deriv_name(&p.key, false);
                g.error(ErrorKind::DiffCycle { name }, p.file, p.span);
            }
        }
    }
}

/// The user function whose IR is `name` or whose derivative is `name` (`f$vjp`,
/// `f$vjp$jvp1`, …: the function the chain of derivations starts from).
fn source_item<'a>(g: &'a Front, name: &str) -> Option<&'a crate::front::items::FnItem> {
    let mut f = g.module.find(name)?;
    while let Some(key) = g.module.origin(f) {
        f = key.of;
    }
    g.items.fns.iter().find(|it| it.fref == Some(f))
}

fn report(g: &mut Front, p: &PendingDeriv, e: AdError) {
    let op = p.key.op.name().to_string();
    match e {
        AdError::NeedsTape { function, span, .. } => {
            let file = source_item(g, &function).map(|f| f.file).or_else(|| {
                let m = &g.module;
                m.find(&function).and_then(|h| m.functions[h].source_file)
            });
            let (file, span) = match file {
                Some(file) => (file, span),
                None => (p.file, p.span),
            };
            g.error(
                ErrorKind::ReverseLoop {
                    op,
                    site_file: p.file,
                    site: p.span,
                },
                file,
                span,
            );
        }
        AdError::SctImpossible { function, span, .. } => {
            let item = source_item(g, &function);
            let file = item.map(|f| f.file);
            let func = item.map_or_else(|| function.clone(), |f| f.qual.clone());
            let (file, span) = match file {
                Some(file) => (file, span),
                None => (p.file, p.span),
            };
            g.error(
                ErrorKind::SctImpossible {
                    op,
                    func,
                    site_file: p.file,
                    site: p.span,
                },
                file,
                span,
            );
        }
        AdError::Signature { message, .. } => {
            let func = g.target_name(&p.key.target);
            g.error(
                ErrorKind::DiffSignature {
                    op,
                    func,
                    detail: message,
                },
                p.file,
                p.span,
            );
        }
        AdError::Internal(m) => g.bugs.push(format!(
            "differentiating `{}`: {m}",
            g.deriv_name(&p.key, false)
        )),
    }
}

/// Gives placeholder `p.func` its body, differentiating `tf`.
fn fill(m: &mut Module, p: &PendingDeriv, tf: FuncRef) -> Result<(), AdError> {
    let before = m.functions.len();
    let ph = m.functions[p.func].clone();
    let src_types = m.functions[tf].param_types();
    let floats: Vec<usize> = (0..src_types.len())
        .filter(|&i| tangent_type(&src_types[i]).is_some())
        .collect();
    let wrapper = || Function::new(ph.name.clone(), &ph.param_types(), ph.ret.clone());
    let mut body = match p.key.op {
        DiffOp::Grad => {
            let d = ad::grad(m, tf)?;
            match &p.key.arg {
                Some(wrt) if floats.len() > 1 || matches!(wrt, Wrt::Many(_)) => {
                    let (mut e, out) = call_all(m, wrapper(), d);
                    let mut parts = Vec::new();
                    for a in wrt.indices() {
                        let k = floats
                            .iter()
                            .position(|&i| i == a)
                            .ok_or_else(|| sig_err(m, tf, "not a float argument"))?;
                        parts.push(if floats.len() > 1 { e.op(OpKind::TupleGet(k as u32), vec![out])? } else { out });
                    }
                    let r = match wrt {
                        Wrt::One(_) => parts[0],
                        Wrt::Many(_) => e.op(OpKind::Tuple, parts)?,
                    };
                    e.finish(r)
                }
                _ => m.functions[d].clone(),
            }
        }
        DiffOp::Jvp => {
            let d = ad::jvp(m, tf, 1)?;
            m.functions[d].clone()
        }
        DiffOp::Vjp => {
            let d = ad::vjp(m, tf)?;
            let (mut e, out) = call_all(m, wrapper(), d);
            let value = e.op(OpKind::TupleGet(0), vec![out])?;
            let mut adj = Vec::new();
            for k in 0..floats.len() {
                adj.push(e.op(OpKind::TupleGet(k as u32 + 1), vec![out])?);
            }
            let adj = if adj.len() == 1 {
                adj[0]
            } else {
                e.op(OpKind::Tuple, adj)?
            };
            let r = e.op(OpKind::Tuple, vec![value, adj])?;
            e.finish(r)
        }
        DiffOp::Hessian if super::derive_dense::has_dynamic(&src_types, &floats) => {
            super::derive_dense::hessian_body(m, tf, &floats, wrapper())?
        }
        DiffOp::Jacobian if super::derive_dense::has_dynamic(&src_types, &floats) => {
            super::derive_dense::jacobian_body(m, tf, &floats, wrapper())?
        }
        DiffOp::Hessian => {
            let d = ad::hessian(m, tf)?;
            let (mut e, out) = call_all(m, wrapper(), d);
            let r = to_matrix(&mut e, out)?;
            e.finish(r)
        }
        DiffOp::Jacobian => jacobian_body(m, tf, &floats, wrapper())?,
    };
    body.name = ph.name.clone();
    if body.param_types() != ph.param_types() || body.ret != ph.ret {
        return Err(AdError::Internal(format!(
            "the derivative of `{}` does not have the operator's signature",
            ph.name
        )));
    }
    m.functions[p.func] = body;
    let created: Vec<FuncRef> = m.functions.iter().map(|(h, _)| h).skip(before).collect();
    let clean = |m: &mut Module, f: FuncRef| {
        crate::passes::cleanup(m, f).map_err(|errs| {
            AdError::Internal(
                errs.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; "),
            )
        })
    };
    for f in created {
        clean(m, f)?;
    }
    // One body for the operator: the seed folds and unselected adjoints die.
    crate::passes::inline::inline_calls(m, p.func, 3);
    clean(m, p.func)?;
    ad::check(m, p.func)
}

fn sig_err(m: &Module, tf: FuncRef, message: &str) -> AdError {
    AdError::Signature {
        function: m.functions[tf].name.clone(),
        message: message.to_string(),
    }
}

/// Starts `func`'s body with a call of `d` on all of `func`'s parameters.
fn call_all(m: &Module, func: Function, d: FuncRef) -> (Emitter, ValueId) {
    let params = func.params().to_vec();
    let mut e = Emitter::new(func);
    let id = e.push(OpKind::Call(d), params, vec![m.functions[d].ret.clone()]);
    let out = e.results(id)[0];
    (e, out)
}

/// Copies a rank-2 `f64` tensor into a dynamic `matrix` (`tensor<f64; ?, ?>`).
fn to_matrix(e: &mut Emitter, t: ValueId) -> Result<ValueId, AdError> {
    let dyn_t = SurfaceType::Matrix.ir_type();
    let rows = e.op(OpKind::DimOf(0), vec![t])?;
    let cols = e.op(OpKind::DimOf(1), vec![t])?;
    let zero = e.float(ScalarKind::F64, 0.0);
    let full = e.push(OpKind::Full, vec![zero, rows, cols], vec![dyn_t.clone()]);
    let m0 = e.results(full)[0];
    let lo = e.int(0);
    let outer_args = e.begin_region(&[Type::I64, dyn_t.clone()]);
    let inner_args = e.begin_region(&[Type::I64, dyn_t.clone()]);
    let x = e.op(OpKind::Index, vec![t, outer_args[0], inner_args[0]])?;
    let next = e.op(
        OpKind::Insert,
        vec![inner_args[1], x, outer_args[0], inner_args[0]],
    )?;
    let inner: Region = e.end_region(vec![next]);
    let id = e.push_with_regions(
        OpKind::For,
        vec![lo, cols, outer_args[1]],
        vec![dyn_t.clone()],
        vec![inner],
    );
    let row_done = e.results(id)[0];
    let outer = e.end_region(vec![row_done]);
    let id = e.push_with_regions(OpKind::For, vec![lo, rows, m0], vec![dyn_t], vec![outer]);
    Ok(e.results(id)[0])
}

/// The fixed shape of a float parameter a Jacobian is taken over.
fn fixed_shape(m: &Module, tf: FuncRef, t: &Type) -> Result<Vec<u64>, AdError> {
    let bad = || {
        sig_err(
            m,
            tf,
            &format!("`jacobian` needs f64 arguments of fixed size, found {t}"),
        )
    };
    match t {
        Type::Scalar(ScalarKind::F64) => Ok(vec![]),
        Type::Tensor {
            elem: ScalarKind::F64,
            shape,
        } => shape
            .iter()
            .map(|d| match d {
                Dim::Fixed(n) => Ok(*n),
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

/// `jacobian(f)`: one forward pass of `f$jvp{n}` seeded with the unit vectors of
/// the `n` flattened float inputs; column `s` of the result is tangent `s`.
fn jacobian_body(
    m: &mut Module,
    tf: FuncRef,
    floats: &[usize],
    func: Function,
) -> Result<Function, AdError> {
    let ptypes = m.functions[tf].param_types();
    let mut shapes = Vec::new();
    for &i in floats {
        shapes.push(fixed_shape(m, tf, &ptypes[i])?);
    }
    let n: usize = shapes
        .iter()
        .map(|s| s.iter().product::<u64>() as usize)
        .sum();
    let d = ad::jvp(m, tf, n)?;
    let params = func.params().to_vec();
    let mut e = Emitter::new(func);
    let zero = e.float(ScalarKind::F64, 0.0);
    let one = e.float(ScalarKind::F64, 1.0);
    let mut zeros = Vec::new();
    for (q, &i) in floats.iter().enumerate() {
        zeros.push(if shapes[q].is_empty() {
            zero
        } else {
            e.full_like(zero, params[i])?
        });
    }
    let mut args = params.clone();
    for (k, shape) in shapes.iter().enumerate() {
        for idx in multi_indices(shape) {
            for (q, &z) in zeros.iter().enumerate() {
                if q != k {
                    args.push(z);
                } else if shape.is_empty() {
                    args.push(one);
                } else {
                    let mut ops = vec![z, one];
                    for &x in &idx {
                        ops.push(e.int(x as i64));
                    }
                    args.push(e.op(OpKind::Insert, ops)?);
                }
            }
        }
    }
    let id = e.push(OpKind::Call(d), args, vec![m.functions[d].ret.clone()]);
    let out = e.results(id)[0];
    let mut cols = Vec::new();
    for s in 0..n {
        cols.push(e.op(OpKind::TupleGet(s as u32 + 1), vec![out])?);
    }
    let packed = e.op(OpKind::Pack, cols)?;
    let jac = if matches!(e.ty(packed), Type::Tensor { ref shape, .. } if shape.len() == 1) {
        e.op(OpKind::Pack, vec![packed])?
    } else {
        e.op(OpKind::Transpose, vec![packed])?
    };
    let r = to_matrix(&mut e, jac)?;
    Ok(e.finish(r))
}

/// E0155 for energy terms: a term's gradient is reverse mode through every function it
/// calls, so a function marked `@ad(sct)` with a loop that needs the tape cannot be called
/// by one, as it cannot be under `grad`. (Residual terms take forward mode: no tape.)
pub fn check_sct_terms(g: &mut Front, mesh: &super::mesh::MeshDecls) {
    let mut found = Vec::new();
    for t in &mesh.energies {
        for h in crate::analysis::reachable(&g.module, t.func) {
            let f = &g.module.functions[h];
            if f.ad_mode != Some(crate::ir::AdMode::Sct) {
                continue;
            }
            if let Some(id) = ad::plan::AdPlan::of_loops(f).sct_impossible(f) {
                found.push((t.name.clone(), f.name.clone(), f.span(id)));
            }
        }
    }
    for (term, function, span) in found {
        let Some(item) = g.items.mesh.iter().find(|m| m.name == term) else {
            continue;
        };
        let (site_file, site) = (item.file, item.span);
        let source = source_item(g, &function);
        let file = source.map_or(site_file, |f| f.file);
        let func = source.map_or_else(|| function.clone(), |f| f.qual.clone());
        g.error(
            ErrorKind::SctImpossible {
                op: format!("energy {term}"),
                func,
                site_file,
                site,
            },
            file,
            span,
        );
    }
}
