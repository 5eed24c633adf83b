//! The file's `broadphase` declaration at run time: a [`Contact`] keeps the pair
//! list of a bound energy equal to the pairs within d̂ at the current unknowns.
//!
//! [`super::MeshObjective`] calls [`Contact::refresh`] before every evaluation
//! (iterates and line-search trial points alike) and [`Contact::max_step`] to cap
//! each line search's first trial step (see `mad_runtime::contact` for why both).
//! Positions are the first dof field's first three components per vertex (the
//! same positions `madc run` writes). d̂ is the declared constant, or the param's
//! value at each refresh.

use crate::energy::{EnergyError, MeshEnergy};
use crate::front::broadphase::{Distance, PairKind};
use mad_runtime::contact::{BroadPhase, ContactKind};

/// The broad phase of a bound energy and the unknowns its pair list was found at.
pub struct Contact {
    broad: BroadPhase,
    distance: Distance,
    at: Option<Vec<f64>>,
    pairs: Vec<u32>,
}

/// The fraction of each pair's current distance a step may close (see
/// `BroadPhase::max_step`): at least 10% of every gap is kept.
pub const STEP_FRACTION: f64 = 0.9;

fn host(e: impl std::fmt::Display) -> EnergyError {
    EnergyError::Host(format!("broad phase: {e}"))
}

impl Contact {
    /// The broad phase the program declares, over the energy's mesh; `None` without
    /// a `broadphase` declaration.
    pub fn from_program(me: &MeshEnergy) -> Result<Option<Contact>, EnergyError> {
        let Some(decl) = &me.prog.decls.broadphase else {
            return Ok(None);
        };
        let kinds: Vec<ContactKind> = decl
            .kinds
            .iter()
            .map(|k| match k {
                PairKind::VertexVertex => ContactKind::VertexVertex,
                PairKind::VertexFace => ContactKind::VertexFace,
                PairKind::EdgeEdge => ContactKind::EdgeEdge,
            })
            .collect();
        let mut broad =
            BroadPhase::new(me.num_vertices(), &me.mesh().triangles, &kinds).map_err(host)?;
        if let Some(r) = me.renumbering() {
            // Tuples as the file's numbering orders them (v < w, a < b, c < d and the edges'
            // order by file ids), so that a term not symmetric in its vertices evaluates as
            // on the mesh as given.
            let file_ids = (0..me.num_vertices()).map(|v| r.original_id(v) as u32).collect();
            broad = broad.with_vertex_order(file_ids).map_err(host)?;
        }
        if me.pair_arity() != broad.arity() {
            return Err(host(format!(
                "the pair terms read {} vertices per pair but `{}` pairs have {} (e.v0 … e.v{})",
                me.pair_arity(),
                decl.kinds[0].name(),
                broad.arity(),
                broad.arity() - 1
            )));
        }
        if me
            .prog
            .decls
            .dofs
            .first()
            .is_none_or(|d| d.stencil != crate::front::StencilKind::Vertex)
        {
            return Err(host(
                "the first dof field must be a vertex field (the positions)",
            ));
        }
        Ok(Some(Contact {
            broad,
            distance: decl.distance.clone(),
            at: None,
            pairs: Vec::new(),
        }))
    }

    /// d̂ now.
    pub fn dhat(&self, me: &MeshEnergy) -> Result<f64, EnergyError> {
        let d = match &self.distance {
            Distance::Value(x) => *x,
            Distance::Param(p) => me
                .param(p)
                .ok_or_else(|| host(format!("param `{p}` (the contact distance) has no value")))?,
        };
        if !(d > 0.0 && d.is_finite()) {
            return Err(host(format!("the contact distance {d} is not a positive finite number")));
        }
        Ok(d)
    }

    /// The broad phase.
    pub fn broad_phase(&self) -> &BroadPhase {
        &self.broad
    }

    /// The pairs found at the last refresh (flat tuples).
    pub fn pairs(&self) -> &[u32] {
        &self.pairs
    }

    /// Sets `me`'s pair list to the pairs within d̂ at `x` (skipped when `x` is where
    /// the list was last found). Returns whether the list changed.
    pub fn refresh(&mut self, me: &mut MeshEnergy, x: &[f64]) -> Result<bool, EnergyError> {
        if self.at.as_deref() == Some(x) {
            return Ok(false);
        }
        let pos = me
            .positions_of(x)
            .ok_or_else(|| host("the program has no dofs"))?;
        let pairs = self.broad.pairs(&pos, self.dhat(me)?).map_err(host)?;
        let changed = pairs != self.pairs;
        if changed {
            me.set_pairs(&pairs)?;
            self.pairs = pairs;
        }
        self.at = Some(x.to_vec());
        Ok(changed)
    }

    /// Forgets where the pair list was found (after the energy changed outside).
    pub fn invalidate(&mut self) {
        self.at = None;
    }

    /// The largest first trial step `≤ t0` along `d` from `x` that keeps every pair apart.
    pub fn max_step(
        &self,
        me: &MeshEnergy,
        x: &[f64],
        d: &[f64],
        t0: f64,
    ) -> Result<f64, EnergyError> {
        let pos = me
            .positions_of(x)
            .ok_or_else(|| host("the program has no dofs"))?;
        let dir = me
            .positions_of(d)
            .ok_or_else(|| host("the program has no dofs"))?;
        self.broad
            .max_step(&pos, &dir, t0, STEP_FRACTION)
            .map_err(host)
    }
}
