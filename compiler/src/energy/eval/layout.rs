//! The dof layout of a bound program: where each `dof` field lives (vertices or
//! faces) and each element's local dofs.
//!
//! Fields are laid out in declaration order; a field of dimension d on `n`
//! entities (vertices or faces) takes d·n unknowns, entity-major: global index
//! offset + d·i + c for entity i, component c.
//!
//! An element's local dof vector is field-major over the fields its term reads
//! (declaration order); within a vertex field, the element's vertices in stencil
//! order; within a face field, the element's faces ([`faces_per_element`](crate::energy::kernels::sizes::faces_per_element): a
//! `face` element is its own face, a `diamond` has `e.f0` then `e.f1`); then
//! components.

use mad_runtime::mesh::{Stencil, Topology};
use mad_runtime::sparse::{ElementList, Field, element_dofs};

use crate::front::StencilKind;
use crate::front::mesh::FieldDecl;

/// One dof field as a term's local vector sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalField {
    pub field: Field,
    /// The field lives on faces (else on vertices).
    pub on_faces: bool,
}

/// Each element's faces for a stencil that reaches faces (see [`faces_per_element`](crate::energy::kernels::sizes::faces_per_element)).
pub fn element_faces(topo: &Topology, s: Stencil) -> Option<ElementList> {
    match s {
        Stencil::Face => Some(ElementList::fixed(
            1,
            (0..topo.faces.len() as u32).collect(),
        )),
        Stencil::Diamond => Some(ElementList::fixed(
            2,
            (0..topo.diamonds.len())
                .flat_map(|d| topo.diamond_faces(d))
                .collect(),
        )),
        _ => None,
    }
}

/// Each element's local dofs (global indices) in the order of the module docs.
/// `faces` is the element → faces list; it is needed only when a field lives
/// on faces (`None` there gives an empty field, which the front end rules out).
pub fn term_dofs(
    verts: &ElementList,
    faces: Option<&ElementList>,
    fields: &[LocalField],
) -> ElementList {
    if !fields.iter().any(|f| f.on_faces) {
        let plain: Vec<Field> = fields.iter().map(|f| f.field).collect();
        return element_dofs(verts, &plain);
    }
    let nf = faces.and_then(|f| f.arity()).unwrap_or(0);
    let nv = verts.arity().unwrap_or(0);
    let k: usize = fields
        .iter()
        .map(|f| f.field.dim * if f.on_faces { nf } else { nv })
        .sum();
    if k == 0 {
        return ElementList::ragged(vec![0; verts.len() + 1], Vec::new());
    }
    let mut out = Vec::with_capacity(verts.len() * k);
    for e in 0..verts.len() {
        for f in fields {
            let ents: &[u32] = if f.on_faces {
                faces.map_or(&[], |l| l.get(e))
            } else {
                verts.get(e)
            };
            for &i in ents {
                for c in 0..f.field.dim {
                    out.push((f.field.offset + f.field.dim * i as usize + c) as u32);
                }
            }
        }
    }
    ElementList::fixed(k, out)
}

/// The local fields of a term or update that reads the dof fields `dof_fields` (indices
/// into `decls`), laid out at `offsets`.
pub fn local_fields(dof_fields: &[usize], decls: &[FieldDecl], offsets: &[usize]) -> Vec<LocalField> {
    dof_fields
        .iter()
        .map(|&f| LocalField {
            field: Field {
                offset: offsets[f],
                dim: crate::energy::kernels::sizes::type_slots(&decls[f].ty).unwrap_or(1),
            },
            on_faces: decls[f].stencil == StencilKind::Face,
        })
        .collect()
}

/// Each element's local dofs for a term or update over stencil `s` with elements `verts`
/// whose kernels read `fields` at the stencil vertices `dof_verts` (all of them when it
/// lists as many as the stencil has, or none) and at the element's faces.
pub fn stencil_dofs(
    topo: &Topology,
    s: Stencil,
    verts: &ElementList,
    dof_verts: &[u8],
    fields: &[LocalField],
) -> ElementList {
    let faces = if fields.iter().any(|f| f.on_faces) {
        element_faces(topo, s)
    } else {
        None
    };
    match verts.arity() {
        // Local dofs at a subset of the stencil's vertices (`TermKernels::dof_verts`).
        Some(a) if dof_verts.len() < a && !dof_verts.is_empty() => {
            let picked: Vec<u32> = (0..verts.len())
                .flat_map(|e| {
                    let vs = verts.get(e);
                    dof_verts.iter().map(move |&p| vs[p as usize])
                })
                .collect();
            let dverts = ElementList::fixed(dof_verts.len(), picked);
            term_dofs(&dverts, faces.as_ref(), fields)
        }
        _ => term_dofs(verts, faces.as_ref(), fields),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn face_fields_follow_vertex_fields_per_element() {
        // Two elements with 2 vertices and 1 face each: a vec2 vertex field
        // (offset 0) and an f64 face field (offset 10).
        let verts = ElementList::fixed(2, vec![0, 1, 1, 2]);
        let faces = ElementList::fixed(1, vec![3, 4]);
        let fields = [
            LocalField {
                field: Field { offset: 0, dim: 2 },
                on_faces: false,
            },
            LocalField {
                field: Field { offset: 10, dim: 1 },
                on_faces: true,
            },
        ];
        let d = term_dofs(&verts, Some(&faces), &fields);
        assert_eq!(d.get(0), &[0, 1, 2, 3, 13]);
        assert_eq!(d.get(1), &[2, 3, 4, 5, 14]);
    }
}
