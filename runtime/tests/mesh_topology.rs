//! Generators' counts, Euler characteristics, edges, diamonds, rings and boundaries.

use mad_runtime::mesh::generators::{disk, grid, icosphere, torus};
use mad_runtime::mesh::{Mesh, Stencil, Topology, load_mesh_with_report};
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

/// Edges computed independently: all distinct pairs of every face.
fn brute_edges(m: &Mesh) -> BTreeSet<(u32, u32)> {
    let mut s = BTreeSet::new();
    for t in &m.triangles {
        for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[0], t[2])] {
            if a != b {
                s.insert((a.min(b), a.max(b)));
            }
        }
    }
    s
}

fn signed_area_z(m: &Mesh, t: &[u32; 3]) -> f64 {
    let [a, b, c] = t.map(|v| m.positions[v as usize]);
    (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
}

#[test]
fn grid_counts_and_w1_edges() {
    for n in [2usize, 3, 10, 31] {
        let m = grid(n, n);
        let t = Topology::new(&m).unwrap();
        assert_eq!(m.positions.len(), n * n);
        assert_eq!(t.edges.len(), 2 * n * (n - 1) + (n - 1) * (n - 1));
        assert_eq!(m.triangles.len(), 2 * (n - 1) * (n - 1));
        assert_eq!(t.euler_characteristic(), 1);
        // W1's edge list, in W1's order, sorted lexicographically, equals ours.
        let mut w1 = Vec::new();
        for i in 0..n {
            for j in 0..n {
                let v = (i * n + j) as u32;
                if j + 1 < n {
                    w1.push([v, v + 1]);
                }
                if i + 1 < n {
                    w1.push([v, v + n as u32]);
                }
                if i + 1 < n && j + 1 < n {
                    w1.push([v, v + n as u32 + 1]);
                }
            }
        }
        assert_eq!(w1, t.edges, "W1 order is already lexicographic");
        let h = 1.0 / (n as f64 - 1.0);
        assert_eq!(m.positions[n + 1], [h, h, 0.0]);
        assert!(m.triangles.iter().all(|f| signed_area_z(&m, f) > 0.0));
        // Interior edges get diamonds, boundary edges do not.
        let boundary_edges = 4 * (n - 1);
        assert_eq!(t.diamonds.len(), t.edges.len() - boundary_edges);
        assert_eq!(
            t.edge_boundary.iter().filter(|b| **b).count(),
            boundary_edges
        );
        assert_eq!(
            t.vertex_boundary.iter().filter(|b| **b).count(),
            4 * (n - 1)
        );
        assert!(t.ring_ordered.iter().all(|o| *o));
    }
    let m = grid(3, 5);
    assert_eq!(m.positions.len(), 15);
    assert_eq!(m.positions[5 + 2], [1.0, 0.5, 0.0]);
}

#[test]
fn grid_ring_of_an_interior_vertex_is_ccw() {
    let m = grid(3, 3);
    let t = Topology::new(&m).unwrap();
    // Centre 4: neighbours 1, 2 (diag? no: 4's diagonal neighbours are 0 and 8), 3, 5, 7.
    let ring = t.ring(4);
    assert_eq!(ring.len(), 6);
    assert_eq!(ring[0], 0, "starts at the smallest neighbour");
    // Counter-clockwise around (0.5, 0.5): angles increase.
    let c = m.positions[4];
    let ang: Vec<f64> = ring
        .iter()
        .map(|&v| {
            let p = m.positions[v as usize];
            (p[1] - c[1]).atan2(p[0] - c[0])
        })
        .collect();
    let mut turn = 0.0;
    for k in 0..6 {
        let mut d = ang[(k + 1) % 6] - ang[k];
        if d < 0.0 {
            d += 2.0 * std::f64::consts::PI;
        }
        assert!(d > 0.0 && d < std::f64::consts::PI);
        turn += d;
    }
    assert!((turn - 2.0 * std::f64::consts::PI).abs() < 1e-12);
    // A boundary corner's ring starts at the neighbour that opens the fan.
    assert_eq!(t.ring(0), &[1, 4, 3]);
    let els = t.elements(Stencil::Ring);
    assert_eq!(els.len(), 9);
    assert_eq!(els.get(0), &[0, 1, 4, 3]);
}

#[test]
fn diamond_orientation_follows_faces() {
    let m = grid(4, 4);
    let t = Topology::new(&m).unwrap();
    for (d, &e) in t.diamonds.iter().zip(&t.diamond_edge) {
        assert_eq!([d[0], d[1]], t.edges[e as usize]);
        assert!(d[0] < d[1]);
        let f1 = [d[0], d[1], d[2]];
        let f2 = [d[1], d[0], d[3]];
        assert!(
            signed_area_z(&m, &f1) > 0.0 && signed_area_z(&m, &f2) > 0.0,
            "{d:?}"
        );
    }
}

#[test]
fn icosphere_counts_and_closedness() {
    for level in 0..5u32 {
        let m = icosphere(level);
        let t = Topology::new(&m).unwrap();
        let p = 4usize.pow(level);
        assert_eq!(m.positions.len(), 10 * p + 2);
        assert_eq!(t.edges.len(), 30 * p);
        assert_eq!(m.triangles.len(), 20 * p);
        assert_eq!(t.euler_characteristic(), 2);
        assert_eq!(t.diamonds.len(), t.edges.len());
        assert!(t.vertex_boundary.iter().all(|b| !b));
        assert!(t.ring_ordered.iter().all(|o| *o));
        assert_eq!(t.ring_neighbors.len(), 2 * t.edges.len());
        assert!(
            m.positions
                .iter()
                .all(|p| ((p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt() - 1.0).abs() < 1e-14)
        );
        // Outward orientation: positive signed volume.
        let vol: f64 = m
            .triangles
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|v| m.positions[v as usize]);
                a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
                    + a[2] * (b[0] * c[1] - b[1] * c[0])
            })
            .sum::<f64>()
            / 6.0;
        assert!(vol > 0.0);
        assert_eq!(
            t.edges,
            brute_edges(&m)
                .into_iter()
                .map(|(a, b)| [a, b])
                .collect::<Vec<_>>()
        );
    }
}

#[test]
fn torus_and_disk_counts() {
    for (n, mm) in [(3, 3), (8, 5), (20, 12)] {
        let m = torus(n, mm);
        let t = Topology::new(&m).unwrap();
        assert_eq!(m.positions.len(), n * mm);
        assert_eq!(t.edges.len(), 3 * n * mm);
        assert_eq!(t.euler_characteristic(), 0);
        assert_eq!(t.diamonds.len(), t.edges.len());
        assert!(t.ring_ordered.iter().all(|o| *o));
        assert!(m.report().degenerate_faces.is_empty());
    }
    for n in [1usize, 2, 5, 12] {
        let m = disk(n);
        let t = Topology::new(&m).unwrap();
        assert_eq!(m.positions.len(), 1 + 3 * n * (n + 1));
        assert_eq!(m.triangles.len(), 6 * n * n);
        assert_eq!(t.euler_characteristic(), 1);
        assert_eq!(t.vertex_boundary.iter().filter(|b| **b).count(), 6 * n);
        assert!(m.triangles.iter().all(|f| signed_area_z(&m, f) > 0.0));
        assert!(t.ring_ordered.iter().all(|o| *o));
        assert_eq!(t.non_manifold_edges(), 0);
    }
}

#[test]
fn non_manifold_degenerate_and_disconnected_meshes() {
    // Three triangles sharing edge (0,1), plus a separate triangle and a collapsed face.
    let m = Mesh::new(
        vec![
            [0.0; 3],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, -1.0, 0.0],
            [0.0, 0.0, 1.0],
            [5.0, 0.0, 0.0],
            [6.0, 0.0, 0.0],
            [5.0, 1.0, 0.0],
        ],
        vec![[0, 1, 2], [1, 0, 3], [0, 1, 4], [5, 6, 7], [5, 5, 6]],
    )
    .unwrap();
    let t = Topology::new(&m).unwrap();
    let e01 = t.edge_index(0, 1).unwrap();
    assert_eq!(t.faces_of_edge(e01), &[0, 1, 2]);
    assert_eq!(t.non_manifold_edges(), 1);
    assert!(!t.diamond_edge.contains(&(e01 as u32)));
    assert!(t.diamonds.is_empty());
    assert!(!t.ring_ordered[0] && !t.ring_ordered[1]);
    assert_eq!(t.ring(0), &[1, 2, 3, 4]);
    assert!(t.ring_ordered[6]);
    assert_eq!(t.face_edges[4][0], mad_runtime::mesh::topology::NO_EDGE);
    assert_eq!(t.elements(Stencil::Face).get(4), &[5, 5, 6]);
    assert_eq!(t.num_elements(Stencil::Face), 5);
    assert_eq!(t.edges.len(), brute_edges(&m).len());
}

#[test]
fn diamond_with_inconsistent_orientation_takes_lower_face_first() {
    let m = Mesh::new(
        vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, -1.0, 0.0]],
        vec![[1, 0, 2], [1, 0, 3]],
    )
    .unwrap();
    let t = Topology::new(&m).unwrap();
    assert_eq!(t.diamonds, vec![[0, 1, 2, 3]]);
    let m = Mesh::new(
        vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, -1.0, 0.0]],
        vec![[1, 0, 2], [0, 1, 3]],
    )
    .unwrap();
    assert_eq!(Topology::new(&m).unwrap().diamonds, vec![[0, 1, 3, 2]]);
}

/// Finds `shared/meshes` beside the repository (CI) or in any ancestor directory.
fn meshes_dir() -> Option<PathBuf> {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .map(|a| a.join("shared").join("meshes"))
        .find(|p| p.is_dir())
}

#[test]
fn real_meshes_load_with_expected_counts() {
    let Some(dir) = meshes_dir() else {
        println!("note: no shared/meshes directory beside the repository; real-mesh test skipped");
        return;
    };
    let expect: HashMap<&str, (usize, usize, Option<i64>)> = [
        ("bunnyhead.obj", (1550, 3000, None)),
        ("cloth.obj", (900, 1682, None)),
        ("el_topo_sphere_1280.obj", (642, 1280, Some(2))),
        ("torus.obj", (4608, 9216, Some(0))),
        ("spot.obj", (2930, 5856, Some(2))),
        ("giraffe_embedding.obj", (3130, 6256, None)),
        ("cheburashka.off", (6669, 13334, None)),
        ("dragon.obj", (10000, 20000, None)),
    ]
    .into_iter()
    .collect();
    for (name, (v, f, chi)) in &expect {
        let path = dir.join(name);
        let (m, r) = load_mesh_with_report(path.to_str().unwrap()).unwrap();
        assert_eq!((m.positions.len(), m.triangles.len()), (*v, *f), "{name}");
        assert_eq!(r.triangulated_polygons, 0, "{name}");
        let t = Topology::new(&m).unwrap();
        if let Some(chi) = chi {
            assert_eq!(t.euler_characteristic(), *chi, "{name}");
            assert_eq!(t.diamonds.len(), t.edges.len(), "{name}: closed");
        }
        assert_eq!(t.ring_neighbors.len(), 2 * t.edges.len());
        assert_eq!(t.edges.len(), brute_edges(&m).len());
    }
    // The tetrahedral file loads (fan-triangulated) and says so.
    let (m, r) = load_mesh_with_report(dir.join("cube_48k.obj").to_str().unwrap()).unwrap();
    assert_eq!(m.triangles.len(), 96_000);
    assert_eq!((r.triangulated_polygons, r.max_polygon_size), (48_000, 4));
    assert!(r.warnings().iter().any(|w| w.contains("fan-triangulated")));
}

#[test]
fn topology_rejects_out_of_range_indices() {
    let m = Mesh {
        positions: vec![[0.0; 3]; 3],
        triangles: vec![[0, 1, 3]],
    };
    assert!(Topology::new(&m).is_err());
}

/// A face written the other way round: the rings of its vertices are still in fan order
/// (consecutive neighbours share a face with the vertex), in the direction most of the
/// vertex's faces take; and a consistently oriented mesh keeps its rings bit for bit.
#[test]
fn rings_are_fans_when_one_face_is_flipped() {
    let m = icosphere(1);
    let reference = Topology::new(&m).unwrap();
    for flip in [0usize, 7, 19] {
        let mut tris = m.triangles.clone();
        tris[flip].swap(1, 2);
        let flipped = Mesh::new(m.positions.clone(), tris.clone()).unwrap();
        let t = Topology::new(&flipped).unwrap();
        for v in 0..m.num_vertices() {
            assert!(t.ring_ordered[v], "vertex {v} (face {flip} flipped)");
            let ring = t.ring(v);
            let shares_face = |a: u32, b: u32| {
                tris.iter().any(|f| f.contains(&(v as u32)) && f.contains(&a) && f.contains(&b))
            };
            for i in 0..ring.len() {
                assert!(shares_face(ring[i], ring[(i + 1) % ring.len()]), "vertex {v}: {ring:?}");
            }
            // The majority direction is the unflipped mesh's.
            assert_eq!(ring, reference.ring(v), "vertex {v}");
        }
    }
}
