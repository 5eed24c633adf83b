//! A locality numbering of a mesh's vertices, for evaluation over meshes whose file numbering
//! is scattered.
//!
//! Per-element evaluation reads each element's dofs and data by vertex and adds its gradient
//! and Hessian block into the rows of its vertices. The element schedule already visits
//! neighbouring elements one after another ([`crate::sparse::locality_order`]), but with a
//! scattered vertex numbering (real scans often have one: the faces of `armadillo_cut_low.obj`
//! span 13,000 vertex ids at the median) neighbouring vertices still live far apart in every
//! array and in the sparse Hessian's rows, and nearly every gather and scatter misses the
//! cache. Renumbering the vertices breadth first ([`crate::sparse::breadth_first_rank`]) puts
//! them next to each other.
//!
//! - [`VertexRenumbering::for_locality`]: the renumbering, or `None` when the mesh is small or
//!   its numbering is already local (the rule is in its docs); deterministic.
//! - [`VertexRenumbering::apply`]: the renumbered mesh (same faces in the same order, their
//!   corners renamed); [`VertexRenumbering::restore`] undoes it.
//! - [`VertexRenumbering::rows_to_new`] / [`VertexRenumbering::rows_to_original`]: per-vertex
//!   arrays (of any row length) between the two numberings; [`VertexRenumbering::new_id`] /
//!   [`VertexRenumbering::original_id`] for single ids.

use super::{Mesh, MeshError, Topology};

/// Meshes with fewer vertices keep their numbering: their arrays fit in the caches anyway.
pub const MIN_RENUMBERED_VERTICES: usize = 4096;

/// A permutation of a mesh's vertices: vertex `v` of the renumbered mesh is vertex
/// `original[v]` of the file's, and file vertex `u` is renumbered `new[u]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VertexRenumbering {
    original: Vec<u32>,
    new: Vec<u32>,
}

/// The median over the faces of the spread of their vertex ids (max − min).
fn median_face_span(triangles: &[[u32; 3]], id: impl Fn(u32) -> u32) -> u32 {
    let mut spans: Vec<u32> = triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(&id);
            a.max(b).max(c) - a.min(b).min(c)
        })
        .collect();
    if spans.is_empty() {
        return 0;
    }
    let mid = spans.len() / 2;
    *spans.select_nth_unstable(mid).1
}

impl VertexRenumbering {
    /// The breadth-first renumbering of `mesh`'s vertices when it pays: the mesh has at least
    /// [`MIN_RENUMBERED_VERTICES`] vertices and the median spread of a face's vertex ids is
    /// more than 8 times the renumbered one's. `None` otherwise (generated meshes, small or
    /// already local files); an error only for a mesh whose topology cannot be built.
    pub fn for_locality(mesh: &Mesh) -> Result<Option<VertexRenumbering>, MeshError> {
        let nv = mesh.num_vertices();
        if nv < MIN_RENUMBERED_VERTICES || nv > u32::MAX as usize {
            return Ok(None);
        }
        let topo = Topology::new(mesh)?;
        let rank = crate::sparse::breadth_first_rank(nv, |v| topo.ring(v));
        let before = median_face_span(&mesh.triangles, |v| v);
        let after = median_face_span(&mesh.triangles, |v| rank[v as usize]);
        if before <= 8 * after.max(1) {
            return Ok(None);
        }
        let mut original = vec![0u32; nv];
        for (u, &r) in rank.iter().enumerate() {
            original[r as usize] = u as u32;
        }
        Ok(Some(VertexRenumbering {
            original,
            new: rank,
        }))
    }

    /// The renumbering that maps file vertex `u` to `new[u]`.
    ///
    /// # Panics
    /// If `new` is not a permutation of `0..new.len()` (a programming error).
    pub fn from_new_ids(new: Vec<u32>) -> VertexRenumbering {
        let mut original = vec![u32::MAX; new.len()];
        for (u, &v) in new.iter().enumerate() {
            assert!(
                (v as usize) < new.len() && original[v as usize] == u32::MAX,
                "not a permutation"
            );
            original[v as usize] = u as u32;
        }
        VertexRenumbering { original, new }
    }

    /// The number of vertices.
    pub fn len(&self) -> usize {
        self.new.len()
    }

    /// Whether the mesh has no vertices.
    pub fn is_empty(&self) -> bool {
        self.new.is_empty()
    }

    /// The renumbered id of file vertex `u`.
    pub fn new_id(&self, u: usize) -> usize {
        self.new[u] as usize
    }

    /// The file id of renumbered vertex `v`.
    pub fn original_id(&self, v: usize) -> usize {
        self.original[v] as usize
    }

    /// `mesh` (in the file's numbering) renumbered: positions moved, each face's corners
    /// renamed, faces in their order.
    pub fn apply(&self, mesh: &Mesh) -> Mesh {
        Mesh {
            positions: self.rows_to_new(&mesh.positions, 1),
            triangles: mesh
                .triangles
                .iter()
                .map(|t| t.map(|u| self.new[u as usize]))
                .collect(),
        }
    }

    /// The topology of the renumbered mesh with the elements of the file's: `file` (the file
    /// mesh's topology) renamed ([`Topology::renamed`]). Edges, diamonds and rings keep
    /// their order and their vertices' roles (`e.v0` of an edge is the end with the smaller
    /// file id, a ring starts where the file's does), so a term that is not symmetric in
    /// its vertices, and every sum over elements, evaluates as on the file's numbering.
    pub fn topology(&self, file: &Topology) -> Topology {
        file.renamed(&self.new, &self.original)
    }

    /// The file's mesh from the renumbered one.
    pub fn restore(&self, mesh: &Mesh) -> Mesh {
        Mesh {
            positions: self.rows_to_original(&mesh.positions, 1),
            triangles: mesh
                .triangles
                .iter()
                .map(|t| t.map(|v| self.original[v as usize]))
                .collect(),
        }
    }

    /// A per-vertex array in the file's numbering (`row` values per vertex) in the new one.
    ///
    /// # Panics
    /// If `values` does not hold `row` values per vertex.
    pub fn rows_to_new<T: Copy>(&self, values: &[T], row: usize) -> Vec<T> {
        rows_in_order(&self.original, values, row)
    }

    /// A per-vertex array in the new numbering back in the file's.
    ///
    /// # Panics
    /// If `values` does not hold `row` values per vertex.
    pub fn rows_to_original<T: Copy>(&self, values: &[T], row: usize) -> Vec<T> {
        rows_in_order(&self.new, values, row)
    }
}

/// Row `order[i]` of `values` (`row` values each) as row i.
fn rows_in_order<T: Copy>(order: &[u32], values: &[T], row: usize) -> Vec<T> {
    assert_eq!(values.len(), row * order.len(), "one row per vertex");
    order
        .iter()
        .flat_map(|&v| {
            values[v as usize * row..(v as usize + 1) * row]
                .iter()
                .copied()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::generators;

    /// A grid whose vertex ids are shuffled by a fixed multiplicative permutation.
    fn scrambled_grid(n: usize) -> (Mesh, Vec<u32>) {
        let grid = generators::grid(n, n);
        let nv = grid.num_vertices();
        // u ↦ (u·p) mod nv with p coprime to nv.
        let p = (nv / 2 + 1..).find(|p| gcd(*p, nv) == 1).expect("coprime");
        let new: Vec<u32> = (0..nv).map(|u| (u * p % nv) as u32).collect();
        let r = VertexRenumbering::from_new_ids(new.clone());
        (r.apply(&grid), new)
    }

    fn gcd(a: usize, b: usize) -> usize {
        if b == 0 { a } else { gcd(b, a % b) }
    }

    #[test]
    fn a_scattered_mesh_is_renumbered_and_restored_exactly() {
        let (mesh, _) = scrambled_grid(80);
        let r = VertexRenumbering::for_locality(&mesh)
            .expect("topology")
            .expect("a scattered numbering is renumbered");
        let local = r.apply(&mesh);
        assert!(
            median_face_span(&local.triangles, |v| v) * 8
                < median_face_span(&mesh.triangles, |v| v)
        );
        assert_eq!(r.restore(&local), mesh);
        for u in 0..mesh.num_vertices() {
            assert_eq!(r.original_id(r.new_id(u)), u);
            assert_eq!(local.positions[r.new_id(u)], mesh.positions[u]);
        }
        let rows: Vec<f64> = (0..2 * mesh.num_vertices()).map(|i| i as f64).collect();
        assert_eq!(r.rows_to_original(&r.rows_to_new(&rows, 2), 2), rows);
    }

    #[test]
    fn local_and_small_meshes_keep_their_numbering() {
        let grid = generators::grid(80, 80);
        assert_eq!(
            VertexRenumbering::for_locality(&grid).expect("topology"),
            None
        );
        let (small, _) = scrambled_grid(20);
        assert_eq!(
            VertexRenumbering::for_locality(&small).expect("topology"),
            None
        );
    }
}
