//! Tutte embeddings: a disk-like triangle mesh mapped to the plane with its
//! boundary on the unit circle and every interior vertex at the average of its
//! neighbours (uniform graph-Laplacian weights), which has no flipped triangle
//! for a disk topology (Tutte's theorem; Floater 1997).
//!
//! - The boundary loop is found from the directed edges without a twin; with
//!   several loops the longest (by 3D arc length) is used, the others are
//!   treated as interior.
//! - Loop vertices go to `(cos θ, sin θ)` with θ proportional to arc length, in
//!   the loop's orientation (counter-clockwise for counter-clockwise faces, so
//!   triangles keep a positive signed area).
//! - The interior system `L_ff u_f = −L_fb u_b` is solved by sparse Cholesky
//!   (faer), both coordinates at once. Vertices no face uses stay at the origin.

use super::Mesh;
use faer::linalg::solvers::Solve;
use faer::sparse::linalg::solvers::{Llt, SymbolicLlt};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{MatMut, Side};
use std::collections::{BTreeSet, HashMap};

/// Why no Tutte embedding exists.
#[derive(Clone, Debug, PartialEq)]
pub struct TutteError(pub String);

impl std::fmt::Display for TutteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "tutte embedding: {}", self.0)
    }
}

impl std::error::Error for TutteError {}

/// The boundary loops of a mesh (vertex ids in the faces' orientation), from
/// the directed edges whose reverse is not an edge of any face.
pub fn boundary_loops(mesh: &Mesh) -> Vec<Vec<u32>> {
    let mut directed: BTreeSet<(u32, u32)> = BTreeSet::new();
    for t in &mesh.triangles {
        for k in 0..3 {
            directed.insert((t[k], t[(k + 1) % 3]));
        }
    }
    let mut next: HashMap<u32, u32> = HashMap::new();
    for &(a, b) in &directed {
        if a != b && !directed.contains(&(b, a)) {
            next.entry(a).or_insert(b);
        }
    }
    let mut starts: Vec<u32> = next.keys().copied().collect();
    starts.sort_unstable();
    let mut used: BTreeSet<u32> = BTreeSet::new();
    let mut loops = Vec::new();
    for s in starts {
        if used.contains(&s) {
            continue;
        }
        let mut lp = vec![s];
        used.insert(s);
        let mut cur = s;
        while let Some(&n) = next.get(&cur) {
            if n == s || used.contains(&n) {
                break;
            }
            lp.push(n);
            used.insert(n);
            cur = n;
        }
        if lp.len() >= 3 {
            loops.push(lp);
        }
    }
    loops
}

fn dist(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// The Tutte embedding of `mesh` (one `[u, v]` per vertex); an error for a mesh
/// without boundary, or with faces not connected to the boundary loop.
///
/// ```
/// let uv = mad_runtime::mesh::tutte::tutte_embedding(&mad_runtime::mesh::load_mesh("disk:3")?)?;
/// assert!(uv.iter().all(|p| p[0].hypot(p[1]) <= 1.0 + 1e-12));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn tutte_embedding(mesh: &Mesh) -> Result<Vec<[f64; 2]>, TutteError> {
    let p = &mesh.positions;
    let nv = p.len();
    let loops = boundary_loops(mesh);
    let perimeter = |lp: &Vec<u32>| -> f64 {
        (0..lp.len())
            .map(|i| dist(p[lp[i] as usize], p[lp[(i + 1) % lp.len()] as usize]))
            .sum()
    };
    let Some(lp) = loops
        .iter()
        .max_by(|a, b| perimeter(a).total_cmp(&perimeter(b)))
    else {
        return Err(TutteError("the mesh has no boundary (a closed surface cannot be mapped to a disk; cut it open first)".into()));
    };
    let total = perimeter(lp);
    if total.is_nan() || total <= 0.0 {
        return Err(TutteError("the boundary loop has zero length".into()));
    }
    let mut uv = vec![[0.0f64; 2]; nv];
    let mut on_loop = vec![false; nv];
    let mut s = 0.0;
    for i in 0..lp.len() {
        let v = lp[i] as usize;
        let th = std::f64::consts::TAU * s / total;
        uv[v] = [th.cos(), th.sin()];
        on_loop[v] = true;
        s += dist(p[v], p[lp[(i + 1) % lp.len()] as usize]);
    }
    // Uniform graph Laplacian over the mesh edges.
    let mut nbrs: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); nv];
    for t in &mesh.triangles {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            if a != b {
                nbrs[a as usize].insert(b);
                nbrs[b as usize].insert(a);
            }
        }
    }
    // Every vertex of a face must be connected to the loop, else its block is singular.
    let mut reached = on_loop.clone();
    let mut stack: Vec<usize> = lp.iter().map(|&v| v as usize).collect();
    while let Some(v) = stack.pop() {
        for &w in &nbrs[v] {
            if !reached[w as usize] {
                reached[w as usize] = true;
                stack.push(w as usize);
            }
        }
    }
    if let Some(v) = (0..nv).find(|&v| !reached[v] && !nbrs[v].is_empty()) {
        return Err(TutteError(format!(
            "vertex {v} is not connected to the boundary loop (the mesh has several components)"
        )));
    }
    let free: Vec<usize> = (0..nv)
        .filter(|&v| !on_loop[v] && !nbrs[v].is_empty())
        .collect();
    if free.is_empty() {
        return Ok(uv);
    }
    let mut index = vec![usize::MAX; nv];
    for (k, &v) in free.iter().enumerate() {
        index[v] = k;
    }
    let n = free.len();
    // Lower triangle, column by column (CSC): diagonal = degree, off-diagonal −1.
    let mut col_ptr = vec![0usize];
    let mut row_idx = Vec::new();
    let mut values = Vec::new();
    let mut rhs = vec![0.0; 2 * n];
    for (k, &v) in free.iter().enumerate() {
        row_idx.push(k);
        values.push(nbrs[v].len() as f64);
        let mut lower: Vec<usize> = Vec::new();
        for &w in &nbrs[v] {
            let w = w as usize;
            if on_loop[w] {
                rhs[k] += uv[w][0];
                rhs[n + k] += uv[w][1];
            } else if index[w] > k {
                lower.push(index[w]);
            }
        }
        lower.sort_unstable();
        for r in lower {
            row_idx.push(r);
            values.push(-1.0);
        }
        col_ptr.push(row_idx.len());
    }
    let sym = SymbolicSparseColMatRef::new_checked(n, n, &col_ptr, None, &row_idx);
    let symbolic = SymbolicLlt::try_new(sym, Side::Lower)
        .map_err(|e| TutteError(format!("symbolic factorization failed: {e:?}")))?;
    let mat = SparseColMatRef::new(sym, &values);
    let llt = Llt::try_new_with_symbolic(symbolic, mat, Side::Lower)
        .map_err(|_| TutteError("the graph Laplacian could not be factored".into()))?;
    llt.solve_in_place(MatMut::from_column_major_slice_mut(&mut rhs, n, 2));
    for (k, &v) in free.iter().enumerate() {
        uv[v] = [rhs[k], rhs[n + k]];
    }
    if uv.iter().any(|q| !q[0].is_finite() || !q[1].is_finite()) {
        return Err(TutteError("the solve gave non-finite coordinates".into()));
    }
    Ok(uv)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::generators::{disk, icosphere};

    fn signed_area(a: [f64; 2], b: [f64; 2], c: [f64; 2]) -> f64 {
        0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]))
    }

    #[test]
    fn disk_embedding_has_no_flips_and_boundary_on_circle() {
        let mut m = disk(6);
        // Distort the interior so that the embedding is not the input itself.
        for q in &mut m.positions {
            q[2] = 0.3 * (3.0 * q[0]).sin() * q[1];
        }
        let uv = tutte_embedding(&m).expect("disk");
        let loops = boundary_loops(&m);
        assert_eq!(loops.len(), 1);
        for &v in &loops[0] {
            let r = (uv[v as usize][0].powi(2) + uv[v as usize][1].powi(2)).sqrt();
            assert!((r - 1.0).abs() < 1e-12, "boundary vertex {v} at radius {r}");
        }
        let mut total = 0.0;
        for t in &m.triangles {
            let a = signed_area(uv[t[0] as usize], uv[t[1] as usize], uv[t[2] as usize]);
            assert!(a > 0.0, "flipped or degenerate triangle {t:?}: area {a}");
            total += a;
        }
        // The triangles tile the polygon of the boundary vertices (shoelace formula).
        let lp = &loops[0];
        let polygon: f64 = (0..lp.len())
            .map(|i| {
                let (a, b) = (uv[lp[i] as usize], uv[lp[(i + 1) % lp.len()] as usize]);
                0.5 * (a[0] * b[1] - a[1] * b[0])
            })
            .sum();
        assert!(
            (total - polygon).abs() < 1e-9 * polygon,
            "area {total} vs polygon {polygon}"
        );
        // Every interior vertex is the average of its neighbours.
        let loopset: BTreeSet<u32> = loops[0].iter().copied().collect();
        for v in 0..m.positions.len() as u32 {
            if loopset.contains(&v) {
                continue;
            }
            let mut nb: BTreeSet<u32> = BTreeSet::new();
            for t in &m.triangles {
                if t.contains(&v) {
                    nb.extend(t.iter().filter(|&&w| w != v));
                }
            }
            let avg = nb.iter().fold([0.0, 0.0], |s, &w| {
                [s[0] + uv[w as usize][0], s[1] + uv[w as usize][1]]
            });
            let k = nb.len() as f64;
            assert!(
                (avg[0] / k - uv[v as usize][0]).abs() < 1e-9
                    && (avg[1] / k - uv[v as usize][1]).abs() < 1e-9
            );
        }
    }

    #[test]
    fn the_longest_loop_goes_on_the_circle() {
        // An annulus: a grid with its middle face pair removed has an outer and an inner loop.
        let mut m = crate::mesh::generators::grid(4, 4);
        let centre: Vec<usize> = (0..m.triangles.len())
            .filter(|&t| {
                m.triangles[t]
                    .iter()
                    .all(|&v| [5u32, 6, 9, 10].contains(&v))
            })
            .collect();
        assert_eq!(centre.len(), 2);
        for t in centre.into_iter().rev() {
            m.triangles.remove(t);
        }
        let loops = boundary_loops(&m);
        assert_eq!(loops.len(), 2);
        let uv = tutte_embedding(&m).unwrap();
        let outer = loops.iter().max_by_key(|l| l.len()).unwrap();
        for &v in outer {
            assert!((uv[v as usize][0].hypot(uv[v as usize][1]) - 1.0).abs() < 1e-12);
        }
        for t in &m.triangles {
            assert!(signed_area(uv[t[0] as usize], uv[t[1] as usize], uv[t[2] as usize]) > 0.0);
        }
    }

    #[test]
    fn faces_apart_from_the_boundary_loop_are_an_error() {
        // A disk plus a closed icosphere: the sphere's vertices are not tied to the circle.
        let mut m = disk(2);
        let s = icosphere(0);
        let off = m.positions.len() as u32;
        m.positions
            .extend(s.positions.iter().map(|p| [p[0] + 5.0, p[1], p[2]]));
        m.triangles.extend(
            s.triangles
                .iter()
                .map(|t| [t[0] + off, t[1] + off, t[2] + off]),
        );
        let e = tutte_embedding(&m).unwrap_err();
        assert!(e.to_string().contains("not connected"), "{e}");
    }

    #[test]
    fn closed_mesh_is_an_error() {
        let e = tutte_embedding(&icosphere(1)).unwrap_err();
        assert!(e.to_string().contains("no boundary"), "{e}");
    }
}
