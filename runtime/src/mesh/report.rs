//! Warnings about a mesh that is accepted but may be unsuitable for some energies.
//!
//! Degenerate faces are reported here, never rejected: a face with a repeated vertex, or a face
//! whose area is zero up to rounding (`|e1 × e2| <= 1e-14 · (longest edge)²`, which includes
//! collinear vertices). So are edges shared by three or more faces and repeated faces, which
//! the element lists skip or count twice.

use super::Mesh;

/// Why a face is degenerate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Degeneracy {
    /// Two of the face's three vertex indices are equal.
    RepeatedVertex,
    /// The three vertices are distinct but (nearly) collinear or coincident.
    ZeroArea,
}

/// Warnings gathered while reading or checking a mesh.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshReport {
    /// Degenerate faces: (face index, why), in face order.
    pub degenerate_faces: Vec<(usize, Degeneracy)>,
    /// How many input polygons with 4 or more vertices were fan-triangulated.
    pub triangulated_polygons: usize,
    /// The largest polygon size seen in the input (3 for a pure triangle mesh).
    pub max_polygon_size: usize,
    /// Vertices that no face references.
    pub unreferenced_vertices: usize,
    /// Edges shared by three or more faces (no diamond element runs over them).
    pub non_manifold_edges: usize,
    /// Faces with the same three vertices as an earlier face (in any order).
    pub duplicate_faces: usize,
}

impl MeshReport {
    /// Checks a mesh's faces and vertices (the polygon fields stay as given).
    pub fn check(mesh: &Mesh) -> MeshReport {
        let mut report = MeshReport {
            max_polygon_size: 3,
            ..MeshReport::default()
        };
        let mut used = vec![false; mesh.positions.len()];
        for (fi, t) in mesh.triangles.iter().enumerate() {
            for &v in t {
                used[v as usize] = true;
            }
            if t[0] == t[1] || t[1] == t[2] || t[0] == t[2] {
                report
                    .degenerate_faces
                    .push((fi, Degeneracy::RepeatedVertex));
                continue;
            }
            let [a, b, c] = t.map(|v| mesh.positions[v as usize]);
            // The edges scaled to a largest component of 1: the test is scale-invariant, and
            // at 1e200 (or 1e-170) the squared lengths would over- (under-)flow.
            let (e1, e2, e3) = (sub(b, a), sub(c, a), sub(c, b));
            let m = [e1, e2, e3].iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()));
            let unit = |e: [f64; 3]| if m > 0.0 && m.is_finite() { e.map(|x| x / m) } else { e };
            let (e1, e2, e3) = (unit(e1), unit(e2), unit(e3));
            let cr = cross(e1, e2);
            let area2 = dot(cr, cr).sqrt();
            let longest = dot(e1, e1).max(dot(e2, e2)).max(dot(e3, e3));
            if area2 <= 1e-14 * longest {
                report.degenerate_faces.push((fi, Degeneracy::ZeroArea));
            }
        }
        report.unreferenced_vertices = used.iter().filter(|u| !**u).count();
        let mut edges: std::collections::HashMap<(u32, u32), u32> =
            std::collections::HashMap::with_capacity(3 * mesh.triangles.len());
        let mut seen: std::collections::HashSet<[u32; 3]> =
            std::collections::HashSet::with_capacity(mesh.triangles.len());
        for t in &mesh.triangles {
            let mut key = *t;
            key.sort_unstable();
            if key[0] == key[1] || key[1] == key[2] {
                continue;
            }
            report.duplicate_faces += usize::from(!seen.insert(key));
            for (a, b) in [(key[0], key[1]), (key[1], key[2]), (key[0], key[2])] {
                let n = edges.entry((a, b)).or_insert(0);
                *n += 1;
                report.non_manifold_edges += usize::from(*n == 3);
            }
        }
        report
    }

    /// Human-readable warnings (empty when the mesh is clean).
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        let rep = self
            .degenerate_faces
            .iter()
            .filter(|(_, d)| *d == Degeneracy::RepeatedVertex)
            .count();
        let zero = self.degenerate_faces.len() - rep;
        if rep > 0 {
            out.push(format!("{rep} face(s) with a repeated vertex"));
        }
        if zero > 0 {
            out.push(format!("{zero} face(s) with zero or nearly zero area (their edges nearly collinear)"));
        }
        if self.triangulated_polygons > 0 {
            out.push(format!(
                "{} polygon(s) with up to {} vertices were fan-triangulated \
                 (if these are tetrahedra or other cells, the surface is not what the file meant)",
                self.triangulated_polygons, self.max_polygon_size
            ));
        }
        if self.non_manifold_edges > 0 {
            out.push(format!(
                "{} edge(s) shared by three or more faces (non-manifold: no diamond element runs \
                 over them)",
                self.non_manifold_edges
            ));
        }
        if self.duplicate_faces > 0 {
            out.push(format!(
                "{} duplicate face(s) (the same three vertices as an earlier face)",
                self.duplicate_faces
            ));
        }
        if self.unreferenced_vertices > 0 {
            out.push(format!(
                "{} vertex/vertices referenced by no face",
                self.unreferenced_vertices
            ));
        }
        out
    }
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}
fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
