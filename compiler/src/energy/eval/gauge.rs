//! The translation classes of a bound energy ([`TranslationClasses`]), for Newton's linear
//! solve.
//!
//! A vertex dof field is translation-invariant when every energy term that reads it reads it
//! alone and only through differences of its points: what the Hessian kernels prove to seed
//! only the vertices after the first ([`super::psd::PsdProjector::differences`]). A `pair`
//! or `ring` term, a term that also reads another field, or one that reads the field at a
//! single vertex (a gravity or anchor term) makes the field not invariant. The classes of an
//! invariant field are its components over each connected part of the mesh, the parts being
//! those of the graph whose edges join the vertices at which one element reads the field; a
//! class's pin is the dof of its lowest vertex (by the caller's ids when the binding renumbered
//! the mesh). Vertices no element reads belong to no class.

use mad_runtime::solve::TranslationClasses;

use super::bind::MeshEnergy;
use super::psd::PsdProjector;
use crate::energy::kernels::sizes::type_slots;
use crate::front::StencilKind;

/// The classes of `energy`'s invariant vertex dof fields; `None` when there are none.
pub(crate) fn translation_classes(energy: &MeshEnergy<'_>) -> Option<TranslationClasses> {
    let prog = energy.prog;
    let dofs = &prog.decls.dofs;
    let nv = energy.topo.num_vertices;
    let mut out = TranslationClasses {
        class_of: vec![TranslationClasses::NONE; energy.ndofs],
        pins: Vec::new(),
    };
    for (f, decl) in dofs.iter().enumerate() {
        if decl.stencil != StencilKind::Vertex {
            continue;
        }
        let Some(dim) = type_slots(&decl.ty) else { continue };
        let readers: Vec<usize> = (0..prog.energies.len())
            .filter(|&t| prog.energies[t].dof_fields.contains(&f))
            .collect();
        let invariant = !readers.is_empty()
            && readers.iter().all(|&t| {
                prog.decls.energies[t].stencil != StencilKind::Pair
                    && PsdProjector::of(&prog.energies[t], dofs).differences
            });
        if !invariant {
            continue;
        }
        let mut parts = UnionFind::new(nv);
        let mut read = vec![false; nv];
        for &t in &readers {
            let bound = energy.energies.get(t)?;
            let at = &prog.energies[t].dof_verts;
            for e in 0..bound.verts.len() {
                let verts = bound.verts.get(e);
                let mut first = None;
                for &p in at {
                    let Some(&v) = verts.get(p as usize) else { continue };
                    let v = v as usize;
                    if v >= nv {
                        continue;
                    }
                    read[v] = true;
                    match first {
                        None => first = Some(v),
                        Some(u) => parts.union(u, v),
                    }
                }
            }
        }
        let off = energy.dof_offsets[f];
        // Classes in order of each part's lowest vertex (the pin's), by the caller's ids: a
        // renumbered binding pins the vertices a plain one does.
        let mut class_of_root = vec![u32::MAX; nv];
        let caller_order = (0..nv).map(|u| energy.renumbering.as_ref().map_or(u, |r| r.new_id(u)));
        for v in caller_order.filter(|&v| read[v]) {
            let r = parts.find(v);
            if class_of_root[r] == u32::MAX {
                class_of_root[r] = out.pins.len() as u32;
                for c in 0..dim {
                    out.pins.push(off + dim * v + c);
                }
            }
            let base = class_of_root[r];
            for c in 0..dim {
                out.class_of[off + dim * v + c] = base + c as u32;
            }
        }
    }
    (!out.pins.is_empty()).then_some(out)
}

/// Disjoint sets of vertices, with path halving.
struct UnionFind {
    parent: Vec<usize>,
}

impl UnionFind {
    fn new(n: usize) -> UnionFind {
        UnionFind {
            parent: (0..n).collect(),
        }
    }

    fn find(&mut self, mut v: usize) -> usize {
        while self.parent[v] != v {
            self.parent[v] = self.parent[self.parent[v]];
            v = self.parent[v];
        }
        v
    }

    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            // The lower root stays: deterministic.
            let (lo, hi) = (ra.min(rb), ra.max(rb));
            self.parent[hi] = lo;
        }
    }
}
