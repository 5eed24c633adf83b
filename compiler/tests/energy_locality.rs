//! The locality schedule: on a mesh whose vertex and face numbering is scrambled, energy
//! terms evaluate their elements in a breadth-first order; the results are those of the
//! same mesh in a tidy numbering (up to summation order), the same bits on every thread
//! count and on the element-by-element path's tolerance, and run-time errors name the
//! mesh's face, not a position in the schedule.

use mad::energy::EnergyProgram;
use mad_runtime::mesh::{Mesh, load_mesh};

fn rnd(seed: &mut u64) -> u64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *seed >> 11
}

/// A random permutation of 0..n (Fisher–Yates).
fn permutation(n: usize, seed: &mut u64) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        p.swap(i, (rnd(seed) % (i as u64 + 1)) as usize);
    }
    p
}

/// `mesh` with vertex v renamed `vmap[v]` and its faces listed in the order `forder`.
fn scrambled(mesh: &Mesh, vmap: &[usize], forder: &[usize]) -> Mesh {
    let mut pos = vec![[0.0; 3]; mesh.num_vertices()];
    for (v, &w) in vmap.iter().enumerate() {
        pos[w] = mesh.positions[v];
    }
    let tris = forder
        .iter()
        .map(|&f| mesh.triangles[f].map(|v| vmap[v as usize] as u32))
        .collect();
    Mesh::new(pos, tris).unwrap()
}

fn param() -> EnergyProgram {
    let path = format!("{}/../examples/param.mad", env!("CARGO_MANIFEST_DIR"));
    EnergyProgram::compile_file(&path).unwrap()
}

#[test]
fn a_scrambled_mesh_is_scheduled_by_locality_and_gives_the_tidy_results() {
    let prog = param();
    let tidy = load_mesh("grid:60x60").unwrap();
    let mut seed = 7;
    let vmap = permutation(tidy.num_vertices(), &mut seed);
    let forder = permutation(tidy.num_faces(), &mut seed);
    let mesh = scrambled(&tidy, &vmap, &forder);

    let a = prog.bind(&tidy).unwrap();
    let mut b = prog.bind(&mesh).unwrap();
    let order = b.element_order("sym_dirichlet").expect("a scrambled mesh is reordered");
    let mut sorted = order.to_vec();
    sorted.sort_unstable();
    assert!(sorted.iter().enumerate().all(|(i, &e)| i == e as usize), "a permutation");

    // The same point in both numberings: the Tutte start of the tidy mesh.
    let xa = a.default_x();
    let mut xb = vec![0.0; xa.len()];
    for (v, &w) in vmap.iter().enumerate() {
        xb[2 * w..2 * w + 2].copy_from_slice(&xa[2 * v..2 * v + 2]);
    }
    let n = xa.len();
    let (mut ga, mut gb) = (vec![0.0; n], vec![0.0; n]);
    let mut ha = vec![0.0; a.nnz()];
    let mut hb = vec![0.0; b.nnz()];
    let ea = a.hessian(&xa, &mut ga, &mut ha, true).unwrap();
    let eb = b.hessian(&xb, &mut gb, &mut hb, true).unwrap();
    assert!((ea - eb).abs() <= 1e-12 * ea.abs(), "energy {ea} vs {eb}");
    let gscale = ga.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for (v, &w) in vmap.iter().enumerate() {
        for c in 0..2 {
            let (p, q) = (ga[2 * v + c], gb[2 * w + c]);
            assert!((p - q).abs() <= 1e-11 * gscale, "gradient at vertex {v}: {p} vs {q}");
        }
    }
    // Hessian entries, mapped through the renaming.
    let (pa, pb) = (a.pattern(), b.pattern());
    let hscale = ha.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for r in 0..n {
        for (k, &c) in pa.row(r).iter().enumerate() {
            let (rv, cv) = (r / 2, c as usize / 2);
            let rb = 2 * vmap[rv] + r % 2;
            let cb = (2 * vmap[cv] + c as usize % 2) as u32;
            let kb = pb.find(rb, cb).expect("the same pattern");
            let (p, q) = (ha[pa.row_ptr[r] + k], hb[kb]);
            assert!((p - q).abs() <= 1e-11 * hscale, "H[{r},{c}]: {p} vs {q}");
        }
    }

    // Thread counts give the same bits; the element-by-element path agrees.
    let run = |threads: usize, batched: bool| {
        let mut e = prog.bind(&mesh).unwrap();
        e.set_threads(threads).unwrap();
        // Every colour of two chunks or more on the workers, however small the mesh.
        e.set_min_parallel_work(0);
        e.set_batched(batched);
        let mut g = vec![f64::NAN; n];
        let mut h = vec![f64::NAN; e.nnz()];
        let f = e.hessian(&xb, &mut g, &mut h, true).unwrap();
        (f, g, h)
    };
    let one = run(1, true);
    for threads in [2, 3] {
        let t = run(threads, true);
        assert_eq!(one.0.to_bits(), t.0.to_bits(), "energy on {threads} threads");
        assert!(one.1.iter().zip(&t.1).all(|(p, q)| p.to_bits() == q.to_bits()));
        assert!(one.2.iter().zip(&t.2).all(|(p, q)| p.to_bits() == q.to_bits()));
    }
    let plain = run(1, false);
    assert!((plain.0 - one.0).abs() <= 1e-12 * one.0.abs());
    b.set_threads(2).unwrap();
    // Every colour of two chunks or more on the workers, however small the mesh.
    b.set_min_parallel_work(0);
    assert!(b.gradient(&xb, &mut gb).unwrap().is_finite());
}

#[test]
fn a_tidy_grid_keeps_the_mesh_order() {
    let prog = param();
    let e = prog.bind(&load_mesh("grid:60x60").unwrap()).unwrap();
    assert!(e.element_order("sym_dirichlet").is_none());
}

const FAILING: &str = "
dof x: vertex -> vec2;
data w: vertex -> f64;
energy pick(f: face) {
    let a = [1.0, 2.0];
    let i = w[f.v0] as i64;
    x[f.v1].x * a[i] + x[f.v2].y
}
";

#[test]
fn errors_name_the_mesh_face_on_every_path() {
    let prog = EnergyProgram::compile_str("pick.mad", FAILING).unwrap();
    let tidy = load_mesh("grid:40x40").unwrap();
    let mut seed = 11;
    let vmap = permutation(tidy.num_vertices(), &mut seed);
    let forder = permutation(tidy.num_faces(), &mut seed);
    let mesh = scrambled(&tidy, &vmap, &forder);
    let bad = vmap[tidy.num_vertices() / 2 + 7];
    for (threads, batched) in [(1, true), (2, true), (1, false)] {
        let mut e = prog.bind(&mesh).unwrap();
        assert!(e.element_order("pick").is_some());
        e.set_threads(threads).unwrap();
        // Every colour of two chunks or more on the workers, however small the mesh.
        e.set_min_parallel_work(0);
        e.set_batched(batched);
        let mut w = vec![0.0; mesh.num_vertices()];
        w[bad] = 5.0;
        e.set_data("w", &w).unwrap();
        let x = vec![0.5; e.ndofs()];
        let mut g = vec![0.0; e.ndofs()];
        let msg = e.gradient(&x, &mut g).unwrap_err().to_string();
        assert!(msg.contains("index 5 is out of bounds for length 2"), "{msg}");
        // `element F (vertices A, B, C): …`
        let face: usize = msg
            .split("element ")
            .nth(1)
            .and_then(|s| s.split_whitespace().next())
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no element in {msg:?}"));
        assert_eq!(
            mesh.triangles[face][0] as usize, bad,
            "{msg} (threads {threads}, batched {batched}) names a face whose v0 is not the bad vertex"
        );
        let [a, b, c] = mesh.triangles[face];
        assert!(
            msg.contains(&format!("element {face} (vertices {a}, {b}, {c}):")),
            "{msg}: the face's vertices"
        );
    }
}
