//! Every mesh-energy example on 1, 2 and 3 threads: the same bits for the
//! energy, gradient, Hessian values (plain and projected) and HVP, with the
//! output buffers filled with NaN before each call, so an entry the
//! evaluation fails to clear (or clears after a contribution) shows up; and
//! the batched loops against the element-by-element path.

use mad::energy::EnergyProgram;
use mad_runtime::mesh::load_mesh;

fn rnd(seed: &mut u64) -> f64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
}

type Bits = Vec<u64>;

fn bits(a: &[f64]) -> Bits {
    a.iter().map(|f| f.to_bits()).collect()
}

/// (energy, gradient, Hessian, projected Hessian, HVP, gradient alone) as bits.
/// `min_work`: the binding's parallel threshold (`None`: its default).
fn evaluate(file: &str, mesh: &str, threads: usize, batched: bool, min_work: Option<usize>) -> [Bits; 6] {
    let path = format!("{}/../examples/{file}", env!("CARGO_MANIFEST_DIR"));
    let prog = EnergyProgram::compile_file(&path).unwrap();
    let mesh = load_mesh(mesh).unwrap();
    let mut me = prog.bind(&mesh).unwrap();
    me.set_threads(threads).unwrap();
    if let Some(w) = min_work {
        me.set_min_parallel_work(w);
    }
    me.set_batched(batched);
    let mut s = 17;
    let x: Vec<f64> = me
        .default_x()
        .iter()
        .map(|v| v + 0.01 * rnd(&mut s))
        .collect();
    let v: Vec<f64> = (0..me.ndofs()).map(|_| rnd(&mut s)).collect();
    let (n, nnz) = (me.ndofs(), me.nnz());
    let (mut g, mut h, mut hp, mut hv, mut g2) = (
        vec![f64::NAN; n],
        vec![f64::NAN; nnz],
        vec![f64::NAN; nnz],
        vec![f64::NAN; n],
        vec![f64::NAN; n],
    );
    let e = me.hessian(&x, &mut g, &mut h, false).unwrap();
    let mut gp = vec![f64::NAN; n];
    let ep = me.hessian(&x, &mut gp, &mut hp, true).unwrap();
    assert_eq!(
        e.to_bits(),
        ep.to_bits(),
        "{file}: energy with and without projection"
    );
    assert_eq!(
        bits(&g),
        bits(&gp),
        "{file}: gradient with and without projection"
    );
    me.hvp(&x, &v, &mut hv).unwrap();
    let e2 = me.gradient(&x, &mut g2).unwrap();
    for (what, a) in [
        ("gradient", &g),
        ("Hessian", &h),
        ("projected Hessian", &hp),
        ("HVP", &hv),
    ] {
        assert!(
            a.iter().all(|f| f.is_finite()),
            "{file} on {threads} threads: {what} has an uncleared entry"
        );
    }
    [
        vec![e.to_bits(), e2.to_bits()],
        bits(&g),
        bits(&h),
        bits(&hp),
        bits(&hv),
        bits(&g2),
    ]
}

/// `a` and `b` agree to `tol` relative to the larger magnitude in `b`.
fn close(a: &Bits, b: &Bits, tol: f64) -> bool {
    let f = |v: &Bits| v.iter().map(|&x| f64::from_bits(x)).collect::<Vec<f64>>();
    let (a, b) = (f(a), f(b));
    let scale = b.iter().fold(0.0f64, |m, x| m.max(x.abs())).max(1e-300);
    a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| (x - y).abs() <= tol * scale)
}

fn check(file: &str, mesh: &str) {
    let one = evaluate(file, mesh, 1, true, None);
    // The element-by-element path (its outputs cleared in a separate pass) is
    // the reference for what the batched loops store and add.
    let reference = evaluate(file, mesh, 1, false, None);
    for (i, what) in ["energies", "gradient", "Hessian", "projected Hessian", "HVP", "gradient alone"].iter().enumerate() {
        assert!(close(&one[i], &reference[i], 1e-12), "{file} on {mesh}: batched {what} differs from the element path");
    }
    // Every colour of two chunks or more on the workers (threshold 0), and the default
    // threshold, which keeps the small colours on the calling thread.
    for (threads, min_work) in [(2, Some(0)), (3, Some(0)), (2, None)] {
        let many = evaluate(file, mesh, threads, true, min_work);
        for (i, what) in [
            "energies",
            "gradient",
            "Hessian",
            "projected Hessian",
            "HVP",
            "gradient alone",
        ]
        .iter()
        .enumerate()
        {
            assert!(
                one[i] == many[i],
                "{file} on {mesh}: {what} differs between 1 and {threads} threads"
            );
        }
    }
}

#[test]
fn springs() {
    check("mass_spring.mad", "grid:30x30");
}

#[test]
fn flag_and_cloth() {
    check("flag.mad", "grid:30x30");
    check("cloth.mad", "grid:30x30");
}

#[test]
fn membrane_and_bending() {
    check("membrane.mad", "grid:24x24");
    check("bending.mad", "grid:24x24");
}

#[test]
fn smoothing() {
    check("smooth.mad", "sphere:3");
    check("smooth_gd.mad", "sphere:3");
}

#[test]
fn rings() {
    check("laplacian_ring.mad", "sphere:3");
}

#[test]
fn contact_terms() {
    check("contact_barrier.mad", "grid:24x24");
    check("cloth_sphere.mad", "grid:24x24");
}
