//! Kernels of `ring` terms: one set per term, whatever the valence.
//!
//! A ring term reads its center (`x[e.v0]`), its neighbours as slices
//! (`x[e.nbrs[i]]`, a `[T]` of the valence's length) and the valence
//! (`len(e.nbrs)`). Its kernels therefore keep the term function's own
//! parameters, heap tensors included, and are called with values
//! ([`crate::back::native::ValueCaller`]):
//!
//! - `value(P…) -> f64`: the term itself (calls inlined);
//! - `grad(P…, 1.0) -> (value, p̄…)`: reverse mode; the adjoints of the dof inputs
//!   are the element's gradient;
//! - `hvp(P…, 1.0, ṫ…) -> ((value, p̄…), (·, ṗ̄…))`: forward over reverse with one
//!   seed, tangents on the dof inputs only; the Hessian-vector product without the
//!   k×k matrix (k = (1 + valence)·d). The dense element Hessian is formed column
//!   by column from k such products with unit seeds;
//! - `mixed[θ](P…, 1.0, θ̇) -> …`: the same with the tangent on param θ only,
//!   giving ∂²E/∂z∂θ.
//!
//! The element's local dofs are those of [`mad_runtime::sparse::element_dofs`]
//! over the ring `[v, n₀, …, n_{m-1}]`: per dof field the term reads (declaration
//! order), the center then the neighbours in ring order, then components.

use crate::ad::emit::Emitter;
use crate::ad::forward::jvp_active;
use crate::ad::vjp_plain_products;
use crate::front::ParamDecl;
use crate::front::mesh::{FieldDecl, InputAt, TermDecl};
use crate::ir::{FuncRef, Function, Module, OpKind, Type};

use crate::energy::EnergyError;

/// How one parameter of a ring term is filled.
#[derive(Clone, Debug, PartialEq)]
pub enum RingInput {
    /// Dof field `field` (`dim` components) at the center or at every neighbour.
    Dof {
        field: usize,
        nbrs: bool,
        dim: usize,
    },
    /// Data field `field` (`slots` values per entry) at the ring (per vertex,
    /// `Element`), the center (`Vertex(0)`) or every neighbour (`Neighbours`).
    Data {
        field: usize,
        at: InputAt,
        slots: usize,
    },
    /// The valence.
    Count,
    /// A param; `int` for an `i64` param.
    Param { param: usize, int: bool },
}

/// The kernels of one ring term.
#[derive(Clone, Debug)]
pub struct RingKernels {
    pub inputs: Vec<RingInput>,
    /// Per input, its position in the reverse-mode result after the value
    /// (inputs of float type only).
    pub adjoint: Vec<Option<usize>>,
    pub value: FuncRef,
    pub grad: FuncRef,
    pub hvp: FuncRef,
    /// (param index, kernel) for each param the term reads with an `f64` type.
    pub mixed: Vec<(usize, FuncRef)>,
}

fn is_float(t: &Type) -> bool {
    match t {
        Type::Scalar(k) | Type::Tensor { elem: k, .. } => k.is_float(),
        _ => false,
    }
}

/// Slots per entry of a field type.
fn slots(t: &crate::front::SurfaceType) -> Option<usize> {
    super::sizes::type_slots(t)
}

/// Builds the kernels of a ring energy term; returns them with the dof fields
/// it reads (declaration order).
pub fn build(
    module: &mut Module,
    term: &TermDecl,
    dofs: &[FieldDecl],
    data: &[FieldDecl],
    params: &[ParamDecl],
) -> Result<(RingKernels, Vec<usize>), EnergyError> {
    build_with(module, term, dofs, data, params, true)
}

/// [`build`], or with `derivatives` false only the value kernel (then `grad`
/// and `hvp` name the value kernel too and `mixed` is empty: a plainly
/// evaluated body such as an `update`).
pub fn build_with(
    module: &mut Module,
    term: &TermDecl,
    dofs: &[FieldDecl],
    data: &[FieldDecl],
    params: &[ParamDecl],
    derivatives: bool,
) -> Result<(RingKernels, Vec<usize>), EnergyError> {
    let unsupported = |what: String| EnergyError::Unsupported {
        term: term.name.clone(),
        what,
    };
    let kernel_err = |m: String| EnergyError::Kernel {
        term: term.name.clone(),
        message: m,
    };
    let mut inputs = Vec::new();
    let mut dof_fields = Vec::new();
    for inp in &term.inputs {
        let ty = inp.ty.ir_type();
        if inp.at == InputAt::NeighbourCount {
            inputs.push(RingInput::Count);
            continue;
        }
        if let Some(f) = dofs.iter().position(|d| d.name == inp.field) {
            if dofs[f].stencil != crate::front::StencilKind::Vertex {
                return Err(unsupported(format!(
                    "dofs on `{}` elements",
                    dofs[f].stencil.name()
                )));
            }
            let nbrs = match inp.at {
                InputAt::Vertex(0) => false,
                InputAt::Neighbours => true,
                _ => {
                    return Err(unsupported(format!(
                        "reading dof `{}` other than at `e.v0` or `e.nbrs[i]`",
                        inp.field
                    )));
                }
            };
            let dim = slots(&dofs[f].ty).ok_or_else(|| {
                unsupported(format!("dof `{}` of type {}", inp.field, dofs[f].ty))
            })?;
            if !dof_fields.contains(&f) {
                dof_fields.push(f);
            }
            inputs.push(RingInput::Dof {
                field: f,
                nbrs,
                dim,
            });
            continue;
        }
        if inp.at == InputAt::Param {
            let p = params
                .iter()
                .position(|p| p.name == inp.field)
                .ok_or_else(|| unsupported(format!("param `{}`", inp.field)))?;
            inputs.push(RingInput::Param {
                param: p,
                int: ty == Type::I64,
            });
            continue;
        }
        let d = data
            .iter()
            .position(|d| d.name == inp.field)
            .ok_or_else(|| unsupported(format!("data `{}`", inp.field)))?;
        if !is_float(&ty) {
            return Err(unsupported(format!("integer data `{}`", inp.field)));
        }
        let s = slots(&data[d].ty)
            .ok_or_else(|| unsupported(format!("data `{}` of type {}", inp.field, data[d].ty)))?;
        inputs.push(RingInput::Data {
            field: d,
            at: inp.at.clone(),
            slots: s,
        });
    }
    dof_fields.sort_unstable();

    // value(P…) = T(P…), inlined.
    let src = module.functions[term.func].clone();
    let ptypes = src.param_types();
    let func = Function::new(format!("{}$ring", src.name), &ptypes, src.ret.clone());
    let pv = func.params().to_vec();
    let mut e = Emitter::new(func);
    let id = e.push(OpKind::Call(term.func), pv, vec![src.ret.clone()]);
    let r = e.results(id)[0];
    let value = module.add_function(e.finish(r));
    super::inline::inline_all(module, value).map_err(kernel_err)?;
    if !derivatives {
        let adjoint = vec![None; ptypes.len()];
        return Ok((
            RingKernels {
                inputs,
                adjoint,
                value,
                grad: value,
                hvp: value,
                mixed: Vec::new(),
            },
            dof_fields,
        ));
    }

    let ad = |x: crate::ad::AdError| kernel_err(x.to_string());
    let grad = vjp_plain_products(module, value).map_err(ad)?;
    super::inline::inline_all(module, grad).map_err(kernel_err)?;
    let mut adjoint = Vec::new();
    let mut next = 0;
    for t in &ptypes {
        if is_float(t) {
            adjoint.push(Some(next));
            next += 1;
        } else {
            adjoint.push(None);
        }
    }
    // Masks over grad's parameters (P…, r̄).
    let mut dof_mask: Vec<bool> = inputs
        .iter()
        .map(|i| matches!(i, RingInput::Dof { .. }))
        .collect();
    dof_mask.push(false);
    let hvp = jvp_active(module, grad, 1, &dof_mask).map_err(ad)?;
    super::inline::inline_all(module, hvp).map_err(kernel_err)?;
    let mut mixed = Vec::new();
    for (i, inp) in inputs.iter().enumerate() {
        if let RingInput::Param { param, int: false } = inp {
            let mut mask = vec![false; inputs.len() + 1];
            mask[i] = true;
            let f = jvp_active(module, grad, 1, &mask).map_err(ad)?;
            super::inline::inline_all(module, f).map_err(kernel_err)?;
            mixed.push((*param, f));
        }
    }
    Ok((
        RingKernels {
            inputs,
            adjoint,
            value,
            grad,
            hvp,
            mixed,
        },
        dof_fields,
    ))
}
