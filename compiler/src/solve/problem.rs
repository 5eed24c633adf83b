//! The problem a solve starts from: the mesh loaded and bound (renumbered for locality where
//! that pays), then threads, data, pairs, params and initial values applied, and the
//! objective built at the start.

use super::inputs::{load_mesh, set_data_and_pairs, warn_empty_terms};
use super::output::Frame;
use super::settings::Settings;
use crate::energy::{EnergyProgram, MeshObjective};
use mad_runtime::mesh::Mesh;

/// The objective, the start and the mesh of a solve.
pub struct Problem<'p> {
    /// The bound energy as the solvers' objective.
    pub objective: MeshObjective<'p>,
    /// The dofs: where the solve starts, and, after it, where it ended.
    pub x: Vec<f64>,
    /// The input mesh, in the file's vertex numbering.
    pub mesh: Mesh,
}

impl<'p> Problem<'p> {
    /// Binds `s.mesh` and applies the settings' threads, data, pairs, params and initial
    /// values; warnings (about the mesh, terms without elements, pair terms without pairs, a
    /// program without dofs) go to `warn`. Large meshes whose file numbering is scattered are
    /// bound renumbered for locality ([`EnergyProgram::bind_local`]) unless data or pairs
    /// are given (their arrays are in the file's numbering); ids, initializer files and the
    /// written meshes use the file's numbering all the same.
    pub fn new(
        prog: &'p EnergyProgram,
        s: &Settings,
        warn: &mut dyn FnMut(&str),
    ) -> Result<Problem<'p>, String> {
        let mesh = load_mesh(&s.mesh, warn).map_err(|e| {
            if s.mesh_from_flag { e } else { format!("the solve block's `mesh = \"{}\"`: {e}", s.mesh) }
        })?;
        // Renumbered for locality where that pays; results are written in the file's numbering.
        // Arrays given by `--data` or `--pairs` are in the file's numbering: no renumbering then.
        let given_arrays = !s.data.is_empty() || s.pairs.is_some();
        let mut me = if given_arrays { prog.bind(&mesh) } else { prog.bind_local(&mesh) }
            .map_err(|e| e.to_string())?;
        warn_empty_terms(&s.mesh, &me, warn);
        me.set_threads(s.threads).map_err(|e| e.to_string())?;
        let broadphase = prog.decls().broadphase.is_some();
        if s.pairs.is_some() && broadphase {
            return Err("--pairs: the file's `broadphase` declaration finds the pairs itself".into());
        }
        set_data_and_pairs(&mut me, &s.data, s.pairs.as_deref())?;
        if me.pair_arity() > 0 && !broadphase && s.pairs.is_none() {
            warn(
                "the `pair` terms have no pairs (no `broadphase` declaration and no \
                 --pairs): they add nothing",
            );
        }
        for (k, v) in &s.set {
            me.set_param(k, *v).map_err(|e| e.to_string())?;
        }
        for (k, v) in &s.init {
            me.set_init(k, v.clone())
                .map_err(|e| format!("--init {k}: {e}"))?;
        }
        let x = me.initial_x().map_err(|e| e.to_string())?;
        if x.is_empty() {
            warn("this program declares no `dof`: there is nothing to solve (the energy is evaluated once)");
        }
        let objective = MeshObjective::new(me, &x).map_err(|e| e.to_string())?;
        Ok(Problem { objective, x, mesh })
    }

    /// The current dofs, with what writing them as a mesh needs.
    pub fn frame(&self) -> Frame<'_> {
        Frame {
            energy: self.objective.energy(),
            mesh: &self.mesh,
            x: &self.x,
        }
    }
}
