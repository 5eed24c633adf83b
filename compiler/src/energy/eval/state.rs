//! Initial values and updates of a bound program: the dofs' `= INIT`
//! ([`MeshEnergy::initial_x`], [`MeshEnergy::set_init`]), the `state` fields'
//! values ([`MeshEnergy::state`]) and the `update` items
//! ([`MeshEnergy::update`]).
//!
//! An initializer fills a field with the mesh's positions (first components,
//! zero-padded), zeros, a Tutte embedding ([`mad_runtime::mesh::tutte`]), or a
//! file: a mesh (`.obj`/`.off`/`.ply`, its positions, same vertex count) or a
//! `.npy` array (`(n, slots)` or flat). Without `= INIT` the first dof field
//! starts at `positions`, the others at `zeros`, and states at `zeros`.
//!
//! Updates are evaluated plainly (value kernels, no derivatives): every update
//! reads the old values of dofs, data and states, then all results are written
//! (simultaneous). A state update's values replace the state's; a dof update's
//! values replace the dofs in `x`.

use mad_runtime::mesh::{Stencil, load_mesh};
use mad_runtime::sparse::ElementList;
use mad_runtime::{Value, mesh::tutte::tutte_embedding};
use rayon::prelude::*;

use super::bind::MeshEnergy;
use crate::energy::EnergyError;
use crate::energy::kernels::Source;
use crate::energy::kernels::sizes::type_slots;
use crate::front::state::{Init, UpdateDecl, UpdateTarget};
use crate::front::{StencilKind, SurfaceType};

impl MeshEnergy<'_> {
    /// Values of a field of `n` elements × `slots` from an initializer.
    pub(crate) fn init_values(
        &self,
        name: &str,
        init: &Init,
        stencil: StencilKind,
        ty: &SurfaceType,
        n: usize,
        slots: usize,
    ) -> Result<Vec<f64>, EnergyError> {
        if let Some(why) = init.unfit(stencil, ty) {
            return Err(EnergyError::Host(format!("field `{name}`: {why}")));
        }
        let padded = |pts: &[[f64; 3]]| -> Vec<f64> {
            pts.iter()
                .flat_map(|p| (0..slots).map(move |c| if c < 3 { p[c] } else { 0.0 }))
                .collect()
        };
        match init {
            Init::Zeros => Ok(vec![0.0; n * slots]),
            Init::Positions => Ok(padded(&self.mesh.positions)),
            Init::Tutte => {
                // On the caller's numbering, whose lowest boundary vertex starts the circle:
                // a renumbered binding starts where a plain one does.
                let uv = match &self.renumbering {
                    Some(r) => tutte_embedding(&r.restore(&self.mesh)).map(|uv| r.rows_to_new(&uv, 1)),
                    None => tutte_embedding(&self.mesh),
                }
                .map_err(|e| EnergyError::Mesh(format!("field `{name}`: {e}")))?;
                Ok(uv.iter().flat_map(|q| [q[0], q[1]]).collect())
            }
            Init::File(path) => {
                let is_npy = std::path::Path::new(path)
                    .extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("npy"));
                if is_npy {
                    let bytes = std::fs::read(path)
                        .map_err(|e| EnergyError::Host(format!("field `{name}`: {path}: {e}")))?;
                    let arr = mad_runtime::npy::read_npy(&bytes)
                        .map_err(|e| EnergyError::Host(format!("field `{name}`: {path}: {e}")))?;
                    let vals = arr
                        .into_field(n, slots)
                        .map_err(|e| EnergyError::Host(format!("field `{name}`: {path}: {e}")))?;
                    return Ok(self.rows_in_bound_numbering(stencil, vals, slots));
                }
                if stencil != StencilKind::Vertex {
                    return Err(EnergyError::Host(format!(
                        "field `{name}` lives on {} elements: initialize it from a .npy file",
                        stencil.name()
                    )));
                }
                let m = load_mesh(path).map_err(|e| {
                    use mad_runtime::mesh::MeshError;
                    EnergyError::Host(match e {
                        MeshError::UnknownFormat { .. } => format!(
                            "field `{name}`: `{path}` is neither an initializer (positions, zeros, \
                             tutte) nor a .obj, .off, .ply or .npy file"
                        ),
                        MeshError::Io { .. } => format!("field `{name}`: {e}"),
                        MeshError::Empty { .. } => format!(
                            "field `{name}`: {path}: {e} (a mesh file that initializes a field \
                             is read as a mesh, faces included; give positions alone as an \
                             (n, d) .npy file)"
                        ),
                        e => format!("field `{name}`: {path}: {e}"),
                    })
                })?;
                if m.num_vertices() != n {
                    return Err(EnergyError::Host(format!(
                        "field `{name}`: {path} has {} vertices, the mesh has {n}",
                        m.num_vertices()
                    )));
                }
                Ok(self.rows_in_bound_numbering(stencil, padded(&m.positions), slots))
            }
        }
    }

    /// Per-vertex values read in the caller's numbering, in the bound mesh's.
    fn rows_in_bound_numbering(&self, stencil: StencilKind, vals: Vec<f64>, slots: usize) -> Vec<f64> {
        match &self.renumbering {
            Some(r) if stencil == StencilKind::Vertex && vals.len() == r.len() * slots => {
                r.rows_to_new(&vals, slots)
            }
            _ => vals,
        }
    }

    /// Sets the initializer of a dof field (for [`MeshEnergy::initial_x`]) or
    /// re-initializes a state field now.
    pub fn set_init(&mut self, name: &str, init: Init) -> Result<(), EnergyError> {
        let decls = &self.prog.decls;
        if let Some(f) = decls.dofs.iter().position(|d| d.name == name) {
            let d = &decls.dofs[f];
            if let Some(why) = init.unfit(d.stencil, &d.ty) {
                return Err(EnergyError::Host(format!("dof `{name}`: {why}")));
            }
            if init == Init::Tutte {
                self.check_tutte_mesh(name)?;
            }
            self.dof_inits[f] = Some(init);
            return Ok(());
        }
        let Some(s) = decls
            .states
            .iter()
            .find(|s| decls.data[s.data].name == name)
        else {
            return Err(EnergyError::Host(format!("no dof or state named `{name}`")));
        };
        let i = s.data;
        let d = &decls.data[i];
        let (n, slots) = self.data_shape(i)?;
        let vals = self.init_values(name, &init, d.stencil, &d.ty, n, slots)?;
        self.data[i] = Some(vals);
        self.refresh_static_states()
    }

    /// A `tutte` initializer needs a mesh with a boundary: checked when a dof takes it (at
    /// bind time for a declared `= tutte`, by `set_init` for one set later), not first when
    /// the unknowns are formed.
    fn check_tutte_mesh(&self, name: &str) -> Result<(), EnergyError> {
        if mad_runtime::mesh::tutte::boundary_loops(&self.mesh).is_empty() {
            return Err(EnergyError::Mesh(format!(
                "field `{name}`: the mesh has no boundary (a closed surface cannot be mapped to \
                 a disk by `tutte`; cut it open first)"
            )));
        }
        Ok(())
    }

    /// Checks the dof fields' declared initializers against the mesh (`tutte`).
    pub(crate) fn check_dof_inits(&self) -> Result<(), EnergyError> {
        for (f, d) in self.prog.decls.dofs.iter().enumerate() {
            if self.dof_inits[f] == Some(Init::Tutte) {
                self.check_tutte_mesh(&d.name)?;
            }
        }
        Ok(())
    }

    /// Fills every state field from its `= INIT` (zeros without one).
    pub(crate) fn init_states(&mut self) -> Result<(), EnergyError> {
        let decls = &self.prog.decls;
        for s in &decls.states {
            let d = &decls.data[s.data];
            let (n, slots) = self.data_shape(s.data)?;
            let init = s.init.clone().unwrap_or(Init::Zeros);
            self.data[s.data] = Some(self.init_values(&d.name, &init, d.stencil, &d.ty, n, slots)?);
        }
        Ok(())
    }

    /// The initial unknowns: each dof field from its initializer (set by
    /// [`MeshEnergy::set_init`], else its `= INIT`, else `positions` for the
    /// first field and `zeros` for the others).
    pub fn initial_x(&self) -> Result<Vec<f64>, EnergyError> {
        let mut x = vec![0.0; self.ndofs];
        for (f, d) in self.prog.decls.dofs.iter().enumerate() {
            let slots = type_slots(&d.ty).unwrap_or(1);
            let on_faces = d.stencil == StencilKind::Face;
            let n = if on_faces {
                self.topology().faces.len()
            } else {
                self.num_vertices()
            };
            let init = match &self.dof_inits[f] {
                Some(i) => i.clone(),
                None if f == 0 && slots <= 3 && !on_faces => Init::Positions,
                None => Init::Zeros,
            };
            let vals = self.init_values(&d.name, &init, d.stencil, &d.ty, n, slots)?;
            x[self.dof_offsets[f]..self.dof_offsets[f] + n * slots].copy_from_slice(&vals);
        }
        Ok(x)
    }

    /// [`MeshEnergy::default_x`] (mesh positions in every vertex field of
    /// dimension ≤ 3, zeros elsewhere), except that a field with an initializer
    /// (its `= INIT`, or one set by [`MeshEnergy::set_init`]) takes that
    /// initializer's values. (`madc eval`, `bench` and `run` start from
    /// [`MeshEnergy::initial_x`], whose default puts only the first field at the
    /// positions.)
    pub fn declared_x(&self) -> Result<Vec<f64>, EnergyError> {
        let mut x = self.default_x();
        for (f, d) in self.prog.decls.dofs.iter().enumerate() {
            let Some(init) = &self.dof_inits[f] else {
                continue;
            };
            let slots = type_slots(&d.ty).unwrap_or(1);
            let n = if d.stencil == StencilKind::Face {
                self.topology().faces.len()
            } else {
                self.num_vertices()
            };
            let vals = self.init_values(&d.name, init, d.stencil, &d.ty, n, slots)?;
            x[self.dof_offsets[f]..self.dof_offsets[f] + n * slots].copy_from_slice(&vals);
        }
        Ok(x)
    }

    /// The current values of a `state` field (`(n, slots)` row-major).
    pub fn state(&self, name: &str) -> Option<&[f64]> {
        let decls = &self.prog.decls;
        let s = decls
            .states
            .iter()
            .find(|s| decls.data[s.data].name == name)?;
        self.data[s.data].as_deref()
    }

    /// Whether the program has `update` items.
    pub fn has_updates(&self) -> bool {
        !self.prog.updates.is_empty()
    }

    /// Runs every update at `x` (old values read, then all written): states
    /// change in place, dof updates write into `x`. Returns whether any value
    /// changed (bitwise), i.e. whether the objective may have changed.
    ///
    /// Static updates (updates of a state that read no dof and no state that an
    /// update writes: only data, params and the mesh, such as a rest frame) are
    /// not run here: they are kept current by the binding itself
    /// (`MeshEnergy::refresh_static_states`).
    pub fn update(&mut self, x: &mut [f64]) -> Result<bool, EnergyError> {
        if self.prog.updates.is_empty() {
            return Ok(false);
        }
        if x.len() != self.ndofs {
            return Err(EnergyError::Host(format!(
                "x: expected {} values, found {}",
                self.ndofs,
                x.len()
            )));
        }
        self.check_data()?;
        let mut results = Vec::with_capacity(self.prog.updates.len());
        for (u, t) in self.prog.decls.updates.iter().zip(&self.prog.updates) {
            if self.static_update(u, t) {
                results.push(None);
                continue;
            }
            results.push(Some(self.eval_update(t, u.term.stencil, x)?));
        }
        let mut changed = false;
        let mut state_changed = false;
        let same = |a: &[f64], b: &[f64]| {
            a.len() == b.len() && a.iter().zip(b).all(|(p, q)| p.to_bits() == q.to_bits())
        };
        for (u, vals) in self.prog.decls.updates.iter().zip(results) {
            // A static update's values are current already.
            let Some(vals) = vals else { continue };
            match u.target {
                UpdateTarget::State(i) => {
                    let differs = !self.data[i].as_deref().is_some_and(|old| same(old, &vals));
                    changed |= differs;
                    state_changed |= differs;
                    self.data[i] = Some(vals);
                }
                UpdateTarget::Dof(f) => {
                    let off = self.dof_offsets[f];
                    changed |= !same(&x[off..off + vals.len()], &vals);
                    x[off..off + vals.len()].copy_from_slice(&vals);
                }
            }
        }
        if state_changed {
            self.forget_permuted_data();
        }
        Ok(changed)
    }

    /// Computes the static updates' states (see [`MeshEnergy::update`]) from the current
    /// data, params and mesh: called when the mesh is bound and whenever data, a param or a
    /// state's initializer changes, so that every evaluation reads them current.
    ///
    /// A run-time error of such an update is kept, not returned: the inputs it ran with may
    /// be about to change (a param's default, before the `--set` that overrides it, bound
    /// first). The next evaluation reports it ([`MeshEnergy::check_data`]) unless a later
    /// refresh succeeds. The states it would have written keep their earlier values.
    pub(crate) fn refresh_static_states(&mut self) -> Result<(), EnergyError> {
        match self.compute_static_states() {
            Ok(()) => self.static_error = None,
            Err(e @ EnergyError::Runtime { .. }) => self.static_error = Some(e),
            Err(e) => return Err(e),
        }
        Ok(())
    }

    fn compute_static_states(&mut self) -> Result<(), EnergyError> {
        let prog = self.prog;
        let mut results = Vec::new();
        for (u, t) in prog.decls.updates.iter().zip(&prog.updates) {
            // Inputs not given yet (data without a default, a param without a value): the
            // state waits for them.
            let ready = t.others.iter().all(|s| match *s {
                Source::Data { field, .. } => self.data[field].is_some(),
                Source::Param { param, .. } => self.params_given[param],
                Source::Dof { .. } => true,
            });
            if let UpdateTarget::State(i) = u.target
                && ready
                && self.static_update(u, t)
            {
                results.push((i, self.eval_update(t, u.term.stencil, &[])?));
            }
        }
        for (i, vals) in results {
            self.data[i] = Some(vals);
        }
        self.forget_permuted_data();
        Ok(())
    }

    /// Whether update `u` (kernel `t`) gives the same values on every call for the same
    /// data and params: it writes a state and reads no dof and no state that an update
    /// writes.
    fn static_update(&self, u: &UpdateDecl, t: &crate::energy::kernels::TermKernels) -> bool {
        let updated = |field: usize| {
            self.prog
                .decls
                .updates
                .iter()
                .any(|v| matches!(v.target, UpdateTarget::State(f) if f == field))
        };
        matches!(u.target, UpdateTarget::State(_))
            && t.k == 0
            && t.dof_fields.is_empty()
            && t.others.iter().all(|s| match *s {
                Source::Dof { .. } => false,
                Source::Data { field, .. } => !updated(field),
                Source::Param { .. } => true,
            })
    }

    /// One update's values over its elements (`m` slots each).
    fn eval_update(
        &self,
        t: &crate::energy::kernels::TermKernels,
        stencil: StencilKind,
        x: &[f64],
    ) -> Result<Vec<f64>, EnergyError> {
        let s = super::bind::runtime_stencil(stencil).ok_or_else(|| EnergyError::Unsupported {
            term: t.name.clone(),
            what: "updates on pairs".into(),
        })?;
        let verts = self.topo.elements(s);
        // The update's local dofs as a term's over the same stencil (face dofs included).
        let fields = super::layout::local_fields(&t.dof_fields, &self.prog.decls.dofs, &self.dof_offsets);
        let dofs = super::layout::stencil_dofs(&self.topo, s, &verts, &t.dof_verts, &fields);
        let m = t.m;
        let n = verts.len();
        let on_vertices = matches!(s, Stencil::Vertex | Stencil::Ring);
        let rt = |e: usize, err: mad_runtime::RtError, site| {
            let at = if on_vertices {
                format!("element {}", self.reported_vertex(e))
            } else {
                format!("element {e} (vertices {})", self.vertex_list(verts.get(e)))
            };
            self.prog.runtime_error(format!("update `{}`, {at}: {err}", t.name), site)
        };
        let outs: Vec<Result<Vec<f64>, EnergyError>> = if let Some(r) = &t.ring {
            let prog = self.prog;
            let new_call = || {
                prog.jit
                    .value_caller(r.value)
                    .map_err(|e| EnergyError::Backend(e.to_string()))
            };
            let one = |call: &mut Result<crate::back::native::ValueCaller<'_>, EnergyError>,
                       e: usize|
             -> Result<Vec<f64>, EnergyError> {
                let call = call.as_mut().map_err(|err| err.clone())?;
                let z: Vec<f64> = dofs.get(e).iter().map(|&d| x[d as usize]).collect();
                let args = self.ring_args(t, r, verts.get(e), &z);
                let v = call.call(&args).map_err(|err| rt(e, err, call.error_site()))?;
                let vals = match &v {
                    Value::F64(a) => vec![*a],
                    Value::Tensor(tt) => tt.as_f64().map(|s| s.to_vec()).unwrap_or_default(),
                    _ => Vec::new(),
                };
                if vals.len() != m {
                    return Err(EnergyError::Kernel {
                        term: t.name.clone(),
                        message: format!("update value has {} slots, expected {m}", vals.len()),
                    });
                }
                Ok(vals)
            };
            match &self.pool {
                Some(pool) => {
                    pool.install(|| (0..n).into_par_iter().map_init(new_call, one).collect())
                }
                None => {
                    let mut c = new_call();
                    (0..n).map(|e| one(&mut c, e)).collect()
                }
            }
        } else {
            let nargs = t.k.max(1) + t.other_slots;
            let prog = self.prog;
            let new_call = || -> Result<crate::back::native::RawCaller<'_>, EnergyError> {
                let c = prog
                    .raw_caller(t.local)
                    .map_err(|e| EnergyError::Backend(e.to_string()))?;
                if c.arg_slots() != nargs || c.result_slots() != m {
                    return Err(EnergyError::Kernel {
                        term: t.name.clone(),
                        message: "unexpected update kernel slots".into(),
                    });
                }
                Ok(c)
            };
            let one = |call: &mut Result<crate::back::native::RawCaller<'_>, EnergyError>,
                       e: usize|
             -> Result<Vec<f64>, EnergyError> {
                let call = call.as_mut().map_err(|err| err.clone())?;
                let mut args = vec![0.0; nargs];
                self.gather_plain(t, &verts, &dofs, x, e, &mut args);
                let mut res = vec![0.0; m];
                if let Err(err) = call.call_f64(&args, &mut res) {
                    return Err(rt(e, err, call.error_site()));
                }
                Ok(res)
            };
            match &self.pool {
                Some(pool) => {
                    pool.install(|| (0..n).into_par_iter().map_init(new_call, one).collect())
                }
                None => {
                    let mut c = new_call();
                    (0..n).map(|e| one(&mut c, e)).collect()
                }
            }
        };
        let mut flat = Vec::with_capacity(n * m);
        for o in outs {
            flat.extend(o?);
        }
        Ok(flat)
    }

    /// The kernel arguments of element `e` of a fixed-stencil term: its local
    /// dofs, then its data and params.
    fn gather_plain(
        &self,
        t: &crate::energy::kernels::TermKernels,
        verts: &ElementList,
        dofs: &ElementList,
        x: &[f64],
        e: usize,
        args: &mut [f64],
    ) {
        for (a, &d) in dofs.get(e).iter().enumerate() {
            args[a] = x[d as usize];
        }
        let at = t.k.max(1);
        self.gather_others(&t.others, e, verts.get(e), args, at);
    }
}

impl MeshEnergy<'_> {
    /// The vertex positions held by the `vertex` field `name` (a dof read from
    /// `x`, or a state): its first (up to 3) components, zero-padded.
    pub fn field_positions(&self, x: &[f64], name: &str) -> Result<Vec<[f64; 3]>, EnergyError> {
        let decls = &self.prog.decls;
        let (vals, slots): (&[f64], usize) =
            if let Some(f) = decls.dofs.iter().position(|d| d.name == name) {
                if decls.dofs[f].stencil != StencilKind::Vertex {
                    return Err(EnergyError::Host(format!(
                        "dof `{name}` does not live on vertices (it is a {} field)",
                        decls.dofs[f].stencil.name()
                    )));
                }
                let slots = type_slots(&decls.dofs[f].ty).unwrap_or(1);
                let off = self.dof_offsets[f];
                (&x[off..off + slots * self.num_vertices()], slots)
            } else if let Some(s) = decls
                .states
                .iter()
                .find(|s| decls.data[s.data].name == name)
            {
                let d = &decls.data[s.data];
                if d.stencil != StencilKind::Vertex {
                    return Err(EnergyError::Host(format!(
                        "state `{name}` does not live on vertices"
                    )));
                }
                (
                    self.data[s.data].as_deref().unwrap_or(&[]),
                    type_slots(&d.ty).unwrap_or(1),
                )
            } else {
                return Err(EnergyError::Host(format!(
                    "no dof or state named `{name}` to write as positions"
                )));
            };
        Ok((0..self.num_vertices())
            .map(|i| {
                let mut p = [0.0; 3];
                for (c, pc) in p.iter_mut().enumerate().take(slots.min(3)) {
                    *pc = vals[slots * i + c];
                }
                p
            })
            .collect())
    }
}
