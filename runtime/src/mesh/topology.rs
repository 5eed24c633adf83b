//! Incidence for the stencils: vertices, edges, faces, diamonds, one-rings, boundary flags.
//!
//! Conventions (all deterministic, independent of hashing or thread count):
//!
//! - **Faces** are the mesh's triangles in file order, degenerate ones included. A face is
//!   *proper* when its three vertices are distinct; only proper faces count as incident to edges
//!   and vertices below.
//! - **Edges** are the unique undirected vertex pairs of all faces (pairs of distinct vertices
//!   only), each stored as `[min, max]` and numbered in lexicographic order of `(min, max)`.
//! - An edge with exactly one incident proper face is a **boundary** edge; with exactly two it is
//!   **interior**; with three or more it is **non-manifold**; an edge only degenerate faces touch
//!   has none. A vertex is a boundary vertex when it is an endpoint of a boundary edge.
//! - **Diamonds**: one per interior edge, in edge order, `[v0, v1, v2, v3]` with `v0 < v1` the
//!   edge, `v2` the vertex opposite the edge in the face where the edge runs `v0 → v1` in the
//!   face's cyclic order, `v3` the vertex opposite in the other face. With consistently oriented
//!   faces this makes `(v0, v1, v2)` and `(v1, v0, v3)` oriented like their faces. When both faces
//!   run the same way (inconsistent orientation), `v2` comes from the lower-numbered face.
//!   Boundary and non-manifold edges have no diamond. [`Topology::diamond_edge`] maps a diamond
//!   to its edge.
//! - **Rings**: one per vertex (vertex order), `[v, n0, n1, …]` with the neighbours `n*` being
//!   the vertices sharing an edge with v. When v's proper faces form a single fan (a manifold
//!   vertex, consistently oriented) whose vertices are all of v's edge neighbours, the neighbours
//!   are in the faces' cyclic order (counter-clockwise for counter-clockwise faces: for a face
//!   `(v, a, b)`, b follows a), starting at the boundary neighbour that begins the fan for a
//!   boundary vertex and at the smallest neighbour for an interior one; [`Topology::ring_ordered`]
//!   is then true. Faces around the vertex written both ways still form its fan: it runs in the
//!   direction most of them take (on a tie, that of the face in which v is followed by its
//!   smallest neighbour). Otherwise (non-manifold, or
//!   neighbours reached only through degenerate faces) the neighbours are in increasing order
//!   and the flag is false.
//!   An unreferenced vertex has an empty ring.

use super::{Mesh, MeshError};
use crate::sparse::ElementList;

/// The kinds of mesh element a term can range over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stencil {
    Vertex,
    Edge,
    Face,
    Diamond,
    Ring,
}

impl Stencil {
    /// The stencil named in the language (`vertex`, `edge`, `face`, `diamond`, `ring`).
    pub fn from_name(name: &str) -> Option<Stencil> {
        Some(match name {
            "vertex" => Stencil::Vertex,
            "edge" => Stencil::Edge,
            "face" => Stencil::Face,
            "diamond" => Stencil::Diamond,
            "ring" => Stencil::Ring,
            _ => return None,
        })
    }

    /// The number of vertices per element, or `None` for the ring.
    pub fn arity(self) -> Option<usize> {
        match self {
            Stencil::Vertex => Some(1),
            Stencil::Edge => Some(2),
            Stencil::Face => Some(3),
            Stencil::Diamond => Some(4),
            Stencil::Ring => None,
        }
    }
}

/// Sentinel in [`Topology::face_edges`] for the "edge" between a repeated vertex and itself.
pub const NO_EDGE: u32 = u32::MAX;

/// The incidence of a mesh (see the module docs for the conventions).
#[derive(Clone, Debug)]
pub struct Topology {
    pub num_vertices: usize,
    pub faces: Vec<[u32; 3]>,
    /// Unique edges `[min, max]`, sorted lexicographically (by the ids of the numbering it
    /// was built in, for a [`Topology::renamed`] one).
    pub edges: Vec<[u32; 2]>,
    /// Per face, the edges `(t0,t1)`, `(t1,t2)`, `(t2,t0)` ([`NO_EDGE`] for a repeated vertex).
    pub face_edges: Vec<[u32; 3]>,
    /// Per edge, its incident proper faces in increasing order: `edge_faces[edge_face_offsets[e]..edge_face_offsets[e+1]]`.
    pub edge_face_offsets: Vec<usize>,
    pub edge_faces: Vec<u32>,
    /// One diamond per interior edge, in edge order.
    pub diamonds: Vec<[u32; 4]>,
    /// The edge of each diamond.
    pub diamond_edge: Vec<u32>,
    /// Ring neighbours of vertex v: `ring_neighbors[ring_offsets[v]..ring_offsets[v+1]]`.
    pub ring_offsets: Vec<usize>,
    pub ring_neighbors: Vec<u32>,
    /// Whether vertex v's neighbours are in cyclic fan order.
    pub ring_ordered: Vec<bool>,
    pub vertex_boundary: Vec<bool>,
    pub edge_boundary: Vec<bool>,
    /// Per vertex, the id the conventions above compare (the vertex's own id, or its id
    /// in the numbering a [`Topology::renamed`] topology was built in); `None`: its own.
    order_key: Option<Vec<u32>>,
}

impl Topology {
    /// Computes the incidence of a mesh; an index out of range is an error (meshes from the
    /// readers and generators never have one).
    pub fn new(mesh: &Mesh) -> Result<Topology, MeshError> {
        let nv = mesh.positions.len();
        if nv > u32::MAX as usize {
            return Err(MeshError::Invalid {
                message: "more than 2^32 - 1 vertices".into(),
            });
        }
        if let Some((fi, t)) = mesh
            .triangles
            .iter()
            .enumerate()
            .find(|(_, t)| t.iter().any(|&v| v as usize >= nv))
        {
            return Err(MeshError::Invalid {
                message: format!("face {fi} {t:?} references a vertex beyond the {nv} vertices"),
            });
        }
        let faces = mesh.triangles.clone();
        let proper = |t: &[u32; 3]| t[0] != t[1] && t[1] != t[2] && t[0] != t[2];

        // Edges: sorted unique pairs.
        let mut edges: Vec<[u32; 2]> = Vec::with_capacity(faces.len() * 3);
        for t in &faces {
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                if a != b {
                    edges.push([a.min(b), a.max(b)]);
                }
            }
        }
        edges.sort_unstable();
        edges.dedup();
        // Edges grouped by their min vertex, for lookups.
        let mut by_min = vec![0usize; nv + 1];
        for e in &edges {
            by_min[e[0] as usize + 1] += 1;
        }
        for v in 0..nv {
            by_min[v + 1] += by_min[v];
        }
        let edge_index = |a: u32, b: u32| -> u32 {
            let (lo, hi) = (a.min(b), a.max(b));
            let row = &edges[by_min[lo as usize]..by_min[lo as usize + 1]];
            let k = row
                .binary_search(&[lo, hi])
                .expect("edge of a face is in the edge list");
            (by_min[lo as usize] + k) as u32
        };
        let face_edges: Vec<[u32; 3]> = faces
            .iter()
            .map(|t| {
                std::array::from_fn(|k| {
                    let (a, b) = (t[k], t[(k + 1) % 3]);
                    if a == b { NO_EDGE } else { edge_index(a, b) }
                })
            })
            .collect();

        // Edge → proper faces.
        let mut edge_face_offsets = vec![0usize; edges.len() + 1];
        for (t, fe) in faces.iter().zip(&face_edges) {
            if proper(t) {
                for &e in fe {
                    edge_face_offsets[e as usize + 1] += 1;
                }
            }
        }
        for e in 0..edges.len() {
            edge_face_offsets[e + 1] += edge_face_offsets[e];
        }
        let mut fill = edge_face_offsets.clone();
        let mut edge_faces = vec![0u32; edge_face_offsets[edges.len()]];
        for (f, (t, fe)) in faces.iter().zip(&face_edges).enumerate() {
            if proper(t) {
                for &e in fe {
                    edge_faces[fill[e as usize]] = f as u32;
                    fill[e as usize] += 1;
                }
            }
        }

        // Boundary flags and diamonds.
        let mut edge_boundary = vec![false; edges.len()];
        let mut vertex_boundary = vec![false; nv];
        let mut diamonds = Vec::new();
        let mut diamond_edge = Vec::new();
        for (e, &[a, b]) in edges.iter().enumerate() {
            let inc = &edge_faces[edge_face_offsets[e]..edge_face_offsets[e + 1]];
            match inc.len() {
                1 => {
                    edge_boundary[e] = true;
                    vertex_boundary[a as usize] = true;
                    vertex_boundary[b as usize] = true;
                }
                2 => {
                    let (f0, f1) = (&faces[inc[0] as usize], &faces[inc[1] as usize]);
                    let (first, second) = if runs(f0, a, b) || !runs(f1, a, b) {
                        (f0, f1)
                    } else {
                        (f1, f0)
                    };
                    diamonds.push([a, b, opposite(first, a, b), opposite(second, a, b)]);
                    diamond_edge.push(e as u32);
                }
                _ => {}
            }
        }

        // Rings.
        let (ring_offsets, ring_neighbors, ring_ordered) = rings(nv, &faces, &edges);

        Ok(Topology {
            num_vertices: nv,
            faces,
            edges,
            face_edges,
            edge_face_offsets,
            edge_faces,
            diamonds,
            diamond_edge,
            ring_offsets,
            ring_neighbors,
            ring_ordered,
            vertex_boundary,
            edge_boundary,
            order_key: None,
        })
    }

    /// This topology with its vertices renamed, vertex `u` becoming `new_id[u]`
    /// (`original_id` the inverse permutation): the same elements in the same order, each
    /// with its vertices in the same roles, so `[v0, v1]` of an edge, a diamond's corners and
    /// a ring's start are those of this topology, renamed. The conventions of the module
    /// docs then hold for the ids this topology compared (`v0 < v1` in those), not
    /// necessarily for the new ones: a mesh renumbered for locality keeps the elements of
    /// the file's numbering ([`super::renumber`]).
    ///
    /// # Panics
    /// If the two arrays are not inverse permutations of the vertices (a programming error).
    pub fn renamed(&self, new_id: &[u32], original_id: &[u32]) -> Topology {
        let nv = self.num_vertices;
        assert!(new_id.len() == nv && original_id.len() == nv, "one id per vertex");
        let to_new = |v: &u32| new_id[*v as usize];
        let mut ring_offsets = Vec::with_capacity(nv + 1);
        let mut ring_neighbors = Vec::with_capacity(self.ring_neighbors.len());
        ring_offsets.push(0);
        for &u in original_id {
            ring_neighbors.extend(self.ring(u as usize).iter().map(to_new));
            ring_offsets.push(ring_neighbors.len());
        }
        let per_vertex = |flags: &[bool]| original_id.iter().map(|&u| flags[u as usize]).collect();
        let key = |u: u32| self.order_key.as_ref().map_or(u, |k| k[u as usize]);
        Topology {
            num_vertices: nv,
            faces: self.faces.iter().map(|t| t.map(|v| to_new(&v))).collect(),
            edges: self.edges.iter().map(|e| e.map(|v| to_new(&v))).collect(),
            face_edges: self.face_edges.clone(),
            edge_face_offsets: self.edge_face_offsets.clone(),
            edge_faces: self.edge_faces.clone(),
            diamonds: self.diamonds.iter().map(|d| d.map(|v| to_new(&v))).collect(),
            diamond_edge: self.diamond_edge.clone(),
            ring_offsets,
            ring_neighbors,
            ring_ordered: per_vertex(&self.ring_ordered),
            vertex_boundary: per_vertex(&self.vertex_boundary),
            edge_boundary: self.edge_boundary.clone(),
            order_key: Some(original_id.iter().map(|&u| key(u)).collect()),
        }
    }

    /// The number of elements of a stencil.
    pub fn num_elements(&self, s: Stencil) -> usize {
        match s {
            Stencil::Vertex | Stencil::Ring => self.num_vertices,
            Stencil::Edge => self.edges.len(),
            Stencil::Face => self.faces.len(),
            Stencil::Diamond => self.diamonds.len(),
        }
    }

    /// Each element's vertices, in the stencil's order (a ring element is `[v, neighbours…]`).
    pub fn elements(&self, s: Stencil) -> ElementList {
        match s {
            Stencil::Vertex => ElementList::fixed(1, (0..self.num_vertices as u32).collect()),
            Stencil::Edge => ElementList::fixed(2, self.edges.iter().flatten().copied().collect()),
            Stencil::Face => ElementList::fixed(3, self.faces.iter().flatten().copied().collect()),
            Stencil::Diamond => {
                ElementList::fixed(4, self.diamonds.iter().flatten().copied().collect())
            }
            Stencil::Ring => {
                let mut offsets = Vec::with_capacity(self.num_vertices + 1);
                let mut idx = Vec::with_capacity(self.num_vertices + self.ring_neighbors.len());
                offsets.push(0);
                for v in 0..self.num_vertices {
                    idx.push(v as u32);
                    idx.extend_from_slice(self.ring(v));
                    offsets.push(idx.len());
                }
                ElementList::ragged(offsets, idx)
            }
        }
    }

    /// The one-ring neighbours of vertex v.
    pub fn ring(&self, v: usize) -> &[u32] {
        &self.ring_neighbors[self.ring_offsets[v]..self.ring_offsets[v + 1]]
    }

    /// The proper faces incident to edge e.
    pub fn faces_of_edge(&self, e: usize) -> &[u32] {
        &self.edge_faces[self.edge_face_offsets[e]..self.edge_face_offsets[e + 1]]
    }

    /// The two faces of diamond `d`: `[f0, f1]` with `f0` the face holding `v2` (the edge runs
    /// `v0 → v1` in it, or the lower-numbered face when both run the same way) and `f1` the face
    /// holding `v3`, by the rule that orders the diamond's vertices.
    pub fn diamond_faces(&self, d: usize) -> [u32; 2] {
        let [a, b, _, _] = self.diamonds[d];
        let inc = self.faces_of_edge(self.diamond_edge[d] as usize);
        let (f0, f1) = (inc[0], inc[1]);
        if runs(&self.faces[f0 as usize], a, b) || !runs(&self.faces[f1 as usize], a, b) {
            [f0, f1]
        } else {
            [f1, f0]
        }
    }

    /// The index of edge (a, b) in either order, if it exists.
    pub fn edge_index(&self, a: u32, b: u32) -> Option<usize> {
        let nv = self.num_vertices as u32;
        if a >= nv || b >= nv {
            return None;
        }
        let key = |v: u32| self.order_key.as_ref().map_or(v, |k| k[v as usize]);
        let (ka, kb) = (key(a), key(b));
        let want = (ka.min(kb), ka.max(kb));
        self.edges
            .binary_search_by(|e| (key(e[0]), key(e[1])).cmp(&want))
            .ok()
    }

    /// V − E + F over all vertices, edges and faces.
    pub fn euler_characteristic(&self) -> i64 {
        self.num_vertices as i64 - self.edges.len() as i64 + self.faces.len() as i64
    }

    /// Edges with three or more incident proper faces.
    pub fn non_manifold_edges(&self) -> usize {
        (0..self.edges.len())
            .filter(|&e| self.faces_of_edge(e).len() >= 3)
            .count()
    }
}

/// Whether the face's cyclic order contains a → b.
fn runs(t: &[u32; 3], a: u32, b: u32) -> bool {
    (0..3).any(|k| t[k] == a && t[(k + 1) % 3] == b)
}

/// The vertex of a proper face that is neither a nor b.
fn opposite(t: &[u32; 3], a: u32, b: u32) -> u32 {
    *t.iter()
        .find(|&&v| v != a && v != b)
        .expect("a proper face has a third vertex")
}

fn rings(nv: usize, faces: &[[u32; 3]], edges: &[[u32; 2]]) -> (Vec<usize>, Vec<u32>, Vec<bool>) {
    // Edge neighbours (sorted, since edges are sorted and we fill both directions in order).
    let mut offsets = vec![0usize; nv + 1];
    for &[a, b] in edges {
        offsets[a as usize + 1] += 1;
        offsets[b as usize + 1] += 1;
    }
    for v in 0..nv {
        offsets[v + 1] += offsets[v];
    }
    let mut fill = offsets.clone();
    let mut nbrs = vec![0u32; offsets[nv]];
    for &[a, b] in edges {
        nbrs[fill[a as usize]] = b;
        fill[a as usize] += 1;
        nbrs[fill[b as usize]] = a;
        fill[b as usize] += 1;
    }
    for v in 0..nv {
        nbrs[offsets[v]..offsets[v + 1]].sort_unstable();
    }
    // Vertex → (a, b) corner pairs of its proper faces (face (v, a, b) in cyclic order).
    let mut corner_off = vec![0usize; nv + 1];
    for t in faces
        .iter()
        .filter(|t| t[0] != t[1] && t[1] != t[2] && t[0] != t[2])
    {
        for &v in t {
            corner_off[v as usize + 1] += 1;
        }
    }
    for v in 0..nv {
        corner_off[v + 1] += corner_off[v];
    }
    let mut cfill = corner_off.clone();
    let mut corners = vec![(0u32, 0u32); corner_off[nv]];
    for t in faces
        .iter()
        .filter(|t| t[0] != t[1] && t[1] != t[2] && t[0] != t[2])
    {
        for k in 0..3 {
            let v = t[k] as usize;
            corners[cfill[v]] = (t[(k + 1) % 3], t[(k + 2) % 3]);
            cfill[v] += 1;
        }
    }
    let mut ordered = vec![false; nv];
    let mut seq = Vec::new();
    for v in 0..nv {
        let cs = &mut corners[corner_off[v]..corner_off[v + 1]];
        let nb = &mut nbrs[offsets[v]..offsets[v + 1]];
        let mut found = cyclic_order(cs, nb.len(), &mut seq);
        if !found && let Some(mut oriented) = reoriented(cs) {
            // Faces around v written both ways: the fan in the direction most take.
            found = cyclic_order(&mut oriented, nb.len(), &mut seq);
        }
        if found {
            let mut check = seq.clone();
            check.sort_unstable();
            if check == nb {
                nb.copy_from_slice(&seq);
                ordered[v] = true;
            }
        }
    }
    (offsets, nbrs, ordered)
}

/// The corners of a fan whose faces are not all oriented alike, turned to one direction:
/// the link (each corner an undirected edge between two neighbours) must be one path or one
/// cycle; its direction is the one most corners take (on a tie, the first corner's: the
/// corners come sorted, so the face in which the vertex is followed by its smallest
/// neighbour). `None`
/// when the link is not a single path or cycle (a non-manifold vertex).
fn reoriented(corners: &[(u32, u32)]) -> Option<Vec<(u32, u32)>> {
    use std::collections::HashMap;
    let mut adj: HashMap<u32, Vec<u32>> = HashMap::new();
    for &(a, b) in corners {
        adj.entry(a).or_default().push(b);
        adj.entry(b).or_default().push(a);
    }
    if adj.values().any(|n| n.len() > 2) {
        return None;
    }
    // Walk from an end of the path (or from the smallest vertex of a cycle).
    let ends: Vec<u32> = adj.iter().filter(|(_, n)| n.len() == 1).map(|(&v, _)| v).collect();
    let start = match ends.len() {
        0 => *adj.keys().min()?,
        2 => *ends.iter().min()?,
        _ => return None,
    };
    let mut walk = vec![start];
    let (mut prev, mut cur) = (None, start);
    // The smaller of the two ways at a cycle's start; the direction is decided below.
    while let Some(n) = adj[&cur].iter().copied().filter(|&n| Some(n) != prev).min() {
        if n == start {
            break;
        }
        if walk.contains(&n) || walk.len() > corners.len() {
            return None;
        }
        walk.push(n);
        (prev, cur) = (Some(cur), n);
    }
    let steps: Vec<(u32, u32)> = match ends.len() {
        0 => (0..walk.len()).map(|i| (walk[i], walk[(i + 1) % walk.len()])).collect(),
        _ => walk.windows(2).map(|w| (w[0], w[1])).collect(),
    };
    if steps.len() != corners.len() {
        return None;
    }
    let forward = |c: &(u32, u32)| steps.contains(c);
    let along = corners.iter().filter(|c| forward(c)).count();
    let against = corners.len() - along;
    let keep = along > against || (along == against && forward(&corners[0]));
    Some(if keep { steps } else { steps.iter().map(|&(a, b)| (b, a)).collect() })
}

/// Orders a vertex's fan; `corners` are its faces' (next, previous) vertex pairs. Returns false
/// when the faces do not form a single fan covering `valence` neighbours.
fn cyclic_order(corners: &mut [(u32, u32)], valence: usize, seq: &mut Vec<u32>) -> bool {
    seq.clear();
    if corners.is_empty() {
        return false;
    }
    corners.sort_unstable();
    if corners.windows(2).any(|w| w[0].0 == w[1].0) {
        return false;
    }
    let mut bs: Vec<u32> = corners.iter().map(|c| c.1).collect();
    bs.sort_unstable();
    if bs.windows(2).any(|w| w[0] == w[1]) {
        return false;
    }
    let starts: Vec<u32> = corners
        .iter()
        .map(|c| c.0)
        .filter(|a| bs.binary_search(a).is_err())
        .collect();
    let next = |a: u32| {
        corners
            .binary_search_by_key(&a, |c| c.0)
            .ok()
            .map(|i| corners[i].1)
    };
    match starts.len() {
        0 => {
            // Closed fan: start at the smallest neighbour, walk until back.
            let start = corners[0].0;
            let mut cur = start;
            loop {
                seq.push(cur);
                let Some(n) = next(cur) else { return false };
                if n == start {
                    break;
                }
                if seq.len() > corners.len() {
                    return false;
                }
                cur = n;
            }
            seq.len() == corners.len() && seq.len() == valence
        }
        1 => {
            let mut cur = starts[0];
            seq.push(cur);
            while let Some(n) = next(cur) {
                if seq.len() > corners.len() {
                    return false;
                }
                seq.push(n);
                cur = n;
            }
            seq.len() == corners.len() + 1 && seq.len() == valence
        }
        _ => false,
    }
}
