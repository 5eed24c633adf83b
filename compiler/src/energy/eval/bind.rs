//! [`MeshEnergy`]: an [`EnergyProgram`] bound to a mesh — the dof layout, the
//! data and param values, every term's element lists and the Hessian's CSR
//! pattern (built once, here).

use mad_runtime::mesh::{Mesh, Stencil, Topology, VertexRenumbering};
use mad_runtime::sparse::{ElementList, HessianPattern};

use super::layout::{LocalField, local_fields, stencil_dofs};

use crate::energy::kernels::Source;
use crate::energy::kernels::sizes::type_slots;
use crate::energy::{EnergyError, EnergyProgram};
use crate::front::{ObjExpr, StencilKind, SurfaceType};
use crate::ir::Literal;

/// One term's elements over the mesh.
pub(crate) struct BoundTerm {
    /// Each element's vertices (stencil order).
    pub verts: ElementList,
    /// Each element's local dofs (residual terms; energy terms use the pattern's).
    pub dofs: ElementList,
    /// The mesh element at each position of the lists, when they are in a locality order
    /// (see `locality_schedule`); `None`: position = element.
    pub order: Option<Vec<u32>>,
    /// Whether the elements are vertices (`vertex` and `ring` stencils): their ids follow a
    /// renumbering of the mesh ([`MeshEnergy::reported_element`]).
    pub on_vertices: bool,
}

impl BoundTerm {
    /// The mesh element (index in the stencil's element list) at list position `e`.
    pub(crate) fn element_id(&self, e: usize) -> usize {
        self.order.as_ref().map_or(e, |o| o[e] as usize)
    }
}

/// Puts an energy term's elements in a locality order when that schedules better.
///
/// Elements are evaluated in the order of their lists, cut into contiguous chunks that
/// [`mad_runtime::sparse::Coloring`] groups into colours. On a mesh with scattered numbering
/// the file order makes every chunk touch the whole mesh: one colour per chunk (no
/// parallelism) and cache misses on every gather and scatter. The locality order
/// ([`mad_runtime::sparse::locality_order`], by a breadth-first vertex numbering) is kept
/// when its schedule needs fewer colours than the file order's; otherwise (structured meshes,
/// small meshes) the file order stays. Only energy terms over fixed stencils are reordered
/// (residual rows are numbered by element); data stored per element is read through
/// [`BoundTerm::element_id`] (element by element) or from a copy in the term's order
/// (`MeshEnergy::permuted_data`, batched loops), and error messages name the mesh element.
/// The order depends only on the mesh, so results stay bit-identical on every thread count.
fn locality_schedule(term: &mut BoundTerm, rank: &[u32], ndofs: usize) {
    use mad_runtime::sparse::{Coloring, locality_order};
    let order = locality_order(&term.verts, rank);
    if order.iter().enumerate().all(|(p, &e)| p == e as usize) {
        return;
    }
    let dofs = term.dofs.permuted(&order);
    let colours = |d: &ElementList| Coloring::greedy(d, ndofs).num_colours();
    if colours(&dofs) < colours(&term.dofs) {
        term.verts = term.verts.permuted(&order);
        term.dofs = dofs;
        term.order = Some(order);
    }
}

/// A program bound to a mesh: call [`MeshEnergy::energy`], [`MeshEnergy::gradient`],
/// [`MeshEnergy::hessian`], [`MeshEnergy::hvp`], [`MeshEnergy::jacobian`].
pub struct MeshEnergy<'p> {
    pub(crate) prog: &'p EnergyProgram,
    pub(crate) mesh: Mesh,
    pub(crate) topo: Topology,
    /// Start of each dof field in the global vector.
    pub(crate) dof_offsets: Vec<usize>,
    pub(crate) ndofs: usize,
    pub(crate) data: Vec<Option<Vec<f64>>>,
    pub(crate) params: Vec<f64>,
    /// Per param, whether it has a value (a default or one set by the host).
    pub(crate) params_given: Vec<bool>,
    pub(crate) pattern: HessianPattern,
    pub(crate) energies: Vec<BoundTerm>,
    pub(crate) residuals: Vec<BoundTerm>,
    pub(crate) pool: Option<rayon::ThreadPool>,
    /// The estimated work from which a colour runs on the pool ([`super::parallel`]).
    pub(crate) min_parallel_work: usize,
    /// The pair list and its incremental pattern (programs with `pair` terms).
    pub(crate) pairs: Option<super::pairs::PairState>,
    /// Per energy term: whether its element tables fit a batched loop
    /// (computed on first use, [`super::batched`]).
    pub(crate) batch_tables: std::sync::OnceLock<Vec<bool>>,
    /// Per energy term, its compact Hessian slot table where it has one
    /// (computed on first use, [`super::slots::compact_slots`]).
    pub(crate) compact: std::sync::OnceLock<Vec<Option<Vec<u32>>>>,
    /// Per energy term, where its batched chunks clear the outputs they touch
    /// first (computed on first use, [`super::first_touch`]).
    pub(crate) first_touch: Vec<std::sync::OnceLock<super::first_touch::FirstTouch>>,
    /// Per energy term, its compact Hessian slot table with first-store marks
    /// where exact (computed on first use, [`super::first_touch::FirstStore`]).
    pub(crate) first_store: Vec<std::sync::OnceLock<Option<super::first_touch::FirstStore>>>,
    /// The run-time error of the last computation of the static states, if it failed
    /// (reported by the next evaluation: [`MeshEnergy::refresh_static_states`]).
    pub(crate) static_error: Option<EnergyError>,
    /// Per energy term, the slots of its blocks' upper triangles (computed on first use by
    /// a projected Hessian of which only the upper triangle is read,
    /// [`super::slots::UpperSlots`]).
    pub(crate) upper_slots: Vec<std::sync::OnceLock<super::slots::UpperSlots>>,
    /// Whether terms with batched loops use them (else element by element).
    pub(crate) batched: bool,
    /// Per dof field, the initializer set by the host (else the declaration's).
    pub(crate) dof_inits: Vec<Option<crate::front::state::Init>>,
    /// The renumbering of the caller's mesh that `mesh` is ([`EnergyProgram::bind_local`]).
    pub(crate) renumbering: Option<VertexRenumbering>,
    /// Per energy term in a locality order, the data stored per element that it reads, in
    /// that order (made on first use by the batched loops, which read by position; dropped
    /// when data or a state changes).
    pub(crate) permuted_data: Vec<std::sync::OnceLock<Vec<Option<Vec<f64>>>>>,
}

/// The runtime stencil of a declared one (`pair` elements come from the host, not the topology).
pub(crate) fn runtime_stencil(s: StencilKind) -> Option<Stencil> {
    Some(match s {
        StencilKind::Vertex => Stencil::Vertex,
        StencilKind::Edge => Stencil::Edge,
        StencilKind::Face => Stencil::Face,
        StencilKind::Diamond => Stencil::Diamond,
        StencilKind::Ring => Stencil::Ring,
        StencilKind::Pair => return None,
    })
}

impl EnergyProgram {
    /// Binds the program to a mesh: lays out the dofs, builds every term's
    /// elements and the CSR pattern, and sets params to their defaults.
    pub fn bind(&self, mesh: &Mesh) -> Result<MeshEnergy<'_>, EnergyError> {
        self.bind_with(mesh.clone(), None)
    }

    /// Like [`EnergyProgram::bind`], with the mesh's vertices renumbered for locality when
    /// that pays ([`VertexRenumbering::for_locality`]: large meshes whose file numbering is
    /// scattered). The evaluations are then faster (their gathers and scatters stay in
    /// cache), and the result is bound to the renumbered mesh: vertex ids, the dof layout,
    /// fixed-dof masks, states, data set by the host and [`MeshEnergy::mesh`] are in its
    /// numbering, and [`MeshEnergy::renumbering`] maps them to and from the file's. The
    /// initializers that read the file's numbering (`tutte`, a mesh or `.npy` file) are
    /// renumbered here, and run-time errors name vertices by their file ids. `madc run`
    /// binds this way and writes its results in the file's numbering.
    pub fn bind_local(&self, mesh: &Mesh) -> Result<MeshEnergy<'_>, EnergyError> {
        match VertexRenumbering::for_locality(mesh).map_err(|e| EnergyError::Mesh(e.to_string()))? {
            Some(r) => self.bind_with(r.apply(mesh), Some(r)),
            None => self.bind(mesh),
        }
    }

    fn bind_with(
        &self,
        owned: Mesh,
        renumbering: Option<VertexRenumbering>,
    ) -> Result<MeshEnergy<'_>, EnergyError> {
        let mesh = &owned;
        let mesh_err = |e: mad_runtime::mesh::MeshError| EnergyError::Mesh(e.to_string());
        // A renumbered mesh keeps the file's elements: their order and their vertices'
        // roles (`e.v0`, a diamond's corners, a ring's start) are those of the file's ids.
        let topo = match &renumbering {
            Some(r) => r.topology(&Topology::new(&r.restore(mesh)).map_err(mesh_err)?),
            None => Topology::new(mesh).map_err(mesh_err)?,
        };
        let nv = mesh.num_vertices();
        let mut dof_offsets = Vec::new();
        let mut ndofs = 0usize;
        for d in &self.decls.dofs {
            let dim = type_slots(&d.ty)
                .ok_or_else(|| EnergyError::Host(format!("dof `{}` has type {}", d.name, d.ty)))?;
            let entities = match d.stencil {
                StencilKind::Vertex => nv,
                StencilKind::Face => topo.faces.len(),
                other => {
                    return Err(EnergyError::Unsupported {
                        term: d.name.clone(),
                        what: format!("dofs on `{}` elements", other.name()),
                    });
                }
            };
            dof_offsets.push(ndofs);
            ndofs += dim * entities;
        }
        let fields = |t: &crate::energy::kernels::TermKernels| -> Vec<LocalField> {
            local_fields(&t.dof_fields, &self.decls.dofs, &dof_offsets)
        };
        let bind_term = |t: &crate::energy::kernels::TermKernels,
                         decl: &crate::front::TermDecl|
         -> Result<BoundTerm, EnergyError> {
            let Some(s) = runtime_stencil(decl.stencil) else {
                // Pair terms: no mesh elements; their pairs live in the pair pattern.
                let empty = ElementList::fixed(t.k.max(1), Vec::new());
                return Ok(BoundTerm {
                    verts: ElementList::fixed(t.nverts.max(1), Vec::new()),
                    dofs: empty,
                    order: None,
                    on_vertices: false,
                });
            };
            let verts = topo.elements(s);
            let dofs = stencil_dofs(&topo, s, &verts, &t.dof_verts, &fields(t));
            Ok(BoundTerm {
                verts,
                dofs,
                order: None,
                on_vertices: matches!(s, Stencil::Vertex | Stencil::Ring),
            })
        };
        let mut energies = Vec::new();
        let mut rank: Option<Vec<u32>> = None;
        for (t, d) in self.energies.iter().zip(&self.decls.energies) {
            let mut b = bind_term(t, d)?;
            let fixed_stencil = !matches!(d.stencil, StencilKind::Ring | StencilKind::Pair);
            if fixed_stencil && b.verts.len() > 1 {
                // A renumbered mesh's ids are a breadth-first rank already.
                let rank = rank.get_or_insert_with(|| match &renumbering {
                    Some(_) => (0..topo.num_vertices as u32).collect(),
                    None => mad_runtime::sparse::breadth_first_rank(topo.num_vertices, |v| topo.ring(v)),
                });
                locality_schedule(&mut b, rank, ndofs);
            }
            energies.push(b);
        }
        let mut residuals = Vec::new();
        for (t, d) in self.residuals.iter().zip(&self.decls.residuals) {
            residuals.push(bind_term(t, d)?);
        }
        let lists: Vec<ElementList> = energies.iter().map(|b| b.dofs.clone()).collect();
        let pattern =
            HessianPattern::build(ndofs, &lists).map_err(|e| EnergyError::Mesh(e.to_string()))?;
        let pairs = super::pairs::PairState::new(self, &pattern.csr, &dof_offsets, nv)?;
        let params = self
            .decls
            .params
            .iter()
            .map(|p| match p.default {
                Some(Literal::F64(x)) => x,
                Some(Literal::I64(i)) => i as f64,
                _ => 0.0,
            })
            .collect();
        let params_given = self
            .decls
            .params
            .iter()
            .map(|p| p.default.is_some())
            .collect();
        let mut me = MeshEnergy {
            prog: self,
            mesh: owned,
            topo,
            dof_offsets,
            ndofs,
            data: vec![None; self.decls.data.len()],
            params,
            params_given,
            pattern,
            energies,
            residuals,
            pool: None,
            min_parallel_work: super::parallel::PARALLEL_MIN_WORK,
            pairs,
            batch_tables: Default::default(),
            compact: Default::default(),
            first_touch: (0..self.decls.energies.len())
                .map(|_| Default::default())
                .collect(),
            first_store: (0..self.decls.energies.len())
                .map(|_| Default::default())
                .collect(),
            upper_slots: (0..self.decls.energies.len())
                .map(|_| Default::default())
                .collect(),
            static_error: None,
            batched: true,
            dof_inits: self.decls.dof_inits.clone(),
            renumbering,
            permuted_data: Vec::new(),
        };
        for i in 0..self.decls.data.len() {
            me.data[i] = me.geometry_default(i);
        }
        me.init_states()?;
        me.check_dof_inits()?;
        me.refresh_static_states()?;
        Ok(me)
    }
}

impl MeshEnergy<'_> {
    /// How the bound mesh renumbers the caller's vertices: `Some` only from
    /// [`EnergyProgram::bind_local`] on a mesh it renumbered.
    pub fn renumbering(&self) -> Option<&VertexRenumbering> {
        self.renumbering.as_ref()
    }

    /// The id that messages give element `e` (a list position) of a bound term: the mesh
    /// element, a vertex by its id in the caller's numbering.
    pub(crate) fn reported_element(&self, b: &BoundTerm, e: usize) -> usize {
        let id = b.element_id(e);
        match &self.renumbering {
            Some(r) if b.on_vertices && id < r.len() => r.original_id(id),
            _ => id,
        }
    }

    /// How messages name element `e` (a list position) of a bound term: `element ID`
    /// ([`Self::reported_element`]), and for elements other than vertices their vertices in
    /// the caller's numbering, `element ID (vertices A, B, …)`. The vertices identify an edge
    /// or a diamond, whose ids are the mesh topology's own numbering (and differ between a
    /// renumbered binding and a plain one), as well as a face.
    pub(crate) fn element_label(&self, b: &BoundTerm, e: usize) -> String {
        let id = self.reported_element(b, e);
        if b.on_vertices {
            return format!("element {id}");
        }
        format!("element {id} (vertices {})", self.vertex_list(b.verts.get(e)))
    }

    /// Vertex ids in the caller's numbering, comma-separated.
    pub(crate) fn vertex_list(&self, verts: &[u32]) -> String {
        let ids: Vec<String> = verts.iter().map(|&v| self.reported_vertex(v as usize).to_string()).collect();
        ids.join(", ")
    }

    /// A vertex id in messages: the caller's.
    pub(crate) fn reported_vertex(&self, v: usize) -> usize {
        match &self.renumbering {
            Some(r) if v < r.len() => r.original_id(v),
            _ => v,
        }
    }

    /// The number of unknowns.
    pub fn ndofs(&self) -> usize {
        self.ndofs
    }

    /// The dof fields: (name, number of entities — vertices or faces —,
    /// components per entity, offset of the field's first unknown), in
    /// declaration order. A field's unknowns form an `(entities, components)`
    /// row-major block starting at its offset.
    pub fn dof_fields(&self) -> Vec<(&str, usize, usize, usize)> {
        self.prog
            .decls
            .dofs
            .iter()
            .enumerate()
            .map(|(f, d)| {
                let dim = type_slots(&d.ty).unwrap_or(1);
                let n = match d.stencil {
                    StencilKind::Face => self.topo.faces.len(),
                    _ => self.mesh.num_vertices(),
                };
                (d.name.as_str(), n, dim, self.dof_offsets[f])
            })
            .collect()
    }

    /// The mesh's vertex count.
    pub fn num_vertices(&self) -> usize {
        self.mesh.num_vertices()
    }

    /// The order in which energy term `term` evaluates its elements, when it is not the
    /// mesh's (`order[p]` is the element evaluated p-th; see the locality schedule in
    /// this module); `None` for the mesh's order or an unknown term.
    pub fn element_order(&self, term: &str) -> Option<&[u32]> {
        let i = self.prog.energies.iter().position(|t| t.name == term)?;
        self.energies[i].order.as_deref()
    }

    /// The energy and residual terms that have no element on this mesh, as (name, stencil):
    /// a `diamond` term on a mesh without interior edges, a `face` term on a mesh of points.
    /// They add nothing to the objective. `pair` terms are not listed (their elements come
    /// from the pair list at run time).
    pub fn terms_without_elements(&self) -> Vec<(&str, &'static str)> {
        let decls = &self.prog.decls;
        let energies = decls.energies.iter().zip(&self.energies);
        let residuals = decls.residuals.iter().zip(&self.residuals);
        energies
            .chain(residuals)
            .filter(|(t, b)| t.stencil != crate::front::StencilKind::Pair && b.verts.is_empty())
            .map(|(t, _)| (t.name.as_str(), t.stencil.name()))
            .collect()
    }

    /// The mesh's incidence.
    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// The Hessian's static CSR pattern (values from [`MeshEnergy::hessian`]
    /// follow it; with pair terms they continue with the pairs' overlay slots,
    /// see [`MeshEnergy::hessian_csr`]).
    pub fn pattern(&self) -> &mad_runtime::sparse::CsrPattern {
        &self.pattern.csr
    }

    /// The number of Hessian values: the static pattern's entries, then (with
    /// pair terms) the pair overlay's slots, which change as pairs come and go.
    pub fn nnz(&self) -> usize {
        match &self.pairs {
            Some(p) => p.pattern.num_values(),
            None => self.pattern.csr.nnz(),
        }
    }

    /// Hessian values (from [`MeshEnergy::hessian`]) as one CSR matrix: the
    /// static pattern merged with the pairs' entries.
    pub fn hessian_csr(
        &self,
        values: &[f64],
    ) -> Result<(mad_runtime::sparse::CsrPattern, Vec<f64>), EnergyError> {
        if values.len() != self.nnz() {
            return Err(EnergyError::Host(format!(
                "Hessian values: expected {}, found {}",
                self.nnz(),
                values.len()
            )));
        }
        match &self.pairs {
            Some(p) => p
                .pattern
                .merge_values(values)
                .map_err(|e| EnergyError::Host(e.to_string())),
            None => Ok((self.pattern.csr.clone(), values.to_vec())),
        }
    }

    /// The default unknowns: per dof field, the mesh's positions (first d
    /// components) for a vertex field of dimension ≤ 3, else zeros (face
    /// fields are zeros).
    pub fn default_x(&self) -> Vec<f64> {
        let mut x = vec![0.0; self.ndofs];
        for (f, d) in self.prog.decls.dofs.iter().enumerate() {
            let dim = type_slots(&d.ty).unwrap_or(1);
            if dim > 3 || d.stencil != StencilKind::Vertex {
                continue;
            }
            for (i, p) in self.mesh.positions.iter().enumerate() {
                for c in 0..dim {
                    x[self.dof_offsets[f] + dim * i + c] = p[c];
                }
            }
        }
        x
    }

    /// Evaluates with `threads` worker threads (1: on the calling thread; the
    /// results are the same bits for every count).
    pub fn set_threads(&mut self, threads: usize) -> Result<(), EnergyError> {
        self.pool = if threads <= 1 {
            None
        } else {
            Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .map_err(|e| EnergyError::Host(e.to_string()))?,
            )
        };
        Ok(())
    }

    /// The estimated work (elements times a weight per evaluation kind) from which a colour
    /// of the assembly schedule runs on the worker threads; smaller colours run on the
    /// calling thread, where waking the workers would cost more than they save
    /// ([`super::parallel`]; default [`PARALLEL_MIN_WORK`](super::parallel::PARALLEL_MIN_WORK)).
    /// 0 hands every colour of two or more chunks to the workers. Results are the same bits
    /// for every value.
    pub fn set_min_parallel_work(&mut self, work: usize) {
        self.min_parallel_work = work;
    }

    /// Forgets the per-term copies of data stored per element (after data or a state
    /// changed).
    pub(crate) fn forget_permuted_data(&mut self) {
        self.permuted_data = (0..self.energies.len()).map(|_| Default::default()).collect();
    }

    /// Whether energy terms run in their batched loops where they have one
    /// (the default) or element by element through per-element kernel calls.
    /// Both give the same energy, gradient and HVP bits; Hessian values agree
    /// to rounding (the batched loop mirrors the upper triangle).
    pub fn set_batched(&mut self, on: bool) {
        self.batched = on;
    }

    pub(crate) fn batched_enabled(&self) -> bool {
        self.batched
    }

    /// Sets a param (an `i64` param needs an integral value of magnitude at most 2^53, the
    /// integers an f64 holds exactly).
    pub fn set_param(&mut self, name: &str, value: f64) -> Result<(), EnergyError> {
        let (i, p) = self
            .prog
            .decls
            .params
            .iter()
            .enumerate()
            .find(|(_, p)| p.name == name)
            .ok_or_else(|| EnergyError::Host(format!("no param named `{name}`")))?;
        // Params are held as f64, which holds every integer up to 2^53 in magnitude exactly;
        // beyond, a value may already be another integer than the one written (2^53 + 1
        // reads as 2^53), so it is refused whatever form it was written in.
        const EXACT: f64 = 9_007_199_254_740_992.0;
        if p.ty == SurfaceType::I64 && !(value.fract() == 0.0 && value.abs() <= EXACT) {
            return Err(EnergyError::Host(if value.fract() == 0.0 {
                // Integral but too large: printed as the f64 it became, in exponent form, so
                // that it does not pass for the digits the user typed.
                format!(
                    "param `{name}` is an i64; {value:e} is beyond the integers it holds exactly \
                     (|n| ≤ 2^53; params are held as f64)"
                )
            } else {
                format!("param `{name}` is an i64; {value} is not an integer")
            }));
        }
        self.params[i] = value;
        self.params_given[i] = true;
        self.refresh_static_states()
    }

    /// A param's current value: `None` when there is no param of that name, or when it has
    /// neither a default nor a value set yet (evaluations then stop with an error naming it).
    pub fn param(&self, name: &str) -> Option<f64> {
        self.prog
            .decls
            .params
            .iter()
            .position(|p| p.name == name)
            .filter(|&i| self.params_given[i])
            .map(|i| self.params[i])
    }

    /// The number of values a data field takes: elements of its stencil × slots.
    pub fn data_len(&self, name: &str) -> Result<usize, EnergyError> {
        let (n, s) = self.data_dims(name)?;
        Ok(n * s)
    }

    /// (elements of its stencil, slots per element) of a data field: the `(n, d)`
    /// shape of its array.
    pub fn data_dims(&self, name: &str) -> Result<(usize, usize), EnergyError> {
        let (i, _) = self.data_field(name)?;
        self.data_shape(i)
    }

    fn data_field(&self, name: &str) -> Result<(usize, &crate::front::FieldDecl), EnergyError> {
        self.prog
            .decls
            .data
            .iter()
            .enumerate()
            .find(|(_, d)| d.name == name)
            .ok_or_else(|| EnergyError::Host(format!("no data field named `{name}`")))
    }

    /// (element count, slots per element) of data field `i`.
    pub(crate) fn data_shape(&self, i: usize) -> Result<(usize, usize), EnergyError> {
        let d = &self.prog.decls.data[i];
        let s = runtime_stencil(d.stencil).ok_or_else(|| EnergyError::Unsupported {
            term: d.name.clone(),
            what: "data on pairs".into(),
        })?;
        let slots = type_slots(&d.ty)
            .ok_or_else(|| EnergyError::Host(format!("data `{}` has type {}", d.name, d.ty)))?;
        let n = match s {
            Stencil::Ring => self.topo.num_vertices,
            s => self.topo.num_elements(s),
        };
        Ok((n, slots))
    }

    /// Whether `name` is a `state` field (a data field an `update` computes).
    pub fn is_state(&self, name: &str) -> bool {
        let d = &self.prog.decls;
        d.states.iter().any(|s| d.data[s.data].name == name)
    }

    /// Sets a data field: `(n, slots)` values row-major for the n elements of its
    /// stencil. Non-finite values are accepted (the energy decides).
    pub fn set_data(&mut self, name: &str, values: &[f64]) -> Result<(), EnergyError> {
        let (i, _) = self.data_field(name)?;
        let (n, s) = self.data_shape(i)?;
        if values.len() != n * s {
            return Err(EnergyError::Host(format!(
                "data `{name}`: expected {} values ({n} elements × {s}), found {}",
                n * s,
                values.len()
            )));
        }
        self.data[i] = Some(values.to_vec());
        self.refresh_static_states()?;
        Ok(())
    }

    /// The rest-geometry default of data field `i`, if it has one.
    fn geometry_default(&self, i: usize) -> Option<Vec<f64>> {
        let d = &self.prog.decls.data[i];
        let p = &self.mesh.positions;
        let sub = |a: [f64; 3], b: [f64; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
        let norm = |a: [f64; 3]| (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
        match (d.stencil, &d.ty) {
            (StencilKind::Vertex, SurfaceType::F64) => Some(p.iter().map(|q| q[0]).collect()),
            (StencilKind::Vertex, SurfaceType::Vec(n)) if *n <= 3 => {
                Some(p.iter().flat_map(|q| q[..*n as usize].to_vec()).collect())
            }
            (StencilKind::Edge, SurfaceType::F64) => Some(
                self.topo
                    .edges
                    .iter()
                    .map(|e| norm(sub(p[e[1] as usize], p[e[0] as usize])))
                    .collect(),
            ),
            (StencilKind::Face, SurfaceType::F64) => Some(
                self.topo
                    .faces
                    .iter()
                    .map(|f| {
                        let (a, b) = (
                            sub(p[f[1] as usize], p[f[0] as usize]),
                            sub(p[f[2] as usize], p[f[0] as usize]),
                        );
                        let c = [
                            a[1] * b[2] - a[2] * b[1],
                            a[2] * b[0] - a[0] * b[2],
                            a[0] * b[1] - a[1] * b[0],
                        ];
                        0.5 * norm(c)
                    })
                    .collect(),
            ),
            _ => None,
        }
    }

    /// Checks that every param has a value and every data field a term or an update reads
    /// has values (an update that reads unset data would leave its state at the
    /// initializer, silently).
    pub(crate) fn check_data(&self) -> Result<(), EnergyError> {
        if let Some(e) = &self.static_error {
            return Err(e.clone());
        }
        if let Some(i) = self.params_given.iter().position(|given| !given) {
            let name = &self.prog.decls.params[i].name;
            return Err(EnergyError::Host(format!(
                "param `{name}` has no default and no value: set it (`--set {name}=VALUE`; from Rust, `MeshEnergy::set_param`)"
            )));
        }
        for t in self.prog.energies.iter().chain(&self.prog.residuals).chain(&self.prog.updates) {
            let ring_data = t
                .ring
                .iter()
                .flat_map(|r| &r.inputs)
                .filter_map(|i| match i {
                    crate::energy::kernels::ring::RingInput::Data { field, .. } => Some(*field),
                    _ => None,
                });
            let fixed_data = t.others.iter().filter_map(|s| match s {
                Source::Data { field, .. } => Some(*field),
                _ => None,
            });
            for field in fixed_data.chain(ring_data) {
                let field = &field;
                if self.data[*field].is_none() {
                    let d = &self.prog.decls.data[*field];
                    return Err(EnergyError::Host(format!(
                        "data `{}` ({} -> {}) has no values: set it (`--data {}=FILE.npy`; from Rust, `MeshEnergy::set_data`)",
                        d.name,
                        d.stencil.name(),
                        d.ty,
                        d.name
                    )));
                }
            }
        }
        Ok(())
    }

    /// The weight of each energy term in the objective.
    pub fn weights(&self) -> Result<Vec<f64>, EnergyError> {
        Ok(self.weights_and_slopes(None)?.0)
    }

    /// The weights and their derivatives with respect to param `wrt` (zeros
    /// without one): the objective is a linear form in the energies whose
    /// coefficients are polynomials in the params, evaluated with dual numbers.
    pub(crate) fn weights_and_slopes(
        &self,
        wrt: Option<usize>,
    ) -> Result<(Vec<f64>, Vec<f64>), EnergyError> {
        type D = (f64, f64);
        let names: Vec<&str> = self.prog.energies.iter().map(|t| t.name.as_str()).collect();
        let n = names.len();
        let Some(obj) = &self.prog.decls.objective else {
            return Ok((vec![1.0; n], vec![0.0; n]));
        };
        let mul = |a: D, b: D| -> D { (a.0 * b.0, a.0 * b.1 + a.1 * b.0) };
        fn has_energy(e: &ObjExpr) -> bool {
            match e {
                ObjExpr::Num(_) | ObjExpr::Param(_) => false,
                ObjExpr::Energy(_) => true,
                ObjExpr::Add(a, b) | ObjExpr::Sub(a, b) | ObjExpr::Mul(a, b) => has_energy(a) || has_energy(b),
                ObjExpr::Neg(a) => has_energy(a),
            }
        }
        // A linear form: (constant, coefficient per energy), each a dual number.
        fn lin(
            me: &MeshEnergy,
            names: &[&str],
            wrt: Option<usize>,
            e: &ObjExpr,
            mul: &dyn Fn(D, D) -> D,
        ) -> Result<(D, Vec<D>), EnergyError> {
            let n = names.len();
            Ok(match e {
                ObjExpr::Num(x) => ((*x, 0.0), vec![(0.0, 0.0); n]),
                ObjExpr::Param(p) => {
                    let i = me
                        .prog
                        .decls
                        .params
                        .iter()
                        .position(|q| &q.name == p)
                        .ok_or_else(|| EnergyError::Objective(format!("no param `{p}`")))?;
                    (
                        (me.params[i], if wrt == Some(i) { 1.0 } else { 0.0 }),
                        vec![(0.0, 0.0); n],
                    )
                }
                ObjExpr::Energy(name) => {
                    let i = names
                        .iter()
                        .position(|x| x == name)
                        .ok_or_else(|| EnergyError::Objective(format!("no energy `{name}`")))?;
                    let mut c = vec![(0.0, 0.0); n];
                    c[i] = (1.0, 0.0);
                    ((0.0, 0.0), c)
                }
                ObjExpr::Add(a, b) | ObjExpr::Sub(a, b) => {
                    let (ca, va) = lin(me, names, wrt, a, mul)?;
                    let (cb, vb) = lin(me, names, wrt, b, mul)?;
                    let s = if matches!(e, ObjExpr::Sub(..)) {
                        -1.0
                    } else {
                        1.0
                    };
                    (
                        (ca.0 + s * cb.0, ca.1 + s * cb.1),
                        va.iter()
                            .zip(&vb)
                            .map(|(x, y)| (x.0 + s * y.0, x.1 + s * y.1))
                            .collect(),
                    )
                }
                ObjExpr::Neg(a) => {
                    let (c, v) = lin(me, names, wrt, a, mul)?;
                    ((-c.0, -c.1), v.iter().map(|x| (-x.0, -x.1)).collect())
                }
                ObjExpr::Mul(a, b) => {
                    let (ca, va) = lin(me, names, wrt, a, mul)?;
                    let (cb, vb) = lin(me, names, wrt, b, mul)?;
                    // Which side holds an energy, by its form (an infinite param makes
                    // `∞·0` coefficients NaN, not 0).
                    let a_const = !has_energy(a);
                    let b_const = !has_energy(b);
                    if !a_const && !b_const {
                        return Err(EnergyError::Objective(
                            "a product of two energies is not a weighted sum".into(),
                        ));
                    }
                    // An energy absent from a side stays at an exact 0 (not `∞·0`).
                    let scaled = |v: &[D], k: D| -> Vec<D> {
                        v.iter().map(|&x| if x == (0.0, 0.0) { x } else { mul(x, k) }).collect()
                    };
                    if a_const {
                        (mul(ca, cb), scaled(&vb, ca))
                    } else {
                        (mul(ca, cb), scaled(&va, cb))
                    }
                }
            })
        }
        // Whether an expression has a constant term (one without an energy), by its form:
        // `k·a` has none even where k is infinite (`∞·0` would read NaN numerically).
        fn has_constant(e: &ObjExpr) -> bool {
            match e {
                ObjExpr::Num(_) | ObjExpr::Param(_) => true,
                ObjExpr::Energy(_) => false,
                ObjExpr::Add(a, b) | ObjExpr::Sub(a, b) => has_constant(a) || has_constant(b),
                ObjExpr::Neg(a) => has_constant(a),
                ObjExpr::Mul(a, b) => has_constant(a) && has_constant(b),
            }
        }
        let (c, w) = lin(self, &names, wrt, obj, &mul)?;
        if has_constant(obj) && c.0 != 0.0 {
            return Err(EnergyError::Objective(
                "a constant term in the objective has no effect on derivatives; drop it".into(),
            ));
        }
        if let Some((name, x)) = names.iter().zip(&w).find(|(_, x)| !x.0.is_finite()) {
            return Err(EnergyError::Objective(format!(
                "the weight of energy `{name}` is {}, not a finite number (check the params it uses)",
                x.0
            )));
        }
        Ok((
            w.iter().map(|x| x.0).collect(),
            w.iter().map(|x| x.1).collect(),
        ))
    }
}
