//! Mesh generators, usable wherever a mesh path is expected.
//!
//! - `grid:NxM` (also `grid:N` for N×N): N rows × M columns of vertices in the plane z = 0,
//!   spacing `h = 1/(N-1)`, vertex `v = i*M + j` at `(j*h, i*h, 0)`. Each grid cell with lower-left
//!   vertex v is split along (v, v+M+1) into the triangles `(v, v+1, v+M+1)` and
//!   `(v, v+M+1, v+M)` (counter-clockwise seen from +z), cells in row-major order. Its edges are
//!   `(v, v+1)`, `(v, v+M)`, `(v, v+M+1)`, as in the mass-spring benchmark W1.
//!   N, M ≥ 2. For N×N: V = N², E = 2N(N-1) + (N-1)², F = 2(N-1)².
//! - `sphere:LEVEL`: an icosahedron subdivided LEVEL times (each triangle into 4), vertices
//!   projected to the unit sphere. V = 10·4^L + 2, E = 30·4^L, F = 20·4^L; LEVEL ≤ 10.
//! - `disk:N`: a unit disk of N concentric rings around a centre vertex; ring r (1..=N) has 6r
//!   vertices at radius r/N, so V = 1 + 3N(N+1), F = 6N², and the boundary has 6N vertices.
//!   Vertex 0 is the centre, rings follow in order, each counter-clockwise from angle 0.
//! - `torus:N,M`: N segments around the main circle (radius 1) × M around the tube
//!   (radius 0.25), vertex `i*M + j`; V = NM, E = 3NM, F = 2NM, Euler characteristic 0.
//!   N, M ≥ 3.
//! - `spheres2:LEVEL` or `spheres2:PATH`: two copies of a closed surface for contact scenes —
//!   `sphere:LEVEL`, or the mesh file PATH — each moved to its vertex centroid and scaled to a
//!   largest vertex distance of 1 from it, the first centred at (−1.1, 0, 0), the second at
//!   (1.1, 0, 0) (a gap of 0.2 between the unit spheres). Vertices and faces of the first copy
//!   come first; the second's are offset by its vertex count. See [`two_copies`].
//!
//! A generated mesh has at most [`MAX_VERTICES`] vertices (a larger spec is an error).
//!
//! All generated faces are oriented consistently (outward for the sphere and torus, +z for the
//! grid and disk).

use super::{Mesh, MeshError};
use std::collections::HashMap;
use std::f64::consts::PI;

/// The generator names, each used as `NAME:ARGS`.
pub const GENERATORS: [&str; 5] = ["grid", "sphere", "disk", "torus", "spheres2"];

/// The most vertices a generated mesh has (2²⁴): larger specs are errors rather than
/// allocations of many gigabytes that abort the process.
pub const MAX_VERTICES: usize = 1 << 24;

/// Parses a spec such as `grid:100x100` (see [`generate`]).
fn parse(spec: &str) -> Result<Spec, MeshError> {
    let bad = |message: &str| MeshError::BadSpec {
        spec: spec.to_string(),
        message: message.to_string(),
    };
    let (name, args) = spec
        .split_once(':')
        .ok_or_else(|| bad("expected NAME:ARGS"))?;
    let too_many = |count: Option<usize>| {
        let n = count.map_or_else(|| "more than 2⁶⁴".to_string(), |v| v.to_string());
        bad(&format!("it would have {n} vertices; a generated mesh has at most {MAX_VERTICES}"))
    };
    let num = |s: &str| {
        s.trim()
            .parse::<usize>()
            .map_err(|_| bad(&format!("`{s}` is not a non-negative integer")))
    };
    match name {
        "grid" => {
            let (n, m) = match args.split_once(['x', 'X', '×']) {
                Some((a, b)) => (num(a)?, num(b)?),
                None => {
                    let n = num(args)?;
                    (n, n)
                }
            };
            if n < 2 || m < 2 {
                return Err(bad("a grid needs at least 2×2 vertices"));
            }
            if n.checked_mul(m).is_none_or(|v| v > MAX_VERTICES) {
                return Err(too_many(n.checked_mul(m)));
            }
            Ok(Spec::Grid(n, m))
        }
        "sphere" => {
            let level = num(args)?;
            if level > 10 {
                return Err(bad("sphere levels above 10 are too large"));
            }
            Ok(Spec::Sphere(level as u32))
        }
        "disk" => {
            let n = num(args)?;
            if n < 1 {
                return Err(bad("a disk needs at least 1 ring"));
            }
            let count = n.checked_add(1).and_then(|n1| n.checked_mul(n1)).and_then(|v| v.checked_mul(3)).and_then(|v| v.checked_add(1));
            if count.is_none_or(|v| v > MAX_VERTICES) {
                return Err(too_many(count));
            }
            Ok(Spec::Disk(n))
        }
        "torus" => {
            let (a, b) = args
                .split_once(',')
                .ok_or_else(|| bad("expected torus:N,M"))?;
            let (n, m) = (num(a)?, num(b)?);
            if n < 3 || m < 3 {
                return Err(bad("a torus needs N, M ≥ 3"));
            }
            if n.checked_mul(m).is_none_or(|v| v > MAX_VERTICES) {
                return Err(too_many(n.checked_mul(m)));
            }
            Ok(Spec::Torus(n, m))
        }
        "spheres2" => {
            match args.trim().parse::<usize>() {
                Ok(level) if level <= 8 => Ok(Spec::Spheres2Level(level as u32)),
                Ok(_) => Err(bad("sphere levels above 8 are too large for two copies")),
                Err(_) if args.trim().is_empty() => {
                    Err(bad("expected spheres2:LEVEL or spheres2:FILE (a closed surface)"))
                }
                Err(_) => Ok(Spec::Spheres2File(args.trim().to_string())),
            }
        }
        _ => Err(bad(
            "unknown generator (expected grid, sphere, disk, torus or spheres2)",
        )),
    }
}

/// What a generator spec asks for, its arguments checked.
enum Spec {
    Grid(usize, usize),
    Sphere(u32),
    Disk(usize),
    Torus(usize, usize),
    Spheres2Level(u32),
    Spheres2File(String),
}

/// Checks a generator spec without building its mesh (for settings checked before a run):
/// the error [`generate`] would give for its arguments. (`spheres2:FILE` is checked up to
/// reading the file.)
pub fn check_spec(spec: &str) -> Result<(), MeshError> {
    parse(spec).map(|_| ())
}

/// Builds the mesh a spec such as `grid:100x100` describes.
pub fn generate(spec: &str) -> Result<Mesh, MeshError> {
    Ok(match parse(spec)? {
        Spec::Grid(n, m) => grid(n, m),
        Spec::Sphere(level) => icosphere(level),
        Spec::Disk(n) => disk(n),
        Spec::Torus(n, m) => torus(n, m),
        Spec::Spheres2Level(level) => two_copies(&icosphere(level), 0.2).map_err(|m| bad_spec(spec, &m))?,
        Spec::Spheres2File(path) => {
            two_copies(&super::load_mesh(&path)?, 0.2).map_err(|m| bad_spec(spec, &m))?
        }
    })
}

fn bad_spec(spec: &str, message: &str) -> MeshError {
    MeshError::BadSpec {
        spec: spec.to_string(),
        message: message.to_string(),
    }
}

/// The N×M grid described in the module docs.
pub fn grid(n: usize, m: usize) -> Mesh {
    let h = 1.0 / (n as f64 - 1.0);
    let mut positions = Vec::with_capacity(n * m);
    for i in 0..n {
        for j in 0..m {
            positions.push([j as f64 * h, i as f64 * h, 0.0]);
        }
    }
    let mut triangles = Vec::with_capacity(2 * (n - 1) * (m - 1));
    for i in 0..n - 1 {
        for j in 0..m - 1 {
            let v = (i * m + j) as u32;
            let m = m as u32;
            triangles.push([v, v + 1, v + m + 1]);
            triangles.push([v, v + m + 1, v + m]);
        }
    }
    Mesh {
        positions,
        triangles,
    }
}

/// The unit icosphere subdivided `level` times.
pub fn icosphere(level: u32) -> Mesh {
    let t = (1.0 + 5f64.sqrt()) / 2.0;
    let mut positions: Vec<[f64; 3]> = [
        [-1.0, t, 0.0],
        [1.0, t, 0.0],
        [-1.0, -t, 0.0],
        [1.0, -t, 0.0],
        [0.0, -1.0, t],
        [0.0, 1.0, t],
        [0.0, -1.0, -t],
        [0.0, 1.0, -t],
        [t, 0.0, -1.0],
        [t, 0.0, 1.0],
        [-t, 0.0, -1.0],
        [-t, 0.0, 1.0],
    ]
    .iter()
    .map(|&p| normalize(p))
    .collect();
    let mut triangles: Vec<[u32; 3]> = vec![
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    for _ in 0..level {
        let mut mid: HashMap<(u32, u32), u32> = HashMap::new();
        let mut next = Vec::with_capacity(triangles.len() * 4);
        for &[a, b, c] in &triangles {
            let mut midpoint = |x: u32, y: u32| {
                let key = (x.min(y), x.max(y));
                *mid.entry(key).or_insert_with(|| {
                    let (p, q) = (positions[x as usize], positions[y as usize]);
                    positions.push(normalize([p[0] + q[0], p[1] + q[1], p[2] + q[2]]));
                    (positions.len() - 1) as u32
                })
            };
            let ab = midpoint(a, b);
            let bc = midpoint(b, c);
            let ca = midpoint(c, a);
            next.extend_from_slice(&[[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]);
        }
        triangles = next;
    }
    Mesh {
        positions,
        triangles,
    }
}

/// The disk of `n` rings described in the module docs.
pub fn disk(n: usize) -> Mesh {
    let mut positions = vec![[0.0, 0.0, 0.0]];
    // First vertex index of each ring (ring 0 = the centre).
    let mut start = vec![0usize];
    for r in 1..=n {
        start.push(positions.len());
        let count = 6 * r;
        for k in 0..count {
            let a = 2.0 * PI * k as f64 / count as f64;
            let rad = r as f64 / n as f64;
            positions.push([rad * a.cos(), rad * a.sin(), 0.0]);
        }
    }
    let ring_vertex = |r: usize, k: usize| -> u32 {
        if r == 0 {
            0
        } else {
            (start[r] + k % (6 * r)) as u32
        }
    };
    let mut triangles = Vec::with_capacity(6 * n * n);
    for r in 1..=n {
        for s in 0..6 {
            let outer = |t: usize| ring_vertex(r, s * r + t);
            let inner = |t: usize| ring_vertex(r - 1, s * (r - 1) + t);
            for t in 0..r {
                triangles.push([outer(t), outer(t + 1), inner(t)]);
            }
            for t in 0..r - 1 {
                triangles.push([inner(t), outer(t + 1), inner(t + 1)]);
            }
        }
    }
    Mesh {
        positions,
        triangles,
    }
}

/// The N×M torus described in the module docs.
pub fn torus(n: usize, m: usize) -> Mesh {
    let (big, small) = (1.0, 0.25);
    let mut positions = Vec::with_capacity(n * m);
    for i in 0..n {
        let u = 2.0 * PI * i as f64 / n as f64;
        for j in 0..m {
            let w = 2.0 * PI * j as f64 / m as f64;
            let rho = big + small * w.cos();
            positions.push([rho * u.cos(), rho * u.sin(), small * w.sin()]);
        }
    }
    let idx = |i: usize, j: usize| ((i % n) * m + (j % m)) as u32;
    let mut triangles = Vec::with_capacity(2 * n * m);
    for i in 0..n {
        for j in 0..m {
            let (a, b, c, d) = (idx(i, j), idx(i + 1, j), idx(i + 1, j + 1), idx(i, j + 1));
            triangles.push([a, b, c]);
            triangles.push([a, c, d]);
        }
    }
    Mesh {
        positions,
        triangles,
    }
}

fn normalize(p: [f64; 3]) -> [f64; 3] {
    let n = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
    [p[0] / n, p[1] / n, p[2] / n]
}

/// Two copies of `one`, each centred at its vertex centroid and scaled to a largest vertex
/// distance of 1 from it, placed along x with `gap` between their bounding unit spheres
/// (centres at x = ∓(1 + gap/2)). The first copy's vertices and faces come first.
pub fn two_copies(one: &Mesh, gap: f64) -> Result<Mesh, String> {
    let n = one.positions.len();
    if n == 0 {
        return Err("the mesh has no vertices".into());
    }
    if n > MAX_VERTICES / 2 {
        return Err(format!(
            "it would have {} vertices; a generated mesh has at most {MAX_VERTICES}",
            2 * n
        ));
    }
    // A closed surface: every edge of a proper face shared by exactly two of them (faces with
    // a repeated vertex are skipped, as the topology skips them).
    if one.triangles.is_empty() {
        return Err("two copies of a closed surface: the mesh has no faces".into());
    }
    let mut edges: std::collections::HashMap<(u32, u32), u32> = std::collections::HashMap::new();
    for t in &one.triangles {
        if t[0] == t[1] || t[1] == t[2] || t[0] == t[2] {
            continue;
        }
        for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
            *edges.entry((a.min(b), a.max(b))).or_insert(0) += 1;
        }
    }
    let open = edges.values().filter(|&&c| c != 2).count();
    if open > 0 {
        return Err(format!(
            "two copies of a closed surface: {open} edge(s) of the mesh are not shared by exactly two faces"
        ));
    }
    let mut c = [0.0; 3];
    for p in &one.positions {
        for k in 0..3 {
            c[k] += p[k] / n as f64;
        }
    }
    let radius = one
        .positions
        .iter()
        .map(|p| ((p[0] - c[0]).powi(2) + (p[1] - c[1]).powi(2) + (p[2] - c[2]).powi(2)).sqrt())
        .fold(0.0, f64::max);
    if !(radius > 0.0 && radius.is_finite()) {
        return Err("the mesh has no extent".into());
    }
    let shift = 1.0 + 0.5 * gap;
    let mut positions = Vec::with_capacity(2 * n);
    for dx in [-shift, shift] {
        positions.extend(one.positions.iter().map(|p| {
            [
                (p[0] - c[0]) / radius + dx,
                (p[1] - c[1]) / radius,
                (p[2] - c[2]) / radius,
            ]
        }));
    }
    let mut triangles = one.triangles.clone();
    triangles.extend(
        one.triangles
            .iter()
            .map(|t| [t[0] + n as u32, t[1] + n as u32, t[2] + n as u32]),
    );
    Ok(Mesh {
        positions,
        triangles,
    })
}
