//! Per-term kernels: the IR functions an energy or residual term is evaluated
//! through, built once per term from the front end's lowered term function.
//!
//! A term function `T(i₁, …, iₙ)` reads its gathered inputs in order of first use
//! ([`crate::front::TermInput`]). The kernels take instead the element's **local
//! dof vector** `z` (field-major over the dof fields the term reads, in
//! declaration order, then the stencil's vertices in order, then components: the
//! order of [`mad_runtime::sparse::element_dofs`]) followed by the term's other
//! inputs (`data`, `param`s) in their order:
//!
//! - `local(z: (f64, …, f64), o…) -> R` (z a tuple of k scalars): rebuilds each dof input from `z` and
//!   calls `T` (then everything is inlined and cleaned);
//! - `grad`: `(value, ∂/∂z)`; `hess`: `(value, ∂/∂z, (col₀, …, col_{k-1}))` (the
//!   k×k Hessian by columns, forward over reverse, dof directions only); `hvp(z, o…, v)`: `(∂/∂z, H·v)` by one forward
//!   pass over the reverse pass (no k×k matrix); `jac`: `(value, (∂R/∂z₀, …))` (the m×k
//!   Jacobian by columns) for residuals.
//!
//! Derivatives are taken only in the dof directions: data and params are
//! inactive ([`crate::ad::forward::jvp_active`]), so no work is spent on their
//! partials. All kernels take and return flat `f64` slots (see
//! [`crate::back::native::RawCaller`]).

use crate::ad::AdError;
use crate::front::mesh::{FieldDecl, InputAt, TermDecl};
use crate::ir::{Dim, FuncRef, Function, Module, OpKind, ScalarKind, Type, ValueId};

use crate::ad::emit::Emitter;

use crate::energy::EnergyError;

/// How one of the term's inputs is filled.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// From the local dof vector: dof field `field` (index into the dof decls) at
    /// the element's vertex `vertex`, `dim` components starting at local `at`.
    Dof { field: usize, at: usize, dim: usize },
    /// A data field (index into the data decls) at the element (`None`) or at
    /// the element's vertex `Some(k)`, `slots` values.
    Data {
        field: usize,
        vertex: Option<u8>,
        slots: usize,
    },
    /// A param (index into the param decls); `int` for an `i64` param.
    Param { param: usize, int: bool },
}

/// The compiled-kernel description of one term.
#[derive(Clone, Debug)]
pub struct TermKernels {
    pub name: String,
    /// Stencil vertex count (fixed stencils only).
    pub nverts: usize,
    /// The stencil vertices (positions in the stencil, ascending) whose vertex dofs are in
    /// the local vector: the vertices at which the term reads a dof field. All of them
    /// (`0..nverts`) unless the term is an energy or residual over edges, faces or diamonds
    /// with vertex dof fields only that reads dofs at fewer vertices than its stencil has
    /// (say a diamond term that reads `x[e.v0]`, `x[e.v1]` and only data at the wings):
    /// then its local dofs, Hessian blocks and the Hessian pattern leave the other
    /// vertices out.
    pub dof_verts: Vec<u8>,
    /// The dof fields this term reads (indices into the dof decls), declaration order.
    pub dof_fields: Vec<usize>,
    /// Local dof count k.
    pub k: usize,
    /// Output dimension m (1 for energies and scalar residuals).
    pub m: usize,
    /// The non-dof inputs, in kernel-argument order.
    pub others: Vec<Source>,
    /// Argument slots after `z`.
    pub other_slots: usize,
    pub local: FuncRef,
    pub grad: Option<FuncRef>,
    pub hess: Option<FuncRef>,
    pub hvp: Option<FuncRef>,
    pub jac: Option<FuncRef>,
    /// The forward seeds `hess` runs over the reverse pass: k, or k − dim when the term
    /// reads its vertex dofs only through differences (see
    /// [`super::derive::value_grad_hess`]); 0 without a Hessian kernel.
    pub hess_seeds: usize,
    /// Whether the Hessian kernel's blocks are constant zeros (the term is linear in its
    /// dofs, [`super::derive::hessian_is_zero`]): Hessian evaluations run its gradient kernel.
    pub hess_zero: bool,
    /// ∂²E/∂z∂θ kernels: (param index, `mixed(z, o…) -> tuple of k`).
    pub mixed: Vec<(usize, FuncRef)>,
    /// The kernels of a `ring` term (then `k` is 0: it varies per element).
    pub ring: Option<super::ring::RingKernels>,
}

impl TermKernels {
    /// The vertex count to give `project_psd_translation` for this term's Hessian blocks:
    /// the count of dof vertices ([`Self::dof_verts`]) when the local dofs are exactly one
    /// vertex dof field, `dim` components at each of `n ≥ 2` vertices in vertex-major order
    /// (index `v·dim + c`, as `build` lays them out); 0 otherwise (several fields, face dofs, ring
    /// terms), which makes the projection assume no translation structure.
    pub(crate) fn translation_nverts(&self, dofs: &[FieldDecl]) -> usize {
        let nv = self.dof_verts.len();
        if self.ring.is_some() || nv < 2 || !self.k.is_multiple_of(nv) {
            return 0;
        }
        match self.dof_fields.as_slice() {
            [f] => match dofs.get(*f) {
                Some(d)
                    if d.stencil == crate::front::StencilKind::Vertex
                        && super::sizes::type_slots(&d.ty) == Some(self.k / nv) =>
                {
                    nv
                }
                _ => 0,
            },
            _ => 0,
        }
    }
}

fn slots_of(t: &Type) -> Option<usize> {
    match t {
        Type::Scalar(ScalarKind::F64 | ScalarKind::I64) => Some(1),
        Type::Tensor {
            elem: ScalarKind::F64,
            shape,
        } => {
            let mut n = 1;
            for d in shape {
                match d {
                    Dim::Fixed(x) => n *= *x as usize,
                    _ => return None,
                }
            }
            Some(n)
        }
        _ => None,
    }
}

fn ad_err(term: &str, e: AdError) -> EnergyError {
    EnergyError::Kernel {
        term: term.to_string(),
        message: e.to_string(),
    }
}

/// Builds the kernels of a term. `is_energy` picks gradient/Hessian/HVP kernels,
/// otherwise the Jacobian kernel.
pub fn build(
    module: &mut Module,
    term: &TermDecl,
    dofs: &[FieldDecl],
    data: &[FieldDecl],
    params: &[crate::front::ParamDecl],
    is_energy: bool,
) -> Result<TermKernels, EnergyError> {
    build_with(module, term, dofs, data, params, is_energy, true)
}

/// Builds only the value kernel (`local`, or a ring term's `value`) of a term
/// evaluated plainly, such as an `update` body; `m` is its value's slot count.
pub fn build_value(
    module: &mut Module,
    term: &TermDecl,
    dofs: &[FieldDecl],
    data: &[FieldDecl],
    params: &[crate::front::ParamDecl],
) -> Result<TermKernels, EnergyError> {
    build_with(module, term, dofs, data, params, false, false)
}

fn build_with(
    module: &mut Module,
    term: &TermDecl,
    dofs: &[FieldDecl],
    data: &[FieldDecl],
    params: &[crate::front::ParamDecl],
    is_energy: bool,
    derivatives: bool,
) -> Result<TermKernels, EnergyError> {
    let unsupported = |what: String| EnergyError::Unsupported {
        term: term.name.clone(),
        what,
    };
    use crate::front::StencilKind as S;
    let nverts = match term.stencil {
        S::Vertex | S::Edge | S::Face | S::Diamond => term.stencil.vertex_count(),
        S::Pair => term.pair_arity(),
        S::Ring => {
            if !is_energy && derivatives {
                return Err(unsupported("residuals on `ring` elements".to_string()));
            }
            let (ring, dof_fields) =
                super::ring::build_with(module, term, dofs, data, params, derivatives)?;
            return Ok(TermKernels {
                name: term.name.clone(),
                nverts: 0,
                dof_verts: Vec::new(),
                dof_fields,
                k: 0,
                m: if derivatives {
                    1
                } else {
                    slots_of(&term.ret.ir_type()).unwrap_or(1)
                },
                others: Vec::new(),
                other_slots: 0,
                local: ring.value,
                grad: None,
                hess: None,
                hvp: None,
                jac: None,
                hess_seeds: 0,
                hess_zero: false,
                mixed: Vec::new(),
                ring: Some(ring),
            });
        }
    };
    // Dof fields read, in declaration order.
    let mut dof_fields: Vec<usize> = Vec::new();
    for inp in &term.inputs {
        if let Some(f) = dofs.iter().position(|d| d.name == inp.field)
            && !dof_fields.contains(&f)
        {
            dof_fields.push(f);
        }
    }
    dof_fields.sort_unstable();
    let dim_of = |f: usize| slots_of(&dofs[f].ty.ir_type()).unwrap_or(1);
    // The stencil vertices that carry dofs in the local vector.
    let mut dof_verts: Vec<u8> = (0..nverts as u8).collect();
    let only_vertex_fields = dof_fields.iter().all(|&f| dofs[f].stencil == S::Vertex);
    if derivatives && only_vertex_fields && matches!(term.stencil, S::Edge | S::Face | S::Diamond) {
        let mut read: Vec<u8> = term
            .inputs
            .iter()
            .filter(|inp| dofs.iter().any(|d| d.name == inp.field))
            .filter_map(|inp| match inp.at {
                InputAt::Vertex(v) => Some(v),
                _ => None,
            })
            .collect();
        read.sort_unstable();
        read.dedup();
        let all_vertex_reads = term
            .inputs
            .iter()
            .filter(|inp| dofs.iter().any(|d| d.name == inp.field))
            .all(|inp| matches!(inp.at, InputAt::Vertex(v) if (v as usize) < nverts));
        if all_vertex_reads && !read.is_empty() && read.len() < nverts {
            dof_verts = read;
        }
    }
    // Entities per element of a field: the dof vertices, or the stencil's faces.
    let nfaces = super::sizes::faces_per_element(term.stencil);
    let entities = |f: usize| {
        if dofs[f].stencil == S::Face {
            nfaces
        } else {
            dof_verts.len()
        }
    };
    let k: usize = dof_fields.iter().map(|&f| entities(f) * dim_of(f)).sum();
    let field_base = |f: usize| -> usize {
        let mut off = 0;
        for &g in &dof_fields {
            if g == f {
                break;
            }
            off += entities(g) * dim_of(g);
        }
        off
    };
    let m = if is_energy {
        1
    } else {
        slots_of(&term.ret.ir_type()).unwrap_or(1)
    };

    // The kernel's parameters and how each term input is formed.
    let src = module.functions[term.func].clone();
    let mut others = Vec::new();
    let mut other_types = Vec::new();
    let mut input_src = Vec::new();
    for inp in &term.inputs {
        let ty = inp.ty.ir_type();
        if let Some(f) = dofs.iter().position(|d| d.name == inp.field) {
            // The entity's position among the element's vertices or faces.
            let at = match (dofs[f].stencil, &inp.at, term.stencil) {
                (S::Vertex, InputAt::Vertex(v), _) => {
                    dof_verts.iter().position(|x| x == v).ok_or_else(|| {
                        unsupported(format!("reading dof `{}` at {:?}", inp.field, inp.at))
                    })?
                }
                (S::Vertex, InputAt::Element, S::Vertex) => 0,
                (S::Face, InputAt::Element, S::Face) => 0,
                (S::Face, InputAt::Face(k), S::Diamond) => *k as usize,
                _ => {
                    return Err(unsupported(format!(
                        "reading dof `{}` at {:?}",
                        inp.field, inp.at
                    )));
                }
            };
            let dim = dim_of(f);
            input_src.push(Source::Dof {
                field: f,
                at: field_base(f) + at * dim,
                dim,
            });
            continue;
        }
        let slots = slots_of(&ty)
            .ok_or_else(|| unsupported(format!("input `{}` of type {}", inp.field, inp.ty)))?;
        let s = match inp.at {
            InputAt::Param => {
                let p = params
                    .iter()
                    .position(|p| p.name == inp.field)
                    .ok_or_else(|| unsupported(format!("param `{}`", inp.field)))?;
                Source::Param {
                    param: p,
                    int: ty == Type::I64,
                }
            }
            InputAt::Element | InputAt::Vertex(_) => {
                if ty == Type::I64 {
                    return Err(unsupported(format!("integer data `{}`", inp.field)));
                }
                let d = data
                    .iter()
                    .position(|d| d.name == inp.field)
                    .ok_or_else(|| unsupported(format!("data `{}`", inp.field)))?;
                let vertex = match inp.at {
                    InputAt::Vertex(v) => Some(v),
                    _ => None,
                };
                Source::Data {
                    field: d,
                    vertex,
                    slots,
                }
            }
            InputAt::Face(_) => {
                return Err(unsupported(format!(
                    "face data `{}` read through `e.f0`/`e.f1` (read it in a `face` term)",
                    inp.field
                )));
            }
            InputAt::Neighbours | InputAt::NeighbourCount => {
                return Err(unsupported("one-ring inputs".to_string()));
            }
        };
        input_src.push(s.clone());
        others.push(s);
        other_types.push(ty);
    }
    let other_slots = others
        .iter()
        .map(|s| match s {
            Source::Data { slots, .. } => *slots,
            _ => 1,
        })
        .sum();

    // local(z, o…) = T(inputs rebuilt from z)
    // z is a tuple of k scalars: any k keeps flat slots, and each scalar's
    // tangent is tracked (and symbolically zero) on its own.
    let zt = Type::Tuple(vec![Type::F64; k.max(1)]);
    let mut ptypes = vec![zt.clone()];
    ptypes.extend(other_types.iter().cloned());
    let local_name = format!("{}$local", src.name);
    let mut func = Function::new(local_name, &ptypes, src.ret.clone());
    // The term's file: its ops, inlined into the kernel, keep their source positions for
    // run-time errors (`super::inline`).
    func.source_file = src.source_file;
    let params_v = func.params().to_vec();
    let mut e = Emitter::new(func);
    let mut args = Vec::new();
    let mut next_other = 1;
    for s in &input_src {
        match s {
            Source::Dof { at, dim, .. } => {
                let comps: Vec<ValueId> = (0..*dim)
                    .map(|c| e.op(OpKind::TupleGet((*at + c) as u32), vec![params_v[0]]))
                    .collect::<Result<_, _>>()
                    .map_err(|x| ad_err(&term.name, x))?;
                let v = if *dim == 1 {
                    comps[0]
                } else {
                    e.op(OpKind::Pack, comps)
                        .map_err(|x| ad_err(&term.name, x))?
                };
                args.push(v);
            }
            _ => {
                args.push(params_v[next_other]);
                next_other += 1;
            }
        }
    }
    let id = e.push(OpKind::Call(term.func), args, vec![src.ret.clone()]);
    let r = e.results(id)[0];
    let local = module.add_function(e.finish(r));
    super::inline::inline_all(module, local).map_err(|m| EnergyError::Kernel {
        term: term.name.clone(),
        message: m,
    })?;
    let mut active = vec![false; ptypes.len()];
    active[0] = true;

    let mut out = TermKernels {
        name: term.name.clone(),
        nverts,
        dof_verts,
        dof_fields,
        k,
        m,
        others,
        other_slots,
        local,
        grad: None,
        hess: None,
        hvp: None,
        jac: None,
        hess_seeds: 0,
        hess_zero: false,
        mixed: Vec::new(),
        ring: None,
    };
    if k == 0 || !derivatives {
        return Ok(out);
    }
    let err = |x| ad_err(&term.name, x);
    if is_energy {
        out.grad = Some(super::derive::value_grad(module, local, &active).map_err(err)?);
        let nv = out.translation_nverts(dofs);
        let translation = (nv >= 2).then(|| (nv, k / nv));
        let (hess, seeds) =
            super::derive::value_grad_hess(module, local, &active, k, translation).map_err(err)?;
        out.hess = Some(hess);
        out.hess_seeds = seeds;
        out.hvp = Some(super::derive::grad_hvp(module, local, &active).map_err(err)?);
        for (j, s) in out.others.clone().iter().enumerate() {
            if let Source::Param { param, int: false } = s {
                out.mixed.push((
                    *param,
                    super::derive::grad_mixed(module, local, 1 + j).map_err(err)?,
                ));
            }
        }
    } else {
        out.jac = Some(super::derive::value_jac(module, local, &active, k).map_err(err)?);
    }
    let mixed: Vec<FuncRef> = out.mixed.iter().map(|m| m.1).collect();
    for f in [out.grad, out.hess, out.hvp, out.jac]
        .into_iter()
        .flatten()
        .chain(mixed)
    {
        super::inline::inline_all_deep(module, f).map_err(|m| EnergyError::Kernel {
            term: term.name.clone(),
            message: m,
        })?;
    }
    out.hess_zero = out.hess.is_some_and(|h| super::derive::hessian_is_zero(module, h));
    Ok(out)
}


