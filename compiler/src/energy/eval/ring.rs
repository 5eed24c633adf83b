//! Evaluation of `ring` terms: per element, the term's inputs are gathered as
//! values (neighbour slices of the element's valence), its kernels are called
//! through [`crate::back::native::ValueCaller`], and the local results
//! (length k = (1 + valence)·d, blocks k×k) are returned for the caller to add
//! into the global outputs in element order.
//!
//! Elements are processed in fixed chunks; the elements of a chunk are computed
//! in parallel (when a thread pool is set) and added serially in element order,
//! so results are bit-identical on every thread count.

use mad_runtime::linalg::sym_eigen::project_psd;
use mad_runtime::{Tensor, Value};
use rayon::prelude::*;

use super::bind::MeshEnergy;
use crate::back::native::ValueCaller;
use crate::energy::EnergyError;
use crate::energy::kernels::ring::{RingInput, RingKernels};
use crate::front::SurfaceType;
use crate::front::mesh::InputAt;

/// Elements per chunk (parallel computation, then serial accumulation).
pub(crate) const RING_CHUNK: usize = 1024;

/// What to compute per ring element.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum RingKind<'a> {
    Value,
    Grad,
    Hess {
        project: bool,
        /// The term's objective weight is negative ([`super::psd`]'s module docs).
        negative: bool,
    },
    Hvp(&'a [f64]),
    /// ∂²E/∂z∂θ with the kernel of param `.0`.
    Mixed(usize),
}

/// One element's local results.
#[derive(Default)]
pub(crate) struct RingOut {
    pub value: f64,
    /// Gradient, H·v or the mixed derivative (length k).
    pub vec: Vec<f64>,
    /// Row-major k×k block (Hessians only).
    pub block: Vec<f64>,
}

fn value_of(ty: &SurfaceType, vals: &[f64]) -> Value {
    match ty {
        SurfaceType::F64 => Value::F64(vals[0]),
        SurfaceType::Mat(r, c) => Value::Tensor(
            Tensor::from_f64(vec![*r as usize, *c as usize], vals.to_vec())
                .unwrap_or_else(|| Tensor::vector(vals.to_vec())),
        ),
        _ => Value::Tensor(Tensor::vector(vals.to_vec())),
    }
}

fn slice_of(ty: &SurfaceType, n: usize, vals: Vec<f64>) -> Value {
    let mut shape = vec![n];
    match ty {
        SurfaceType::F64 => {}
        SurfaceType::Vec(d) => shape.push(*d as usize),
        SurfaceType::Mat(r, c) => shape.extend([*r as usize, *c as usize]),
        _ => shape.push(vals.len() / n.max(1)),
    }
    let len = vals.len();
    Value::Tensor(Tensor::from_f64(shape, vals).unwrap_or_else(|| {
        Tensor::from_f64(vec![len], Vec::new()).unwrap_or(Tensor::vector(Vec::new()))
    }))
}

/// The float values of a scalar or tensor value.
fn floats(v: &Value) -> Option<&[f64]> {
    match v {
        Value::F64(x) => Some(std::slice::from_ref(x)),
        Value::Tensor(t) => t.as_f64(),
        _ => None,
    }
}

fn part(v: &Value, i: usize) -> Option<&Value> {
    match v {
        Value::Tuple(items) => items.get(i),
        _ => None,
    }
}

impl MeshEnergy<'_> {
    /// Local dof position of input `inp` (a dof input) for an element of valence `n`.
    fn ring_base(&self, t: &crate::energy::kernels::TermKernels, field: usize, n: usize) -> usize {
        let mut off = 0;
        for &g in &t.dof_fields {
            if g == field {
                break;
            }
            off += (1 + n) * crate::energy::kernels::sizes::type_slots(&self.prog.decls.dofs[g].ty).unwrap_or(1);
        }
        off
    }

    /// The term function's arguments for ring element `e`, from the local vector `z`.
    pub(crate) fn ring_args(
        &self,
        t: &crate::energy::kernels::TermKernels,
        r: &RingKernels,
        verts: &[u32],
        z: &[f64],
    ) -> Vec<Value> {
        let n = verts.len() - 1;
        let decls = &self.prog.decls;
        r.inputs
            .iter()
            .map(|inp| match inp {
                RingInput::Dof { field, nbrs, dim } => {
                    let base = self.ring_base(t, *field, n);
                    let ty = &decls.dofs[*field].ty;
                    if *nbrs {
                        slice_of(ty, n, z[base + dim..base + (1 + n) * dim].to_vec())
                    } else {
                        value_of(ty, &z[base..base + dim])
                    }
                }
                RingInput::Data { field, at, slots } => {
                    let ty = &decls.data[*field].ty;
                    let vals = self.data[*field].as_deref().unwrap_or(&[]);
                    let at_vertex = |v: u32| &vals[v as usize * slots..(v as usize + 1) * slots];
                    match at {
                        InputAt::Neighbours => slice_of(
                            ty,
                            n,
                            verts[1..]
                                .iter()
                                .flat_map(|&v| at_vertex(v).iter().copied())
                                .collect(),
                        ),
                        _ => value_of(ty, at_vertex(verts[0])),
                    }
                }
                RingInput::Count => Value::I64(n as i64),
                RingInput::Param { param, int } => {
                    let p = self.params[*param];
                    if *int {
                        Value::I64(p as i64)
                    } else {
                        Value::F64(p)
                    }
                }
            })
            .collect()
    }

    /// Writes the dof adjoints (or their tangents) of `res` (a `(value, p̄…)` tuple)
    /// into the local vector `out`.
    fn ring_scatter(
        &self,
        t: &crate::energy::kernels::TermKernels,
        r: &RingKernels,
        n: usize,
        res: &Value,
        out: &mut [f64],
    ) -> Result<(), EnergyError> {
        let bad = || EnergyError::Kernel {
            term: t.name.clone(),
            message: "unexpected ring kernel result".into(),
        };
        out.fill(0.0);
        for (i, inp) in r.inputs.iter().enumerate() {
            if let RingInput::Dof { field, nbrs, dim } = inp {
                let a = r.adjoint[i].ok_or_else(bad)?;
                let vals = part(res, 1 + a).and_then(floats).ok_or_else(bad)?;
                let base = self.ring_base(t, *field, n) + if *nbrs { *dim } else { 0 };
                let want = if *nbrs { n * dim } else { *dim };
                if vals.len() != want {
                    return Err(bad());
                }
                for (o, v) in out[base..base + want].iter_mut().zip(vals) {
                    *o += v;
                }
            }
        }
        Ok(())
    }

    /// Tangent arguments of the dof inputs from the local direction `v`.
    fn ring_tangents(
        &self,
        t: &crate::energy::kernels::TermKernels,
        r: &RingKernels,
        verts: &[u32],
        v: &[f64],
    ) -> Vec<Value> {
        let all = self.ring_args(t, r, verts, v);
        r.inputs
            .iter()
            .zip(all)
            .filter(|(i, _)| matches!(i, RingInput::Dof { .. }))
            .map(|(_, a)| a)
            .collect()
    }

    #[allow(clippy::too_many_arguments)]
    fn ring_element(
        &self,
        t: &crate::energy::kernels::TermKernels,
        r: &RingKernels,
        calls: &mut [ValueCaller<'_>],
        verts: &[u32],
        dofs: &[u32],
        x: &[f64],
        kind: RingKind<'_>,
    ) -> Result<RingOut, EnergyError> {
        let n = verts.len() - 1;
        let k = dofs.len();
        let z: Vec<f64> = dofs.iter().map(|&d| x[d as usize]).collect();
        let args = self.ring_args(t, r, verts, &z);
        let rt = |e: mad_runtime::RtError, site| {
            let id = self.reported_vertex(verts[0] as usize);
            self.prog.runtime_error(format!("term `{}`, element {id}: {e}", t.name), site)
        };
        let bad = || EnergyError::Kernel {
            term: t.name.clone(),
            message: "unexpected ring kernel result".into(),
        };
        let mut out = RingOut {
            vec: vec![0.0; k],
            ..Default::default()
        };
        // A call of ring kernel `c` whose run-time error names the element and the source.
        let call_at = |c: &mut crate::back::native::ValueCaller<'_>, a: &[Value]| {
            c.call(a).map_err(|e| rt(e, c.error_site()))
        };
        let with_seed = |extra: Vec<Value>| {
            let mut a = args.clone();
            a.push(Value::F64(1.0));
            a.extend(extra);
            a
        };
        match kind {
            RingKind::Value => {
                out.value = call_at(&mut calls[0], &args)?.as_f64().ok_or_else(bad)?;
            }
            RingKind::Grad => {
                let res = call_at(&mut calls[0], &with_seed(vec![]))?;
                out.value = part(&res, 0).and_then(Value::as_f64).ok_or_else(bad)?;
                self.ring_scatter(t, r, n, &res, &mut out.vec)?;
            }
            RingKind::Hvp(v) => {
                let vl: Vec<f64> = dofs.iter().map(|&d| v[d as usize]).collect();
                let res = call_at(&mut calls[0], &with_seed(self.ring_tangents(t, r, verts, &vl)))?;
                self.ring_scatter(t, r, n, part(&res, 1).ok_or_else(bad)?, &mut out.vec)?;
            }
            RingKind::Mixed(_) => {
                let res = call_at(&mut calls[0], &with_seed(vec![Value::F64(1.0)]))?;
                self.ring_scatter(t, r, n, part(&res, 1).ok_or_else(bad)?, &mut out.vec)?;
            }
            RingKind::Hess { project, negative } => {
                out.block = vec![0.0; k * k];
                let mut col = vec![0.0; k];
                let mut unit = vec![0.0; k];
                for s in 0..k {
                    unit.fill(0.0);
                    unit[s] = 1.0;
                    let res = call_at(&mut calls[0], &with_seed(self.ring_tangents(t, r, verts, &unit)))?;
                    if s == 0 {
                        let primal = part(&res, 0).ok_or_else(bad)?;
                        out.value = part(primal, 0).and_then(Value::as_f64).ok_or_else(bad)?;
                        self.ring_scatter(t, r, n, primal, &mut out.vec)?;
                    }
                    self.ring_scatter(t, r, n, part(&res, 1).ok_or_else(bad)?, &mut col)?;
                    for (a, &c) in col.iter().enumerate() {
                        out.block[a * k + s] = c;
                    }
                }
                if k == 0 {
                    let res = call_at(&mut calls[1], &args)?;
                    out.value = res.as_f64().ok_or_else(bad)?;
                }
                if project && k > 0 {
                    super::psd::negated_if(negative, &mut out.block);
                    project_psd(&mut out.block, k, 0.0);
                    super::psd::negated_if(negative, &mut out.block);
                }
            }
        }
        Ok(out)
    }

    /// Computes ring term `term`'s local results for `range` of its elements.
    pub(crate) fn ring_chunk(
        &self,
        term: usize,
        kind: RingKind<'_>,
        x: &[f64],
        range: std::ops::Range<usize>,
    ) -> Result<Vec<RingOut>, EnergyError> {
        let t = &self.prog.energies[term];
        let r = t.ring.as_ref().ok_or_else(|| EnergyError::Kernel {
            term: t.name.clone(),
            message: "not a ring term".into(),
        })?;
        let b = &self.energies[term];
        let dofs = self.pattern.terms[term].dofs();
        let func = match kind {
            RingKind::Value => r.value,
            RingKind::Grad => r.grad,
            RingKind::Hess { .. } | RingKind::Hvp(_) => r.hvp,
            RingKind::Mixed(p) => match r.mixed.iter().find(|m| m.0 == p) {
                Some(m) => m.1,
                None => {
                    return Ok(range
                        .map(|e| RingOut {
                            vec: vec![0.0; dofs.get(e).len()],
                            ..Default::default()
                        })
                        .collect());
                }
            },
        };
        let prog = self.prog;
        let new_calls = || -> Result<Vec<ValueCaller<'_>>, EnergyError> {
            let be = |e: mad_runtime::RtError| EnergyError::Backend(e.to_string());
            Ok(vec![
                prog.jit.value_caller(func).map_err(be)?,
                prog.jit.value_caller(r.value).map_err(be)?,
            ])
        };
        let one = |calls: &mut Result<Vec<ValueCaller<'_>>, EnergyError>, e: usize| match calls {
            Ok(c) => self.ring_element(t, r, c, b.verts.get(e), dofs.get(e), x, kind),
            Err(err) => Err(err.clone()),
        };
        let outs: Vec<Result<RingOut, EnergyError>> = match &self.pool {
            Some(pool) => pool.install(|| range.into_par_iter().map_init(new_calls, one).collect()),
            None => {
                let mut c = new_calls();
                range.map(|e| one(&mut c, e)).collect()
            }
        };
        outs.into_iter().collect()
    }
}
