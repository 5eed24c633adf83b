//! The contact broad phase against brute force on random meshes, and the
//! conservative step rule against dense sampling of the step.

use mad_runtime::contact::distance::{point_triangle_sq, segment_segment_sq};
use mad_runtime::contact::{BroadPhase, ContactKind};
use mad_runtime::mesh::generators::icosphere;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    fn sym(&mut self) -> f64 {
        2.0 * self.next() - 1.0
    }
}

/// Two jittered icospheres (radius 1) whose centers are `gap` apart along x.
fn two_spheres(level: u32, gap: f64, jitter: f64, rng: &mut Rng) -> (Vec<[f64; 3]>, Vec<[u32; 3]>) {
    let s = icosphere(level);
    let n = s.positions.len() as u32;
    let mut pos = Vec::new();
    for k in 0..2 {
        for p in &s.positions {
            let dx = if k == 0 { -0.5 * gap } else { 0.5 * gap };
            pos.push([
                p[0] + dx + jitter * rng.sym(),
                p[1] + jitter * rng.sym(),
                p[2] + jitter * rng.sym(),
            ]);
        }
    }
    let mut tris = s.triangles.clone();
    tris.extend(s.triangles.iter().map(|t| [t[0] + n, t[1] + n, t[2] + n]));
    (pos, tris)
}

#[test]
fn broad_phase_matches_brute_force_on_random_meshes() {
    let mut rng = Rng(11);
    let kinds = [
        vec![ContactKind::VertexFace],
        vec![ContactKind::EdgeEdge],
        vec![ContactKind::VertexFace, ContactKind::EdgeEdge],
        vec![ContactKind::VertexVertex],
    ];
    let mut total = 0;
    for trial in 0..8 {
        let gap = 1.9 + 0.2 * rng.next();
        let (pos, tris) = two_spheres(1 + trial % 2, gap, 0.05, &mut rng);
        for k in &kinds {
            let bp = BroadPhase::new(pos.len(), &tris, k).unwrap();
            let dhat = 0.05 + 0.3 * rng.next();
            let fast = bp.pairs(&pos, dhat).unwrap();
            let slow = bp.pairs_brute_force(&pos, dhat).unwrap();
            assert_eq!(fast, slow, "trial {trial} kinds {k:?} dhat {dhat}");
            total += fast.len() / bp.arity();
        }
    }
    assert!(total > 100, "the scenes must produce pairs ({total})");
}

#[test]
fn tuples_exclude_shared_vertices_and_respect_the_distance() {
    let mut rng = Rng(3);
    let (pos, tris) = two_spheres(1, 2.0, 0.02, &mut rng);
    let bp = BroadPhase::new(
        pos.len(),
        &tris,
        &[ContactKind::VertexFace, ContactKind::EdgeEdge],
    )
    .unwrap();
    let dhat = 0.3;
    let pairs = bp.pairs(&pos, dhat).unwrap();
    assert!(!pairs.is_empty());
    for t in pairs.chunks(4) {
        let mut s = t.to_vec();
        s.sort_unstable();
        s.dedup();
        assert_eq!(s.len(), 4, "a pair shares a vertex: {t:?}");
        let p = |i: usize| pos[t[i] as usize];
        let d = point_triangle_sq(p(0), p(1), p(2), p(3)).min(segment_segment_sq(
            p(0),
            p(1),
            p(2),
            p(3),
        ));
        assert!(d < dhat * dhat);
    }
}

#[test]
fn mixed_tuple_sizes_and_bad_input_are_errors() {
    let tris = [[0u32, 1, 2]];
    assert!(
        BroadPhase::new(
            3,
            &tris,
            &[ContactKind::VertexVertex, ContactKind::VertexFace]
        )
        .is_err()
    );
    assert!(BroadPhase::new(2, &tris, &[ContactKind::VertexFace]).is_err());
    let bp = BroadPhase::new(3, &tris, &[ContactKind::VertexFace]).unwrap();
    assert!(bp.pairs(&[[0.0; 3]; 2], 0.1).is_err());
    assert!(
        bp.pairs(&[[0.0; 3], [f64::NAN, 0.0, 0.0], [0.0; 3]], 0.1)
            .is_err()
    );
}

/// The minimum over every non-adjacent vertex–face and edge–edge pair of the
/// distance, by brute force.
fn min_distance(n: usize, tris: &[[u32; 3]], pos: &[[f64; 3]]) -> f64 {
    let far = f64::MAX.sqrt();
    let mut best = f64::INFINITY;
    let vf = BroadPhase::new(n, tris, &[ContactKind::VertexFace]).unwrap();
    for t in vf.pairs_brute_force(pos, far).unwrap().chunks(4) {
        let p = |i: usize| pos[t[i] as usize];
        best = best.min(point_triangle_sq(p(0), p(1), p(2), p(3)));
    }
    let ee = BroadPhase::new(n, tris, &[ContactKind::EdgeEdge]).unwrap();
    for t in ee.pairs_brute_force(pos, far).unwrap().chunks(4) {
        let p = |i: usize| pos[t[i] as usize];
        best = best.min(segment_segment_sq(p(0), p(1), p(2), p(3)));
    }
    best.sqrt()
}

#[test]
fn the_step_rule_never_lets_a_pair_touch() {
    let mut rng = Rng(5);
    let mut capped = 0;
    for trial in 0..6 {
        let (pos, tris) = two_spheres(1, 2.15, 0.02, &mut rng);
        let n = pos.len();
        let bp =
            BroadPhase::new(n, &tris, &[ContactKind::VertexFace, ContactKind::EdgeEdge]).unwrap();
        // The two spheres move toward each other with random wobble; t0 = 1 would
        // overlap them deeply.
        let dir: Vec<[f64; 3]> = (0..n)
            .map(|i| {
                let s = if i < n / 2 { 1.0 } else { -1.0 };
                [
                    s * (0.5 + 0.1 * trial as f64) + 0.1 * rng.sym(),
                    0.1 * rng.sym(),
                    0.1 * rng.sym(),
                ]
            })
            .collect();
        let t = bp.max_step(&pos, &dir, 1.0, 0.9).unwrap();
        assert!(t > 0.0 && t < 1.0, "trial {trial}: t = {t}");
        capped += 1;
        let d0 = min_distance(n, &tris, &pos);
        for k in 0..=12 {
            let tau = t * k as f64 / 12.0;
            let q: Vec<[f64; 3]> = pos
                .iter()
                .zip(&dir)
                .map(|(p, d)| [p[0] + tau * d[0], p[1] + tau * d[1], p[2] + tau * d[2]])
                .collect();
            let dk = min_distance(n, &tris, &q);
            assert!(
                dk >= 0.1 * d0 * 0.999,
                "trial {trial}: distance {dk} at τ = {tau} (start {d0})"
            );
        }
    }
    assert_eq!(capped, 6);
}

#[test]
fn the_step_rule_caps_a_point_passing_through_a_triangle() {
    let pos = vec![
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.2, 0.2, 1.0],
    ];
    let tris = [[0u32, 1, 2]];
    let bp = BroadPhase::new(4, &tris, &[ContactKind::VertexFace]).unwrap();
    // The point moves down by 3: through the triangle at t = 1/3 and out the other side.
    let dir = vec![[0.0; 3], [0.0; 3], [0.0; 3], [0.0, 0.0, -3.0]];
    let t = bp.max_step(&pos, &dir, 1.0, 0.9).unwrap();
    assert!((t - 0.3).abs() < 1e-12, "t = {t}");
    // Far away and moving apart: no cap.
    let dir = vec![[0.0; 3], [0.0; 3], [0.0; 3], [0.0, 0.0, 3.0]];
    assert_eq!(bp.max_step(&pos, &dir, 1.0, 0.9).unwrap(), 1.0);
}

/// With a vertex order, the tuples are those of the mesh numbered by the ranks, renamed
/// back: a permutation of the ids and its inverse as the order give the renamed mesh's
/// pairs, in its sort order, for every kind (fast and brute-force paths alike).
#[test]
fn a_vertex_order_gives_the_tuples_of_the_mesh_so_numbered() {
    let mut rng = Rng(5);
    let (pos, tris) = two_spheres(2, 2.02, 0.02, &mut rng);
    let n = pos.len();
    // rank[v]: v's id in the "file" numbering (a scattered permutation).
    let mut rank: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        let j = (rng.next() * (i + 1) as f64) as usize;
        rank.swap(i, j.min(i));
    }
    let file_pos: Vec<[f64; 3]> = {
        let mut p = vec![[0.0; 3]; n];
        for v in 0..n {
            p[rank[v] as usize] = pos[v];
        }
        p
    };
    let file_tris: Vec<[u32; 3]> = tris.iter().map(|t| t.map(|v| rank[v as usize])).collect();
    for kinds in [
        vec![ContactKind::VertexVertex],
        vec![ContactKind::EdgeEdge],
        vec![ContactKind::VertexFace, ContactKind::EdgeEdge],
    ] {
        let in_file = BroadPhase::new(n, &file_tris, &kinds).unwrap();
        let want = in_file.pairs(&file_pos, 0.08).unwrap();
        assert!(!want.is_empty(), "{kinds:?}: no pairs to compare");
        let ordered = BroadPhase::new(n, &tris, &kinds)
            .unwrap()
            .with_vertex_order(rank.clone())
            .unwrap();
        for got in [ordered.pairs(&pos, 0.08).unwrap(), ordered.pairs_brute_force(&pos, 0.08).unwrap()] {
            let renamed: Vec<u32> = got.iter().map(|&v| rank[v as usize]).collect();
            assert_eq!(renamed, want, "{kinds:?}");
        }
    }
    let bad = BroadPhase::new(n, &tris, &[ContactKind::VertexVertex]).unwrap();
    assert!(bad.with_vertex_order(vec![0; n]).is_err(), "a repeated rank");
}
