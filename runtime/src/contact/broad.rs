//! The contact broad phase: every pair of primitives of the listed kinds, not
//! sharing a vertex, closer than d̂ — candidates from an R*-tree (the `rstar`
//! crate) over axis-aligned boxes inflated by d̂, then filtered by the exact
//! distance ([`super::distance`]).
//!
//! Tuples (flat, [`ContactKind::arity`] ids each, sorted, without repeats):
//! - `VertexVertex` (v, w), v < w, excluding v = w and the two ends of a mesh edge;
//! - `VertexFace` (v, a, b, c), the face's vertices in mesh order, v not among them;
//! - `EdgeEdge` (a, b, c, d): edges (a, b) and (c, d) of the mesh's unique edge list
//!   (`a < b`, `c < d`), the first edge before the second, no shared vertex.
//!
//! With a vertex order ([`BroadPhase::with_vertex_order`]: a rank per vertex, such as the
//! file's numbering of a mesh renumbered for locality) "<", "sorted" and "the first edge
//! before the second" compare ranks instead of ids, so the tuples are those the mesh in the
//! ranks' numbering gets, renamed.
//!
//! [`BroadPhase::pairs_brute_force`] gives the same set by testing every pair (the
//! reference of the tests). [`BroadPhase::max_step`] is the conservative step rule
//! of [`super`].

use super::distance::{P3, point_point_sq, point_triangle_sq, segment_segment_sq};
use rstar::primitives::{GeomWithData, Rectangle};
use rstar::{AABB, RTree};

/// A kind of contact pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ContactKind {
    VertexVertex,
    VertexFace,
    EdgeEdge,
}

impl ContactKind {
    /// Vertices per tuple: 2 for `VertexVertex`, 4 otherwise.
    pub fn arity(self) -> usize {
        match self {
            ContactKind::VertexVertex => 2,
            ContactKind::VertexFace | ContactKind::EdgeEdge => 4,
        }
    }
}

/// Why a broad phase cannot be set up or run.
#[derive(Clone, Debug, PartialEq)]
pub struct ContactError(pub String);

impl std::fmt::Display for ContactError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ContactError {}

type Boxed = GeomWithData<Rectangle<P3>, u32>;

/// The primitives of a triangle mesh and the kinds of pairs to find among them.
#[derive(Clone, Debug)]
pub struct BroadPhase {
    kinds: Vec<ContactKind>,
    num_vertices: usize,
    faces: Vec<[u32; 3]>,
    edges: Vec<[u32; 2]>,
    /// The rank of each vertex that tuples are ordered by (module docs); `None`: its id.
    rank: Option<Vec<u32>>,
}

fn bbox(points: &[P3], pad: f64) -> Rectangle<P3> {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in points {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    Rectangle::from_corners(
        [lo[0] - pad, lo[1] - pad, lo[2] - pad],
        [hi[0] + pad, hi[1] + pad, hi[2] + pad],
    )
}

fn env(r: &Rectangle<P3>) -> AABB<P3> {
    AABB::from_corners(r.lower(), r.upper())
}

impl BroadPhase {
    /// A broad phase over the mesh with `num_vertices` vertices and `faces`; edges are the
    /// faces' unique edges. All `kinds` must have one tuple size.
    pub fn new(
        num_vertices: usize,
        faces: &[[u32; 3]],
        kinds: &[ContactKind],
    ) -> Result<BroadPhase, ContactError> {
        if kinds.is_empty() {
            return Err(ContactError(
                "a broad phase needs at least one pair kind".into(),
            ));
        }
        if kinds.iter().any(|k| k.arity() != kinds[0].arity()) {
            return Err(ContactError(
                "vertex_vertex pairs cannot share a list with 4-vertex pairs".into(),
            ));
        }
        if let Some(v) = faces
            .iter()
            .flatten()
            .find(|&&v| v as usize >= num_vertices)
        {
            return Err(ContactError(format!(
                "face vertex {v} is out of range ({num_vertices} vertices)"
            )));
        }
        let mut edges: Vec<[u32; 2]> = faces
            .iter()
            .flat_map(|f| [[f[0], f[1]], [f[1], f[2]], [f[2], f[0]]])
            .filter(|e| e[0] != e[1])
            .map(|e| [e[0].min(e[1]), e[0].max(e[1])])
            .collect();
        edges.sort_unstable();
        edges.dedup();
        let mut k = kinds.to_vec();
        k.dedup();
        Ok(BroadPhase {
            kinds: k,
            num_vertices,
            faces: faces.to_vec(),
            edges,
            rank: None,
        })
    }

    /// This broad phase with its tuples ordered by `rank[v]` instead of the vertex id v
    /// (module docs); `rank` must be a permutation of `0..num_vertices`.
    pub fn with_vertex_order(self, rank: Vec<u32>) -> Result<BroadPhase, ContactError> {
        let mut seen = vec![false; self.num_vertices];
        let permutation = rank.len() == self.num_vertices
            && rank
                .iter()
                .all(|&r| (r as usize) < seen.len() && !std::mem::replace(&mut seen[r as usize], true));
        if !permutation {
            return Err(ContactError(
                "a vertex order must rank every vertex once".into(),
            ));
        }
        Ok(BroadPhase {
            rank: Some(rank),
            ..self
        })
    }

    fn rank_of(&self, v: u32) -> u32 {
        self.rank.as_ref().map_or(v, |r| r[v as usize])
    }

    /// A found tuple of `kind` in the order of the ranks: the two vertices of a
    /// `VertexVertex` pair and of each `EdgeEdge` edge by rank, then the two edges by
    /// their ranks; a `VertexFace` tuple keeps the face's vertices in mesh order.
    fn ordered(&self, kind: ContactKind, mut t: Vec<u32>) -> Vec<u32> {
        if self.rank.is_none() {
            return t;
        }
        let r = |v: u32| self.rank_of(v);
        match kind {
            ContactKind::VertexVertex => {
                if r(t[0]) > r(t[1]) {
                    t.swap(0, 1);
                }
            }
            ContactKind::EdgeEdge => {
                for e in [0, 2] {
                    if r(t[e]) > r(t[e + 1]) {
                        t.swap(e, e + 1);
                    }
                }
                if (r(t[0]), r(t[1])) > (r(t[2]), r(t[3])) {
                    t.rotate_left(2);
                }
            }
            ContactKind::VertexFace => {}
        }
        t
    }

    /// The found tuples sorted (by ranks) and without repeats, flat.
    fn finish(&self, mut out: Vec<Vec<u32>>) -> Vec<u32> {
        match &self.rank {
            None => out.sort_unstable(),
            Some(rank) => out.sort_unstable_by_key(|t| t.iter().map(|&v| rank[v as usize]).collect::<Vec<u32>>()),
        }
        out.dedup();
        out.concat()
    }

    /// Vertices per tuple of the pairs this broad phase produces.
    pub fn arity(&self) -> usize {
        self.kinds[0].arity()
    }

    /// The kinds of pairs it finds.
    pub fn kinds(&self) -> &[ContactKind] {
        &self.kinds
    }

    /// The mesh's unique edges (`[a, b]`, `a < b`, sorted).
    pub fn edges(&self) -> &[[u32; 2]] {
        &self.edges
    }

    fn check(&self, positions: &[P3]) -> Result<(), ContactError> {
        if positions.len() != self.num_vertices {
            return Err(ContactError(format!(
                "{} positions for a mesh of {} vertices",
                positions.len(),
                self.num_vertices
            )));
        }
        if positions.iter().flatten().any(|v| !v.is_finite()) {
            return Err(ContactError("a vertex position is not finite".into()));
        }
        Ok(())
    }

    fn is_edge(&self, a: u32, b: u32) -> bool {
        self.edges.binary_search(&[a.min(b), a.max(b)]).is_ok()
    }

    /// Every pair closer than `dhat`, found with R*-trees.
    pub fn pairs(&self, positions: &[P3], dhat: f64) -> Result<Vec<u32>, ContactError> {
        self.check(positions)?;
        let d2 = dhat * dhat;
        let mut out: Vec<Vec<u32>> = Vec::new();
        let p = |v: u32| positions[v as usize];
        for &kind in &self.kinds {
            match kind {
                ContactKind::VertexVertex => {
                    let tree = RTree::bulk_load(
                        positions
                            .iter()
                            .enumerate()
                            .map(|(i, q)| GeomWithData::new(*q, i as u32))
                            .collect(),
                    );
                    for (v, q) in positions.iter().enumerate() {
                        let v = v as u32;
                        for w in tree.locate_within_distance(*q, d2) {
                            let w = w.data;
                            if w > v && !self.is_edge(v, w) && point_point_sq(*q, p(w)) < d2 {
                                out.push(self.ordered(kind, vec![v, w]));
                            }
                        }
                    }
                }
                ContactKind::VertexFace => {
                    let tree: RTree<Boxed> = RTree::bulk_load(
                        self.faces
                            .iter()
                            .enumerate()
                            .map(|(i, f)| {
                                GeomWithData::new(
                                    bbox(&[p(f[0]), p(f[1]), p(f[2])], dhat),
                                    i as u32,
                                )
                            })
                            .collect(),
                    );
                    for (v, q) in positions.iter().enumerate() {
                        let v = v as u32;
                        for c in tree.locate_in_envelope_intersecting(AABB::from_point(*q)) {
                            let f = self.faces[c.data as usize];
                            if !f.contains(&v)
                                && point_triangle_sq(*q, p(f[0]), p(f[1]), p(f[2])) < d2
                            {
                                out.push(vec![v, f[0], f[1], f[2]]);
                            }
                        }
                    }
                }
                ContactKind::EdgeEdge => {
                    let boxes: Vec<Rectangle<P3>> = self
                        .edges
                        .iter()
                        .map(|e| bbox(&[p(e[0]), p(e[1])], 0.5 * dhat))
                        .collect();
                    let tree: RTree<Boxed> = RTree::bulk_load(
                        boxes
                            .iter()
                            .enumerate()
                            .map(|(i, b)| GeomWithData::new(*b, i as u32))
                            .collect(),
                    );
                    for (i, b) in boxes.iter().enumerate() {
                        let e = self.edges[i];
                        for c in tree.locate_in_envelope_intersecting(env(b)) {
                            let j = c.data as usize;
                            if j <= i {
                                continue;
                            }
                            let g = self.edges[j];
                            if g.contains(&e[0]) || g.contains(&e[1]) {
                                continue;
                            }
                            if segment_segment_sq(p(e[0]), p(e[1]), p(g[0]), p(g[1])) < d2 {
                                out.push(self.ordered(kind, vec![e[0], e[1], g[0], g[1]]));
                            }
                        }
                    }
                }
            }
        }
        Ok(self.finish(out))
    }

    /// The same set as [`BroadPhase::pairs`], by testing every pair of primitives.
    pub fn pairs_brute_force(&self, positions: &[P3], dhat: f64) -> Result<Vec<u32>, ContactError> {
        self.check(positions)?;
        let d2 = dhat * dhat;
        let p = |v: u32| positions[v as usize];
        let nv = self.num_vertices as u32;
        let mut out: Vec<Vec<u32>> = Vec::new();
        for &kind in &self.kinds {
            match kind {
                ContactKind::VertexVertex => {
                    for v in 0..nv {
                        for w in v + 1..nv {
                            if !self.is_edge(v, w) && point_point_sq(p(v), p(w)) < d2 {
                                out.push(self.ordered(kind, vec![v, w]));
                            }
                        }
                    }
                }
                ContactKind::VertexFace => {
                    for v in 0..nv {
                        for f in &self.faces {
                            if !f.contains(&v)
                                && point_triangle_sq(p(v), p(f[0]), p(f[1]), p(f[2])) < d2
                            {
                                out.push(vec![v, f[0], f[1], f[2]]);
                            }
                        }
                    }
                }
                ContactKind::EdgeEdge => {
                    for (i, e) in self.edges.iter().enumerate() {
                        for g in &self.edges[i + 1..] {
                            if g.contains(&e[0]) || g.contains(&e[1]) {
                                continue;
                            }
                            if segment_segment_sq(p(e[0]), p(e[1]), p(g[0]), p(g[1])) < d2 {
                                out.push(self.ordered(kind, vec![e[0], e[1], g[0], g[1]]));
                            }
                        }
                    }
                }
            }
        }
        Ok(self.finish(out))
    }

    /// The conservative step rule: the largest `t ≤ t0` such that, moving every vertex
    /// along `direction` by up to `t`, no pair of primitives of the listed kinds that is
    /// apart now comes closer than `1 − fraction` of its current distance (so none
    /// touches or passes through another).
    ///
    /// Pairs whose swept boxes (the boxes of the primitive at the start and at `t0`)
    /// overlap are candidates. Points of the two primitives are convex combinations of
    /// their vertices, so along the step their difference — and so their distance —
    /// changes at most at the rate `l = max ‖d_i − d_j‖` (i a vertex of one, j of the
    /// other). Additive CCD: from distance `dₖ` at `tₖ`, advancing to
    /// `tₖ₊₁ = tₖ + (dₖ − (1 − fraction)·d₀) / l` cannot take the distance below
    /// `(1 − fraction)·d₀` (d₀ the distance now); the distance is measured again there,
    /// and so on (at most 30 advances per pair; each one is safe, so stopping early is
    /// too). Motion that slides a pair along itself costs little; motion that closes it
    /// stops at the floor. A pair already at distance 0 gives 0.
    pub fn max_step(
        &self,
        positions: &[P3],
        direction: &[P3],
        t0: f64,
        fraction: f64,
    ) -> Result<f64, ContactError> {
        self.check(positions)?;
        if direction.len() != positions.len() || direction.iter().flatten().any(|v| !v.is_finite())
        {
            return Err(ContactError(
                "the step direction has the wrong length or is not finite".into(),
            ));
        }
        let end: Vec<P3> = positions
            .iter()
            .zip(direction)
            .map(|(p, d)| [p[0] + t0 * d[0], p[1] + t0 * d[1], p[2] + t0 * d[2]])
            .collect();
        let swept = |vs: &[u32]| -> Rectangle<P3> {
            let pts: Vec<P3> = vs
                .iter()
                .flat_map(|&v| [positions[v as usize], end[v as usize]])
                .collect();
            bbox(&pts, 0.0)
        };
        // How fast (per unit t) any point of `a` can move relative to any point of `b`.
        let rel = |a: &[u32], b: &[u32]| {
            let mut m = 0.0f64;
            for &i in a {
                for &j in b {
                    m = m.max(point_point_sq(direction[i as usize], direction[j as usize]));
                }
            }
            m.sqrt()
        };
        let mut t = t0;
        // The distance of the pair (a, b) of `kind` when every vertex has moved by τ·d.
        let dist_at = |kind: ContactKind, a: &[u32], b: &[u32], tau: f64| {
            let q = |v: u32| {
                let (p, d) = (positions[v as usize], direction[v as usize]);
                [p[0] + tau * d[0], p[1] + tau * d[1], p[2] + tau * d[2]]
            };
            match kind {
                ContactKind::VertexVertex => point_point_sq(q(a[0]), q(b[0])),
                ContactKind::VertexFace => point_triangle_sq(q(a[0]), q(b[0]), q(b[1]), q(b[2])),
                ContactKind::EdgeEdge => segment_segment_sq(q(a[0]), q(a[1]), q(b[0]), q(b[1])),
            }
            .sqrt()
        };
        let verts: Vec<[u32; 1]> = (0..self.num_vertices as u32).map(|v| [v]).collect();
        for &kind in &self.kinds {
            let (first, second): (Vec<&[u32]>, Vec<&[u32]>) = match kind {
                ContactKind::VertexVertex => (
                    verts.iter().map(|v| &v[..]).collect(),
                    verts.iter().map(|v| &v[..]).collect(),
                ),
                ContactKind::VertexFace => (
                    verts.iter().map(|v| &v[..]).collect(),
                    self.faces.iter().map(|f| &f[..]).collect(),
                ),
                ContactKind::EdgeEdge => (
                    self.edges.iter().map(|e| &e[..]).collect(),
                    self.edges.iter().map(|e| &e[..]).collect(),
                ),
            };
            let tree: RTree<Boxed> = RTree::bulk_load(
                second
                    .iter()
                    .enumerate()
                    .map(|(i, s)| GeomWithData::new(swept(s), i as u32))
                    .collect(),
            );
            for (i, a) in first.iter().enumerate() {
                for c in tree.locate_in_envelope_intersecting(env(&swept(a))) {
                    let j = c.data as usize;
                    let b = second[j];
                    let symmetric =
                        matches!(kind, ContactKind::VertexVertex | ContactKind::EdgeEdge);
                    if (symmetric && j <= i) || a.iter().any(|v| b.contains(v)) {
                        continue;
                    }
                    if kind == ContactKind::VertexVertex && self.is_edge(a[0], b[0]) {
                        continue;
                    }
                    let d0 = dist_at(kind, a, b, 0.0);
                    if d0 == 0.0 {
                        return Ok(0.0);
                    }
                    // Additive CCD for this pair: advance by steps over which the distance
                    // cannot fall below the floor (it changes at most `speed` per unit t),
                    // re-measuring after each; stop at t or once 30 advances are spent.
                    let speed = rel(a, b);
                    let floor = (1.0 - fraction) * d0;
                    let (mut reached, mut d) = (0.0, d0);
                    for _ in 0..30 {
                        if speed == 0.0 {
                            reached = t;
                            break;
                        }
                        reached += (d - floor) / speed;
                        if reached >= t {
                            reached = t;
                            break;
                        }
                        d = dist_at(kind, a, b, reached);
                        if d <= floor {
                            break;
                        }
                    }
                    t = t.min(reached);
                }
            }
        }
        Ok(t)
    }
}
