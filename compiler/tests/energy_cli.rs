//! `madc eval` and `madc bench` end to end.


use crate::cli_common;
use cli_common::madc;

#[test]
fn eval_mass_spring_at_rest_is_zero() {
    let (rc, out, err) = madc(&[
        "eval",
        "examples/mass_spring.mad",
        "--mesh",
        "grid:10x10",
        "--energy",
    ]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(out, "energy 0.0\n");
}

#[test]
fn eval_writes_gradient_hessian_and_hvp() {
    let dir = std::env::temp_dir().join(format!("mad-energy-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = |n: &str| dir.join(n).display().to_string();
    let n = 3 * 16;
    let mut v = Vec::new();
    mad_runtime::npy::write_npy(&[n], &vec![1.0; n], &mut v).unwrap();
    std::fs::write(p("v.npy"), v).unwrap();
    let hvp = format!("{}:{}", p("v.npy"), p("hv.npy"));
    let (rc, out, err) = madc(&[
        "eval",
        "examples/membrane.mad",
        "--mesh",
        "grid:4x4",
        "--set",
        "mu=2",
        "--energy",
        "--grad",
        &p("g.npy"),
        "--hessian",
        &p("h.mtx"),
        "--hvp",
        &hvp,
        "--threads",
        "2",
    ]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.starts_with("energy "), "{out}");
    let g = mad_runtime::npy::read_npy(&std::fs::read(p("g.npy")).unwrap()).unwrap();
    assert_eq!(g.into_field(16, 3).unwrap().len(), n);
    let h = std::fs::read_to_string(p("h.mtx")).unwrap();
    assert!(h.starts_with("%%MatrixMarket matrix coordinate real general"));
    // The Hessian is symmetric and H·1 = 0 for a translation-invariant energy.
    let hv = mad_runtime::npy::read_npy(&std::fs::read(p("hv.npy")).unwrap())
        .unwrap()
        .into_field(16, 3)
        .unwrap();
    assert!(hv.iter().all(|x| x.abs() < 1e-12), "{hv:?}");
}

#[test]
fn bench_first_line_is_the_median() {
    let (rc, out, err) = madc(&[
        "bench",
        "examples/mass_spring.mad",
        "--mesh",
        "grid:5x5",
        "--what",
        "hessian",
        "--runs",
        "3",
    ]);
    assert_eq!(rc, 0, "{err}");
    let first = out.lines().next().unwrap();
    let ms = first
        .strip_prefix("median ")
        .and_then(|s| s.strip_suffix(" ms"))
        .unwrap();
    assert!(ms.parse::<f64>().unwrap() >= 0.0);
}

#[test]
fn bench_spmv_and_every_workload_print_the_median_first() {
    for what in ["energy", "grad", "hessian-psd", "hvp", "spmv"] {
        let (rc, out, err) = madc(&[
            "bench",
            "examples/mass_spring.mad",
            "--mesh",
            "grid:6x6",
            "--what",
            what,
            "--runs",
            "2",
            "--threads",
            "2",
        ]);
        assert_eq!(rc, 0, "{what}: {err}");
        let first = out.lines().next().unwrap();
        let ms = first
            .strip_prefix("median ")
            .and_then(|s| s.strip_suffix(" ms"))
            .unwrap();
        assert!(ms.parse::<f64>().unwrap() >= 0.0, "{what}: {first}");
    }
}

#[test]
fn emit_clif_of_an_energy_file_shows_its_batched_loops() {
    let (rc, out, err) = madc(&["emit", "clif", "examples/mass_spring.mad"]);
    assert_eq!(rc, 0, "{err}");
    for kind in ["Value", "Grad", "Hess", "Hvp"] {
        assert!(
            out.contains(&format!("; batched {kind} loop of energy::spring")),
            "{kind}"
        );
    }
    // The Hessian loop has no float selects left as branches: it blends.
    let hess = out
        .split("; batched Hess loop")
        .nth(1)
        .unwrap()
        .split("; batched Hvp loop")
        .next()
        .unwrap();
    assert!(hess.contains("bitselect"), "{hess}");
}

#[test]
fn the_hessian_loop_of_a_barrier_energy_has_no_arithmetic_with_zero_or_one() {
    // Forward over reverse seeds unit vectors, which become matrices of zeros and ones; the
    // `if` of the barrier is differentiated into two `if`s that repeat the branch's work.
    // The code generator leaves out `x + 0`, `x * 1`, and the fused `if`s share their work.
    let (rc, out, err) = madc(&["emit", "clif", "examples/param.mad"]);
    assert_eq!(rc, 0, "{err}");
    let hess = out
        .split("; batched HessBlock loop")
        .nth(1)
        .unwrap()
        .split("; machine code")
        .next()
        .unwrap();
    // Scalar constants (`f64const`), and the 2×f64 constants of the loop over pairs of
    // elements (`vconst.f64x2 constN`, N's bits in the constant pool).
    let pool = |bits: &str| -> Vec<&str> {
        hess.lines()
            .filter(|l| l.trim_end().ends_with(&format!("= 0x{bits}{bits}")))
            .map(|l| l.split_whitespace().next().unwrap())
            .collect()
    };
    let named = |c: &str, bits: &str| -> Vec<&str> {
        let lanes = pool(bits);
        hess.lines()
            .filter(|l| {
                (l.contains(&format!("= f64const {c}")) && l.trim_end().ends_with(c))
                    || (l.contains("= vconst.f64x2 ")
                        && lanes.contains(&l.split_whitespace().last().unwrap()))
            })
            .map(|l| l.split_whitespace().next().unwrap())
            .collect()
    };
    let (zeros, ones) = (
        named("0.0", "0000000000000000"),
        named("0x1.0000000000000p0", "3ff0000000000000"),
    );
    let args = |line: &str| -> Vec<String> {
        let rhs = line.split(';').next().unwrap().split('=').nth(1).unwrap();
        rhs.split_whitespace().skip(1).map(|a| a.trim_end_matches(',').to_string()).collect()
    };
    // (`x * 0` stays: it is NaN for an infinite x.)
    for line in hess.lines() {
        if line.contains("= fadd") || line.contains("= fsub") {
            assert!(!args(line).iter().any(|a| zeros.contains(&a.as_str())), "{line}");
        }
        if line.contains("= fmul") {
            assert!(!args(line).iter().any(|a| ones.contains(&a.as_str())), "{line}");
        }
    }
    // The kernel is there twice: in the loop over pairs of elements and in the one-element
    // loop for the last element.
    assert!(hess.contains("f64x2"), "no loop over pairs of elements");
    let flops = hess.matches("= fadd").count() + hess.matches("= fmul").count() + hess.matches("= fsub").count();
    assert!(flops < 2 * 1300, "{flops} float additions and multiplications");
}

#[test]
fn bad_inputs_are_errors() {
    let dir = std::env::temp_dir().join(format!("mad-energy-cli-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let unfilled = dir.join("unfilled.mad");
    let src = "dof u: vertex -> vec2;\ndata Rinv: face -> mat2;\nenergy e(f: face) { frob2(mat2::cols(u[f.v1] - u[f.v0], u[f.v2] - u[f.v0]) * Rinv[f]) }\n";
    std::fs::write(&unfilled, src).unwrap();
    let (rc, _, err) = madc(&[
        "eval",
        unfilled.to_str().unwrap(),
        "--mesh",
        "grid:3x3",
        "--energy",
    ]);
    assert_eq!(rc, 1);
    assert!(err.contains("data `Rinv`"), "{err}");
    let (rc, _, err) = madc(&[
        "eval",
        "examples/mass_spring.mad",
        "--mesh",
        "grid:3x3",
        "--set",
        "nope=1",
        "--energy",
    ]);
    assert_eq!(rc, 1);
    assert!(err.contains("no param"), "{err}");
    let (rc, _, _) = madc(&[
        "eval",
        "examples/mass_spring.mad",
        "--mesh",
        "grid:0x3",
        "--energy",
    ]);
    assert_eq!(rc, 1);
}

#[test]
fn eval_ring_energy_with_mixed_derivative() {
    let dir = std::env::temp_dir().join(format!("mad-energy-cli-ring-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = |n: &str| dir.join(n).display().to_string();
    let mixed = format!("w:{}", p("dw.npy"));
    let (rc, out, err) = madc(&[
        "eval",
        "examples/laplacian_ring.mad",
        "--mesh",
        "grid:4x4",
        "--energy",
        "--grad",
        &p("g.npy"),
        "--hessian",
        &p("h.mtx"),
        "--mixed",
        &mixed,
    ]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.starts_with("energy "), "{out}");
    // At the rest shape only the umbrella term (linear in w, w = 1) has a gradient,
    // so ∂(∇E)/∂w equals ∇E.
    let read = |n: &str| {
        mad_runtime::npy::read_npy(&std::fs::read(p(n)).unwrap())
            .unwrap()
            .into_field(16, 3)
            .unwrap()
    };
    let (g, dw) = (read("g.npy"), read("dw.npy"));
    assert!(g.iter().any(|v| v.abs() > 1e-3));
    assert!(
        g.iter().zip(&dw).all(|(a, b)| (a - b).abs() <= 1e-12),
        "{g:?} vs {dw:?}"
    );
    let (rc, _, err) = madc(&[
        "eval",
        "examples/laplacian_ring.mad",
        "--mesh",
        "grid:4x4",
        "--mixed",
        "nope:x.npy",
    ]);
    assert_eq!(rc, 1);
    assert!(err.contains("no param"), "{err}");
}

#[test]
fn eval_contact_pairs_from_an_integer_array() {
    let dir = std::env::temp_dir().join(format!("mad-energy-cli-pairs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = |n: &str| dir.join(n).display().to_string();
    // An (2, 2) int64 .npy of vertex ids.
    let h = "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }";
    let h = format!("{h}{}\n", " ".repeat(127 - 10 - h.len()));
    let mut b = b"\x93NUMPY\x01\x00".to_vec();
    b.extend((h.len() as u16).to_le_bytes());
    b.extend(h.as_bytes());
    for v in [0i64, 5, 2, 7] {
        b.extend(v.to_le_bytes());
    }
    std::fs::write(p("P.npy"), b).unwrap();
    let base = [
        "eval",
        "examples/contact_barrier.mad",
        "--mesh",
        "grid:4x4",
        "--set",
        "dhat=5",
        "--energy",
    ];
    let (rc, without, err) = madc(&base);
    assert_eq!(rc, 0, "{err}");
    let mut with_pairs = base.to_vec();
    let (pp, hp) = (p("P.npy"), p("h.mtx"));
    with_pairs.extend(["--pairs", &pp, "--hessian", &hp]);
    let (rc, with, err) = madc(&with_pairs);
    assert_eq!(rc, 0, "{err}");
    let e = |s: &str| {
        s.trim()
            .strip_prefix("energy ")
            .unwrap()
            .parse::<f64>()
            .unwrap()
    };
    assert!(e(&with) > e(&without), "{with} vs {without}");
    // The pair (0, 5) couples its vertices in the Hessian.
    let h = std::fs::read_to_string(p("h.mtx")).unwrap();
    assert!(h.lines().any(|l| l.starts_with("1 16 ")), "no (0, 5) entry");
    let mut bad = base.to_vec();
    bad.extend(["--pairs", "examples/mass_spring.mad"]);
    assert_eq!(madc(&bad).0, 1);
}

#[test]
fn eval_starts_a_field_from_its_initializer() {
    // `u` starts at the Tutte embedding; `w` has no initializer and is not the
    // first dof field, so it starts at zeros (where `madc run` starts it too).
    let dir = std::env::temp_dir().join(format!("mad-energy-cli-init-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("init.mad");
    std::fs::write(
        &file,
        "dof u: vertex -> vec2 = tutte;\ndof w: vertex -> vec3;\n\
         energy e(v: vertex) { dot(u[v.v0], u[v.v0]) + 0.5 * dot(w[v.v0], w[v.v0]) }\n",
    )
    .unwrap();
    let (rc, out, err) = madc(&[
        "eval",
        &file.display().to_string(),
        "--mesh",
        "disk:4",
        "--energy",
    ]);
    assert_eq!(rc, 0, "{err}");
    let mesh = mad_runtime::mesh::load_mesh("disk:4").unwrap();
    let uv = mad_runtime::mesh::tutte::tutte_embedding(&mesh).unwrap();
    let expected: f64 = uv.iter().map(|q| q[0] * q[0] + q[1] * q[1]).sum::<f64>();
    let got: f64 = out.trim().strip_prefix("energy ").unwrap().parse().unwrap();
    assert!(
        (got - expected).abs() <= 1e-12 * expected.abs().max(1.0),
        "{got} vs {expected}"
    );
    assert_eq!(got, run_start_energy(&file.display().to_string(), "disk:4"), "eval and run start alike");
}

/// The `initial_energy` of `madc run FILE --mesh MESH --max-iters 0 --json`.
fn run_start_energy(file: &str, mesh: &str) -> f64 {
    let (rc, out, err) = madc(&["run", file, "--mesh", mesh, "--max-iters", "0", "--json"]);
    let summary = out.lines().last().unwrap_or_default();
    // Stopped by the cap of 0 iterations: "not converged", exit status 2.
    assert!(rc == 2 && summary.contains("\"status\":\"max_iterations\""), "{rc} {out} {err}");
    let start = summary.split("\"initial_energy\":").nth(1).unwrap();
    start.split(',').next().unwrap().parse().unwrap()
}

#[test]
fn eval_finds_the_pairs_of_a_broadphase_declaration() {
    // Two parallel triangles 0.3 apart: each vertex is within d̂ = 0.5 of the one above it
    // only (the others are at least √(1 + 0.09) away). Three pairs of (0.5 − 0.3)².
    let dir = std::env::temp_dir().join(format!("mad-energy-cli-bp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mesh = dir.join("two.obj");
    std::fs::write(&mesh, "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 0.3\nv 1 0 0.3\nv 0 1 0.3\nf 1 2 3\nf 4 6 5\n").unwrap();
    let file = dir.join("bp.mad");
    std::fs::write(
        &file,
        "dof x: vertex -> vec3;\nparam dhat: f64 = 0.5;\nbroadphase vertex_vertex within dhat;\n\
         energy c(e: pair) { let d = norm(x[e.v0] - x[e.v1]); if d < dhat { (dhat - d)^2 } else { 0.0 } }\n",
    )
    .unwrap();
    let (file, mesh) = (file.display().to_string(), mesh.display().to_string());
    let (rc, out, err) = madc(&["eval", &file, "--mesh", &mesh, "--energy"]);
    assert_eq!(rc, 0, "{err}");
    let got: f64 = out.trim().strip_prefix("energy ").unwrap().parse().unwrap();
    assert!((got - 3.0 * 0.04).abs() < 1e-15, "{got}");
    assert_eq!(got, run_start_energy(&file, &mesh));
    // `--set dhat=0.2`: nothing within d̂; the bench finds the pairs too (and times them).
    let (rc, out, err) = madc(&["eval", &file, "--mesh", &mesh, "--energy", "--set", "dhat=0.2"]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(out, "energy 0.0\n");
    let (rc, _, err) = madc(&["bench", &file, "--mesh", &mesh, "--what", "hessian", "--runs", "3"]);
    assert_eq!(rc, 0, "{err}");
}

#[test]
fn eval_reads_arrays_of_shape_v_by_d() {
    // §12.2: arrays in have shape (V, d) when the program has one dof field (the flat
    // form is accepted too); data arrays likewise (n, d).
    let dir = std::env::temp_dir().join(format!("mad-energy-cli-vd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = |n: &str| dir.join(n).display().to_string();
    let write = |name: &str, shape: &[usize], v: f64| {
        let mut b = Vec::new();
        let len = shape.iter().product();
        mad_runtime::npy::write_npy(shape, &vec![v; len], &mut b).unwrap();
        std::fs::write(p(name), b).unwrap();
    };
    write("x.npy", &[16, 3], 1.0);
    write("xf.npy", &[48], 1.0);
    write("X.npy", &[16, 3], 0.0);
    write("v.npy", &[16, 3], 1.0);
    // x ≡ 1, X ≡ 0 on grid:4x4: the edge term is 0, the fidelity term λ·3·16 = 24.
    for x in ["x.npy", "xf.npy"] {
        let hvp = format!("{}:{}", p("v.npy"), p("hv.npy"));
        let (rc, out, err) = madc(&[
            "eval",
            "examples/smooth.mad",
            "--mesh",
            "grid:4x4",
            "--x",
            &p(x),
            "--data",
            &format!("X={}", p("X.npy")),
            "--hvp",
            &hvp,
            "--energy",
        ]);
        assert_eq!(rc, 0, "{x}: {err}");
        assert_eq!(out, "energy 24.0\n", "{x}");
        // H·1 = 2λ·1 (the edge term is translation invariant).
        let hv = mad_runtime::npy::read_npy(&std::fs::read(p("hv.npy")).unwrap())
            .unwrap()
            .into_field(16, 3)
            .unwrap();
        assert!(hv.iter().all(|h| (h - 1.0).abs() < 1e-12), "{hv:?}");
    }
    // A transposed array is still an error that names the expected shape.
    write("xt.npy", &[3, 16], 1.0);
    let (rc, _, err) = madc(&[
        "eval",
        "examples/smooth.mad",
        "--mesh",
        "grid:4x4",
        "--x",
        &p("xt.npy"),
        "--energy",
    ]);
    assert_eq!(rc, 1);
    assert!(err.contains("expected (16, 3) or (48,)"), "{err}");
}

#[test]
fn a_param_without_default_must_be_set() {
    // §12.2: a param's default may be left out; the host must then supply the value.
    let dir = std::env::temp_dir().join(format!("mad-energy-cli-param-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("p.mad");
    std::fs::write(
        &file,
        "dof x: vertex -> vec3;\nparam n: i64 = 3;\nparam w: f64;\n\
         energy e(v: vertex) { w * (n as f64) * dot(x[v.v0], x[v.v0]) }\n",
    )
    .unwrap();
    let file = file.display().to_string();
    let eval = |extra: &[&str]| {
        let mut args = vec!["eval", &file, "--mesh", "grid:2x2", "--energy"];
        args.extend_from_slice(extra);
        madc(&args)
    };
    let (rc, out, err) = eval(&[]);
    assert_eq!((rc, out.as_str()), (1, ""), "{err}");
    assert!(
        err.contains("param `w` has no default") && err.contains("--set w=VALUE"),
        "{err}"
    );
    let (rc, _, err) = madc(&["run", &file, "--mesh", "grid:2x2"]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("param `w` has no default"), "{err}");
    // grid:2x2 is the unit square: Σ|x|² = 0 + 1 + 1 + 2 = 4, times w·n.
    let (rc, out, err) = eval(&["--set", "w=0.5"]);
    assert_eq!((rc, out.as_str()), (0, "energy 6.0\n"), "{err}");
    // An i64 param takes integers in its range only.
    for (bad, says) in [
        ("n=2.5", "2.5 is not an integer"),
        ("n=1e30", "1e30 is beyond the integers it holds exactly"),
        ("n=9223372036854775808", "9.223372036854776e18 is beyond the integers it holds exactly"),
        ("n=9007199254740993", "beyond the integers a param holds exactly"),
        // Above 2^53 in any written form (the f64 of 2^53 + 3 is 2^53 + 4).
        ("n=9007199254740995.0", "beyond the integers it holds exactly"),
        ("n=18014398509481984", "beyond the integers it holds exactly"),
    ] {
        let (rc, _, err) = eval(&["--set", "w=1", "--set", bad]);
        assert_eq!(rc, 1, "{bad}");
        assert!(err.contains(says), "{bad}: {err}");
    }
}

#[test]
fn eval_energy_covers_energy_terms_and_residuals_enter_the_jacobian() {
    // §12: `--energy` is the objective of the energy terms; `residual` terms enter
    // `--jacobian`. fit_residual.mad has only residuals: 85 edges + 36 vertices × 3 rows
    // on grid:6x6, over 36 × 3 unknowns.
    let j = std::env::temp_dir().join(format!("mad-energy-cli-jac-{}.mtx", std::process::id()));
    let j = j.display().to_string();
    let (rc, out, err) = madc(&[
        "eval",
        "examples/fit_residual.mad",
        "--mesh",
        "grid:6x6",
        "--energy",
        "--jacobian",
        &j,
    ]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(out, "energy 0.0\n");
    let mtx = std::fs::read_to_string(&j).unwrap();
    assert_eq!(
        mtx.lines()
            .nth(1)
            .unwrap()
            .split(' ')
            .take(2)
            .collect::<Vec<_>>(),
        ["193", "108"]
    );
    // `madc bench` times energy terms: a file of residuals alone is an error, not 0 ms.
    let (rc, out, err) = madc(&["bench", "examples/fit_residual.mad", "--mesh", "grid:6x6", "--what", "grad"]);
    assert_eq!((rc, out.as_str()), (1, ""), "{err}");
    assert!(err.contains("has no `energy` terms to time"), "{err}");
}

#[test]
fn eval_and_bench_of_a_file_without_terms_are_errors() {
    for cmd in [
        &[
            "eval",
            "examples/newton_sqrt.mad",
            "--mesh",
            "grid:3x3",
            "--energy",
        ][..],
        &[
            "bench",
            "examples/newton_sqrt.mad",
            "--mesh",
            "grid:3x3",
            "--what",
            "energy",
        ][..],
    ] {
        let (rc, out, err) = madc(cmd);
        assert_eq!(rc, 1, "{cmd:?}");
        assert!(out.is_empty(), "{out}");
        assert!(
            err.contains("declares no `energy` or `residual` terms"),
            "{err}"
        );
    }
}

#[test]
fn a_run_time_error_in_a_term_exits_with_status_2() {
    // §14: run-time errors exit with status 2; §12.3: the message names the term and element.
    let file = std::env::temp_dir().join(format!("mad-energy-cli-pick-{}.mad", std::process::id()));
    std::fs::write(
        &file,
        "dof x: vertex -> vec3;\nenergy pick(e: ring) { let n = e.nbrs[5]; dot(x[n], x[n]) }\n",
    )
    .unwrap();
    let file = file.display().to_string();
    for cmd in [
        &["eval", &file, "--mesh", "grid:4x4", "--energy"][..],
        &["bench", &file, "--mesh", "grid:4x4", "--what", "grad"][..],
        &["run", &file, "--mesh", "grid:4x4"][..],
    ] {
        let (rc, _, err) = madc(cmd);
        assert_eq!(rc, 2, "{cmd:?}: {err}");
        assert!(
            err.contains(
                "run-time error: term `pick`, element 0: index 5 is out of bounds for length 3"
            ),
            "{err}"
        );
        // §10: and where, in the source (line 2: a ring's neighbour is read where it is used,
        // `x[n]`).
        assert!(err.contains(&format!("{file}:2:")), "{cmd:?}: {err}");
    }
}

#[test]
fn run_time_errors_in_terms_and_updates_show_their_source_line() {
    // §10: the failing operation's line, from every kernel (value, gradient, Hessian,
    // projected Hessian, HVP), inside a function the term calls, and in an update.
    let dir = std::env::temp_dir().join(format!("mad-energy-cli-rtline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("t.mad");
    std::fs::write(
        &file,
        "dof x: vertex -> vec2;\n\
         fn pick(a: [f64; 3], i: i64) -> f64 {\n\
         \x20   a[i]\n\
         }\n\
         energy spring(e: edge) {\n\
         \x20   let d = x[e.v1] - x[e.v0];\n\
         \x20   let i = if x[e.v0].x > 0.5 { 7 } else { 1 };\n\
         \x20   pick([1.0, 2.0, 3.0], i) * dot(d, d)\n\
         }\n",
    )
    .unwrap();
    let file = file.display().to_string();
    let v = dir.join("v.npy").display().to_string();
    let mut bytes = Vec::new();
    mad_runtime::npy::write_npy(&[36, 2], &[1.0; 72], &mut bytes).unwrap();
    std::fs::write(&v, bytes).unwrap();
    let hvp = format!("{v}:{}", dir.join("o.npy").display());
    let h = dir.join("h.mtx").display().to_string();
    let g = dir.join("g.npy").display().to_string();
    for what in [
        &["--energy"][..],
        &["--grad", &g][..],
        &["--hessian", &h][..],
        &["--hessian", &h, "--project-psd"][..],
        &["--hvp", &hvp][..],
    ] {
        let mut cmd = vec!["eval", file.as_str(), "--mesh", "grid:6x6", "--threads", "1"];
        cmd.extend_from_slice(what);
        let (rc, _, err) = madc(&cmd);
        assert_eq!(rc, 2, "{what:?}: {err}");
        assert!(err.contains("index 7 is out of bounds for length 3"), "{what:?}: {err}");
        assert!(err.contains(&format!("{file}:3:5")), "{what:?}: {err}");
        assert!(err.contains("this operation failed"), "{what:?}: {err}");
    }
    let (rc, _, err) = madc(&["run", &file, "--mesh", "grid:6x6"]);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains(&format!("--> {file}:3:5")), "{err}");
    let file = dir.join("u.mad");
    std::fs::write(
        &file,
        "dof x: vertex -> vec2;\nstate s: edge -> f64;\n\
         update s(e: edge) { [1.0, 2.0][if x[e.v0].x > 0.5 { 4 } else { 0 }] }\n\
         energy spring(e: edge) { s[e] * dot(x[e.v1] - x[e.v0], x[e.v1] - x[e.v0]) }\n",
    )
    .unwrap();
    let file = file.display().to_string();
    let (rc, _, err) = madc(&["eval", &file, "--mesh", "grid:6x6", "--energy"]);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("update `s`, element"), "{err}");
    assert!(err.contains(&format!("{file}:3:21")), "{err}");
}

#[test]
fn unset_data_defaults_to_the_rest_geometry() {
    // §12.2: vertex positions, edge lengths and triangle areas; other data must be set.
    let dir = std::env::temp_dir().join(format!("mad-energy-cli-data-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("d.mad");
    std::fs::write(
        &file,
        "dof x: vertex -> vec3;\ndata a: face -> f64;\ndata l: edge -> f64;\n\
         data px: vertex -> f64;\ndata p: vertex -> vec3;\n\
         energy ea(f: face) { a[f] }\nenergy el(e: edge) { l[e] }\n\
         energy ep(v: vertex) { px[v.v0] + 10.0 * p[v.v0].y }\n",
    )
    .unwrap();
    // grid:2x2 is the unit square in two triangles: areas 1, lengths 4 + √2, Σx = 2, Σy = 2.
    let (rc, out, err) = madc(&[
        "eval",
        &file.display().to_string(),
        "--mesh",
        "grid:2x2",
        "--energy",
    ]);
    assert_eq!(rc, 0, "{err}");
    let e: f64 = out.trim().strip_prefix("energy ").unwrap().parse().unwrap();
    assert!(
        (e - (1.0 + 4.0 + 2f64.sqrt() + 2.0 + 20.0)).abs() < 1e-12,
        "{e}"
    );
    let file = dir.join("m.mad");
    std::fs::write(
        &file,
        "dof x: vertex -> vec3;\ndata m: vertex -> mat2;\nenergy e(v: vertex) { m[v.v0][0, 0] }\n",
    )
    .unwrap();
    let (rc, _, err) = madc(&[
        "eval",
        &file.display().to_string(),
        "--mesh",
        "grid:2x2",
        "--energy",
    ]);
    assert_eq!(rc, 1);
    assert!(
        err.contains("data `m` (vertex -> mat2) has no values"),
        "{err}"
    );
}

#[test]
fn zero_threads_or_runs_are_errors() {
    for (cmd, msg) in [
        (
            &[
                "eval",
                "examples/smooth.mad",
                "--mesh",
                "grid:3x3",
                "--energy",
                "--threads",
                "0",
            ][..],
            "--threads 0",
        ),
        (
            &[
                "bench",
                "examples/smooth.mad",
                "--mesh",
                "grid:3x3",
                "--what",
                "energy",
                "--runs",
                "0",
            ][..],
            "--runs 0",
        ),
        (
            &[
                "run",
                "examples/smooth.mad",
                "--mesh",
                "grid:3x3",
                "--threads",
                "0",
            ][..],
            "--threads 0",
        ),
    ] {
        let (rc, out, err) = madc(cmd);
        assert_eq!(rc, 1, "{cmd:?}");
        assert!(out.is_empty() && err.contains(msg), "{cmd:?}: {err}");
    }
}

#[test]
fn eval_without_an_output_says_what_it_can_do() {
    let (rc, out, err) = madc(&["eval", "examples/smooth.mad", "--mesh", "grid:3x3"]);
    assert_eq!(rc, 1);
    assert!(out.is_empty());
    assert!(err.contains("nothing to evaluate: pass --energy"), "{err}");
}

#[test]
fn mesh_files_with_a_byte_order_mark_or_crlf_lines_read() {
    // A unit right triangle in OBJ and OFF, as Windows tools write them.
    let dir = std::env::temp_dir().join(format!("mad-energy-cli-bom-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prog = dir.join("area.mad");
    std::fs::write(
        &prog,
        "dof x: vertex -> vec3;\ndata a: face -> f64;\nenergy e(f: face) { a[f] }\n",
    )
    .unwrap();
    let files = [
        ("bom.obj", "\u{feff}v 0 0 0\nv 1 0 0\nv 1 1 0\nf 1 2 3\n"),
        ("crlf.obj", "v 0 0 0\r\nv 1 0 0\r\nv 1 1 0\r\nf 1 2 3\r\n"),
        (
            "bom.off",
            "\u{feff}OFF\r\n3 1 0\r\n0 0 0\r\n1 0 0\r\n1 1 0\r\n3 0 1 2\r\n",
        ),
    ];
    for (name, text) in files {
        let mesh = dir.join(name);
        std::fs::write(&mesh, text).unwrap();
        let (rc, out, err) = madc(&[
            "eval",
            &prog.display().to_string(),
            "--mesh",
            &mesh.display().to_string(),
            "--energy",
        ]);
        assert_eq!((rc, out.as_str()), (0, "energy 0.5\n"), "{name}: {err}");
    }
}

#[test]
fn eval_runs_the_updates_once_as_a_solve_starts() {
    // ARAP's rotations are a state filled by a ring update: at the rest shape they are the
    // identity, so only the handle energy remains, and `eval` reports the energy `run`
    // starts from.
    let (rc, out, err) = madc(&["eval", "examples/arap.mad", "--mesh", "sphere:1", "--energy"]);
    assert_eq!(rc, 0, "{err}");
    let got: f64 = out.trim().strip_prefix("energy ").unwrap().parse().unwrap();
    let (rc, out, err) = madc(&[
        "run",
        "examples/arap.mad",
        "--mesh",
        "sphere:1",
        "--max-iters",
        "1",
        "--json",
    ]);
    // One iteration does not converge: exit status 2 (§14), with the summary written.
    assert_eq!(rc, 2, "{err}");
    let summary = out.lines().find(|l| l.contains("\"summary\"")).expect("a summary line");
    let key = "\"initial_energy\":";
    let at = summary.find(key).unwrap() + key.len();
    let start: f64 = summary[at..]
        .split([',', '}'])
        .next()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(got.to_bits(), start.to_bits(), "eval {got} vs the solve's start {start}");
    // With R = 0 (no update) the ARAP part would be Σ w‖e‖² > 0 on top of the handles.
    let (rc, out, _) = madc(&[
        "eval",
        "examples/arap.mad",
        "--mesh",
        "sphere:1",
        "--energy",
        "--set",
        "k_handle=0",
    ]);
    assert_eq!(rc, 0);
    let arap: f64 = out.trim().strip_prefix("energy ").unwrap().parse().unwrap();
    assert!(arap.abs() < 1e-9, "the rest shape with its own rotations: {arap}");
}

#[test]
fn a_term_without_elements_on_the_mesh_is_warned_about() {
    // A diamond term on one triangle: no interior edge, so no element.
    let dir = std::env::temp_dir().join(format!("mad-energy-cli-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mesh = dir.join("one.obj");
    std::fs::write(&mesh, "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n").unwrap();
    let file = dir.join("dia.mad");
    std::fs::write(&file, "dof x: vertex -> vec3;\nenergy bend(d: diamond) { dot(x[d.v2], x[d.v3]) }\nenergy pin(v: vertex) { dot(x[v.v0], x[v.v0]) }\n").unwrap();
    let (file, mesh) = (file.display().to_string(), mesh.display().to_string());
    for cmd in [&["eval", &file, "--mesh", &mesh, "--energy"][..], &["run", &file, "--mesh", &mesh, "--max-iters", "1"]] {
        let (_, _, err) = madc(cmd);
        assert!(err.contains("term `bend` (diamond) has no elements on this mesh: it adds nothing"), "{cmd:?}: {err}");
        assert!(!err.contains("`pin`"), "{err}");
    }
}

/// `--project-psd` without `--hessian` changes nothing: an error, as flags without effect are
/// for `madc run`. `--mixed` along a param that an `update` turns into a state warns that the
/// derivative leaves that path out (states are constant to differentiation).
#[test]
fn eval_flags_without_effect_and_mixed_through_states() {
    let (rc, _, err) = madc(&["eval", "examples/mass_spring.mad", "--mesh", "grid:3x3", "--grad", "/dev/null", "--project-psd"]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("--project-psd applies to --hessian"), "{err}");
    let out = std::env::temp_dir().join(format!("mad-mixed-{}.npy", std::process::id()));
    let spec = format!("k:{}", out.display());
    let (rc, _, err) = madc(&["eval", "examples/cloth_sphere.mad", "--mesh", "grid:3x3", "--mixed", &spec]);
    assert_eq!(rc, 0, "{err}");
    assert!(err.contains("warning: --mixed k: state(s) `spring_c`"), "{err}");
}

/// A `print` in a term, an update or a function they call writes nothing (the kernels run
/// per element): `eval` and `run` say so, naming the term; a term that does not print is
/// not named.
#[test]
fn a_print_in_a_term_or_update_is_warned_about() {
    let dir = std::env::temp_dir().join(format!("mad-energy-cli-print-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("pe.mad");
    std::fs::write(
        &file,
        "dof x: vertex -> vec3;\nfn sq(v: vec3) -> f64 { print(\"in sq\"); dot(v, v) }\n\
         energy e(v: vertex) { 0.5 * sq(x[v.v0]) }\nenergy quiet(v: vertex) { x[v.v0].x }\n\
         state s: vertex -> f64;\nupdate s(v: vertex) { print(1.0); 1.0 }\n",
    )
    .unwrap();
    let file = file.display().to_string();
    for cmd in [&["eval", &file, "--mesh", "grid:2x2", "--energy"][..], &["run", &file, "--mesh", "grid:2x2", "--max-iters", "1"]] {
        let (_, out, err) = madc(cmd);
        assert!(err.contains("warning: energy `e` calls `print`"), "{cmd:?}: {err}");
        assert!(err.contains("warning: update `s` calls `print`"), "{cmd:?}: {err}");
        assert!(!err.contains("`quiet`"), "{err}");
        assert!(!out.contains("in sq"), "{out}");
    }
}

/// Objective weights that are not finite: an error that names the energy (not a "constant
/// term"), however the param got there; a data field read only by a static update must be
/// set like one a term reads.
#[test]
fn non_finite_weights_and_unset_update_data_are_named() {
    let dir = std::env::temp_dir().join(format!("mad-energy-cli-weights-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("w.mad");
    std::fs::write(
        &file,
        "dof x: vertex -> vec3;\nparam k: f64 = 1.0;\nenergy a(e: vertex) { dot(x[e.v0], x[e.v0]) }\nobjective = k * k * a;\n",
    )
    .unwrap();
    let file = file.display().to_string();
    for set in ["k=inf", "k=nan", "k=1e200"] {
        let (rc, _, err) = madc(&["eval", &file, "--mesh", "grid:2x2", "--energy", "--set", set]);
        assert_eq!(rc, 1, "{set}: {err}");
        assert!(err.contains("the weight of energy `a` is") && !err.contains("constant term"), "{set}: {err}");
    }
    let (rc, _, err) = madc(&["run", &file, "--mesh", "grid:2x2", "--set", "k=inf"]);
    assert!(rc != 0 && !err.contains("objective: objective:"), "{err}");
    let upd = dir.join("u.mad");
    std::fs::write(
        &upd,
        "dof x: vertex -> f64;\ndata D: vertex -> vec4;\nstate A: vertex -> f64;\n\
         update A(e: vertex) { D[e.v0].w }\nenergy q(e: vertex) { A[e.v0] * x[e.v0] }\n",
    )
    .unwrap();
    let upd = upd.display().to_string();
    let (rc, _, err) = madc(&["eval", &upd, "--mesh", "grid:2x2", "--energy"]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("data `D`") && err.contains("has no values"), "{err}");
    // Data that only an energy reads, in a file with an update: reported as unset data, not
    // as the update's error.
    let term_only = dir.join("t.mad");
    std::fs::write(
        &term_only,
        "dof x: vertex -> f64;\ndata M: face -> mat2;\nstate s: face -> f64;\n\
         update s(e: face) { 0.5 }\nenergy q(e: face) { let m = M[e]; x[e.v0] * m[0, 0] + s[e] }\n",
    )
    .unwrap();
    let (rc, _, err) = madc(&["eval", &term_only.display().to_string(), "--mesh", "grid:3x3", "--energy"]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.starts_with("error: data `M` (face -> mat2) has no values"), "{err}");
}

/// `--data` fills `data` fields; a `state` takes its initial values from `--init` or its
/// declaration, so `--data` naming one is an error that says so.
#[test]
fn data_naming_a_state_is_an_error() {
    let dir = std::env::temp_dir().join(format!("mad-energy-cli-state-data-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("s.mad");
    std::fs::write(
        &file,
        "dof x: vertex -> f64;\nstate c: vertex -> f64;\nupdate c(e: vertex) { 2.0 }\nenergy q(e: vertex) { c[e.v0] * x[e.v0] }\n",
    )
    .unwrap();
    let npy = dir.join("c.npy");
    let mut bytes = Vec::new();
    mad_runtime::npy::write_npy(&[4], &[1.0; 4], &mut bytes).unwrap();
    std::fs::write(&npy, bytes).unwrap();
    let (file, npy) = (file.display().to_string(), npy.display().to_string());
    let (rc, _, err) = madc(&["eval", &file, "--mesh", "grid:2x2", "--energy", "--data", &format!("c={npy}")]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("`c` is a state") && err.contains("--init c="), "{err}");
}
