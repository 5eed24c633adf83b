//! `madc` as a user runs it: exit codes, where output goes, colour only on a terminal.

use std::io::Write;
use std::process::{Command, Output};

fn madc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_madc"))
        .args(args)
        .output()
        .expect("madc runs")
}

fn write_temp(name: &str, src: &[u8]) -> String {
    let dir = std::env::temp_dir().join(format!("madc-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::File::create(&path)
        .unwrap()
        .write_all(src)
        .unwrap();
    path.to_str().unwrap().to_string()
}

/// `madc run FILE [--interp] -- ARG`.
fn run_main(file: &str, interp: bool, arg: &str) -> Output {
    let mut args = vec!["run", file];
    if interp {
        args.push("--interp");
    }
    args.extend(["--", arg]);
    madc(&args)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `madc run FILE` on the JIT and on the interpreter: both must print `want`.
fn assert_both_engines_print(file: &str, want: &str) {
    for interp in [false, true] {
        let mut args = vec!["run", file];
        if interp {
            args.push("--interp");
        }
        let o = madc(&args);
        assert_eq!(text(&o.stdout), want, "interp {interp}: {}", text(&o.stderr));
    }
}

#[test]
fn version_and_help() {
    let out = madc(&["--version"]);
    assert!(out.status.success());
    assert!(
        text(&out.stdout).starts_with("madc "),
        "{}",
        text(&out.stdout)
    );
    let out = madc(&["--help"]);
    assert!(out.status.success());
    let help = text(&out.stdout);
    for cmd in ["check", "run", "emit"] {
        assert!(help.contains(cmd), "{help}");
    }
}

#[test]
fn run_passes_arguments_and_prints_the_result() {
    let f = write_temp(
        "args.mad",
        b"fn main(a: f64, n: i64) -> f64 { a * (n as f64) }\n",
    );
    let out = madc(&["run", &f, "--", "1.5", "4"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "6.0\n");
    let out = madc(&["run", &f, "--interp", "--", "1.5", "4"]);
    assert_eq!(text(&out.stdout), "6.0\n");
    // wrong argument count and a bad number are errors before running
    let out = madc(&["run", &f, "--", "1.5"]);
    assert_eq!(out.status.code(), Some(1));
    let out = madc(&["run", &f, "--", "x", "4"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("`x` is not an f64"),
        "{}",
        text(&out.stderr)
    );
}

/// Numbers out of the parameter type's range are errors, as the same literal in source is;
/// `inf` and `nan` spelled out are taken as written.
#[test]
fn arguments_out_of_range_are_errors() {
    let f = write_temp("range.mad", b"fn main(x: f64, y: f32) { print(x); print(y); }\n");
    for (x, y, bad) in [("1e400", "1.0", "`1e400` is out of the range of f64"), ("1.0", "1e39", "`1e39` is out of the range of f32")] {
        let out = madc(&["run", &f, "--", x, y]);
        assert_eq!(out.status.code(), Some(1), "{x} {y}");
        assert!(text(&out.stderr).contains(bad), "{}", text(&out.stderr));
        assert!(out.stdout.is_empty());
    }
    let out = madc(&["run", &f, "--", "-inf", "nan"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "-inf\nNaN\n");
}

/// Command-line text cannot say which overload it is for: an overloaded entry is an error
/// that lists the overloads.
#[test]
fn an_overloaded_entry_is_an_error() {
    let f = write_temp(
        "overloaded.mad",
        b"fn ov(x: i64) -> i64 { x }\nfn ov(x: f64) -> f64 { x }\nfn main() { print(ov(2)); }\n",
    );
    let out = madc(&["run", &f, "--entry", "ov", "--", "3.5"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("`ov` is overloaded") && err.contains("fn ov(x: i64) -> i64") && err.contains("fn ov(x: f64) -> f64"), "{err}");
    let out = madc(&["run", &f]);
    assert_eq!(text(&out.stdout), "2\n");
}

#[test]
fn entry_selects_another_function() {
    let f = write_temp(
        "entry.mad",
        b"fn main() { print(1.0); }\nfn other() { print(2.5); }\n",
    );
    let out = madc(&["run", &f, "--entry", "other"]);
    assert_eq!(text(&out.stdout), "2.5\n");
    let out = madc(&["run", &f, "--entry", "missing"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("no function `missing`"));
}

#[test]
fn compile_errors_exit_1_with_plain_diagnostics_on_a_pipe() {
    let f = write_temp(
        "bad.mad",
        b"fn main() {\n    let x = nrom(vec3(1.0, 2.0, 3.0));\n    print(x + vec2(1.0, 2.0));\n}\n",
    );
    let out = madc(&["check", &f]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("E0100"), "{err}");
    assert!(err.contains("norm"), "{err}");
    assert!(!err.contains('\u{1b}'), "no colour on a pipe: {err}");
    let out = madc(&["check", "--color", "always", &f]);
    assert!(text(&out.stderr).contains('\u{1b}'));
}

#[test]
fn run_time_errors_exit_2() {
    let f = write_temp(
        "oob.mad",
        b"fn main() { let v = [1.0, 2.0]; let i = 5; print(v[i]); }\n",
    );
    for engine in [&[][..], &["--interp"][..]] {
        let mut args = vec!["run", f.as_str()];
        args.extend_from_slice(engine);
        let out = madc(&args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{engine:?}: {}",
            text(&out.stderr)
        );
        let err = text(&out.stderr);
        assert!(err.contains("out of bounds"), "{err}");
        // the failing operation is located in the source
        assert!(err.contains("oob.mad:1:50"), "{engine:?}: {err}");
        assert!(err.contains("v[i]"), "{err}");
    }
}

#[test]
fn too_deep_a_recursion_is_located_at_the_call_on_both_engines() {
    let f = write_temp(
        "deep.mad",
        b"fn deep(n: i64) -> i64 { if n == 0 { 0 } else { 1 + deep(n - 1) } }\nfn main() { print(deep(100000000)); }\n",
    );
    for engine in [&[][..], &["--interp"][..]] {
        let mut args = vec!["run", f.as_str()];
        args.extend_from_slice(engine);
        let out = madc(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{engine:?}: {err}");
        assert!(err.contains("recursion is too deep"), "{err}");
        // The recursive call `deep(n - 1)`, column 53.
        assert!(err.contains("deep.mad:1:53"), "{engine:?}: {err}");
    }
}

#[test]
fn invalid_utf8_and_missing_files_are_errors() {
    let f = write_temp("latin1.mad", b"fn main() { print(1.0); } // caf\xe9\n");
    let out = madc(&["check", &f]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("not valid UTF-8"),
        "{}",
        text(&out.stderr)
    );
    let out = madc(&["check", "/nonexistent/x.mad"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("cannot read"));
}

#[test]
fn emit_ir_and_clif() {
    let f = write_temp(
        "emit.mad",
        b"fn sq(x: f64) -> f64 { x * x }\nfn main() { print(sq(3.0)); }\n",
    );
    let out = madc(&["emit", "ir", &f]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let ir = text(&out.stdout);
    assert!(ir.contains("func @sq") && ir.contains("mul"), "{ir}");
    // the printed IR parses back
    mad::ir::parse::parse_module(&ir).expect("emitted IR parses");
    let out = madc(&["emit", "clif", &f]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let clif = text(&out.stdout);
    assert!(clif.contains("fmul"), "{clif}");
}

#[test]
fn emit_derivative_of_an_overloaded_name_covers_the_overloads_that_have_one() {
    let f = write_temp(
        "overloaded.mad",
        b"fn sq(n: i64) -> i64 { n * n }\nfn sq(x: f64) -> f64 { x * x }\n",
    );
    let out = madc(&["emit", "ir", "--grad", "sq", &f]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let ir = text(&out.stdout);
    assert!(ir.contains("func @\"sq$f64$grad\""), "{ir}");
    mad::ir::parse::parse_module(&ir).expect("emitted IR parses");
    // No overload has a gradient: every reason, by signature.
    let f = write_temp(
        "int_only.mad",
        b"fn sq(n: i64) -> i64 { n * n }\nfn sq(b: bool) -> bool { b }\n",
    );
    let out = madc(&["emit", "ir", "--grad", "sq", &f]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("`fn sq(n: i64) -> i64` returns i64") && err.contains("`fn sq(b: bool) -> bool` returns bool"),
        "{err}"
    );
}

/// A UTF-8 byte-order mark at the start of a source file is skipped: the file compiles,
/// and diagnostics count lines and columns from the first character after it.
#[test]
fn a_leading_byte_order_mark_is_skipped() {
    let dir = std::env::temp_dir().join(format!("mad_bom_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ok = dir.join("ok.mad");
    std::fs::write(&ok, b"\xEF\xBB\xBFfn main() { print(1 + 2); }\n").unwrap();
    let o = madc(&["run", ok.to_str().unwrap()]);
    let (rc, out, err) = (o.status.code(), String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!((rc, out.as_ref()), (Some(0), "3\n"), "{err}");
    let o = madc(&["explain", ok.to_str().unwrap()]);
    let (rc, out, err) = (o.status.code(), String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(rc, Some(0), "{err}");
    assert!(out.contains("fn main"), "{out}");
    let bad = dir.join("bad.mad");
    std::fs::write(&bad, b"\xEF\xBB\xBFfn main() {\n    let x: i64 = 1.5;\n}\n").unwrap();
    let o = madc(&["check", bad.to_str().unwrap()]);
    let (rc, err) = (o.status.code(), String::from_utf8_lossy(&o.stderr));
    assert_eq!(rc, Some(1));
    assert!(err.contains("E0101") && err.contains("bad.mad:2:18"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `emit ir --hessian` of a function it cannot differentiate names `hessian`, not the
/// `grad` it is built on.
#[test]
fn emit_hessian_errors_name_hessian() {
    let f = write_temp("int_hess.mad", b"fn other(a: i64) -> i64 { a * 2 }\nfn main() {}\n");
    let o = madc(&["emit", "ir", "--hessian", "other", &f]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("`hessian` needs a function returning f64, and `fn other(a: i64) -> i64` returns i64"), "{err}");
    // Types are the source's (`vector`, not the IR's `tensor<f64; ?>`).
    let f = write_temp("vec_grad.mad", b"fn jv(x: vector) -> vector { x }\nfn main() {}\n");
    let o = madc(&["emit", "ir", "--grad", "jv", &f]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("`grad` needs a function returning f64, and `fn jv(x: vector) -> vector` returns vector"), "{err}");
}

/// A derivative discards the primal result, but not the run-time errors on the way to it:
/// `grad`, `jvp`, `hessian` and `jacobian` of a function whose unused `10 / n` divides by
/// zero, or which reads a parameter out of bounds, stop as the plain call does (exit 2),
/// at the first failing operation in program order.
#[test]
fn derivatives_keep_the_run_time_errors_of_the_primal() {
    let f = write_temp(
        "dead_errors.mad",
        b"fn q(x: f64, n: i64) -> f64 { let z = 10 / n; x * x }\n\
          fn r(x: f64, v: vector) -> f64 { let z = v[5]; x * x }\n\
          fn g(x: f64, v: vector) -> f64 { let mut s = x; for i in 0..5 { s = s * 2.0 + v[i]; } s }\n\
          fn main(w: i64) {\n\
            if w == 0 { print(grad(q)(1.0, 0)); }\n\
            if w == 1 { print(jvp(q)(1.0, 0, 1.0)); }\n\
            if w == 2 { print(hessian(q)(1.0, 0)); }\n\
            if w == 3 { print(jacobian(q)(1.0, 0)); }\n\
            if w == 4 { print(grad(r, 0)(1.0, ones(2))); }\n\
            if w == 5 { print(grad(g, 0)(1.0, ones(3))); }\n\
            if w == 6 { print(grad(q)(3.0, 2)); }\n\
          }\n",
    );
    for (w, says) in [
        ("0", "integer division by zero"),
        ("1", "integer division by zero"),
        ("2", "integer division by zero"),
        ("3", "integer division by zero"),
        ("4", "index 5 is out of bounds for length 2"),
        ("5", "index 3 is out of bounds for length 3"),
    ] {
        for interp in [false, true] {
            let mut args = vec!["run", f.as_str()];
            if interp {
                args.push("--interp");
            }
            args.extend(["--", w]);
            let o = madc(&args);
            let err = text(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{w} (interp {interp}): {err}");
            assert!(err.contains(says), "{w} (interp {interp}): {err}");
        }
    }
    let o = madc(&["run", &f, "--", "6"]);
    assert_eq!(text(&o.stdout).trim(), "6.0");
}

/// `pow` takes an integer exponent as `^` does, two integer literals adapt to `atan2` and
/// `pow`, and an integer power wraps for every exponent, beyond 2³² too.
#[test]
fn powers_of_every_documented_form() {
    let f = write_temp(
        "powers.mad",
        b"fn main(e: i64) { print(3 ^ e); print((-1) ^ e); print(pow(2.0, 3)); print(pow(2, 3)); print(atan2(1, 1)); print(pow(-1.0, e)); }\n",
    );
    for interp in [false, true] {
        let mut args = vec!["run", f.as_str()];
        if interp {
            args.push("--interp");
        }
        args.extend(["--", "4294967296"]);
        let o = madc(&args);
        assert_eq!(
            text(&o.stdout),
            "2491309678558969857\n1\n8.0\n8.0\n0.7853981633974483\n1.0\n",
            "interp {interp}: {}",
            text(&o.stderr)
        );
    }
}

/// A `matrix` literal or repeat whose rows are `vector`s; a row of another length is a
/// shape mismatch at run time, on both engines.
#[test]
fn matrix_literals_take_vector_rows() {
    let f = write_temp(
        "vector_rows.mad",
        b"fn main(n: i64) { let r = zeros(2); let s = ones(2); let m: matrix = [r, s]; print(m); \
          let q: matrix = [s; 3]; print(q); let bad = ones(n); let w: matrix = [r, bad]; print(w); }\n",
    );
    for interp in [false, true] {
        let mut args = vec!["run", f.as_str()];
        if interp {
            args.push("--interp");
        }
        let mut ok = args.clone();
        ok.extend(["--", "2"]);
        let o = madc(&ok);
        assert_eq!(
            text(&o.stdout),
            "[[0.0, 0.0], [1.0, 1.0]]\n[[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]]\n[[0.0, 0.0], [1.0, 1.0]]\n",
            "interp {interp}: {}",
            text(&o.stderr)
        );
        args.extend(["--", "3"]);
        let o = madc(&args);
        assert_eq!(o.status.code(), Some(2));
        assert!(text(&o.stderr).contains("shape mismatch"), "{}", text(&o.stderr));
    }
}

/// A write out of bounds (`m[i] = …`, `v[i] += …`) points at the whole place written, as a
/// read does, on both engines.
#[test]
fn out_of_bounds_writes_point_at_the_place() {
    let f = write_temp("oob_write.mad", b"fn main(w: i64) {\n    let mut m = ones(2, 2);\n    let mut v = ones(2);\n    let i = 2;\n    if w == 0 { m[i] = zeros(2); } else { v[i] += 1.0; }\n}\n");
    for (w, col) in [("0", "5:17"), ("1", "5:43")] {
        for interp in [false, true] {
            let mut args = vec!["run", f.as_str()];
            if interp {
                args.push("--interp");
            }
            args.extend(["--", w]);
            let o = madc(&args);
            let err = text(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{err}");
            assert!(err.contains(&format!("oob_write.mad:{col}")) && err.contains("^^^^ this operation failed"), "{w} {interp}: {err}");
        }
    }
}

/// Under `grad`, a run-time error in a loop's body points at the failing operation, for a
/// source-transformed `for` and a taped `while` alike, as in the plain call.
#[test]
fn loop_errors_under_derivatives_point_at_the_operation() {
    let f = write_temp(
        "loop_errors.mad",
        b"fn g(x: f64, v: vector) -> f64 { let mut s = x; for i in 0..5 { s = s * 2.0 + v[i]; } s }\n\
          fn h(x: f64, v: vector) -> f64 { let mut s = x; let mut i = 0; while s < 100.0 { s = s * 2.0 + v[i]; i += 1; } s }\n\
          fn main(w: i64) { if w == 0 { print(grad(g, 0)(1.0, ones(3))); } else { print(grad(h, 0)(1.0, ones(3))); } }\n",
    );
    for (w, at) in [("0", "loop_errors.mad:1:79"), ("1", "loop_errors.mad:2:96")] {
        for interp in [false, true] {
            let mut args = vec!["run", f.as_str()];
            if interp {
                args.push("--interp");
            }
            args.extend(["--", w]);
            let o = madc(&args);
            let err = text(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{err}");
            assert!(err.contains("index 3 is out of bounds") && err.contains(at), "{w} {interp}: {err}");
        }
    }
}

/// Tensors built at run time: an empty one of any extent, and a product too large to
/// hold is a run-time error (exit 2), the same on both engines; never an abort.
#[test]
fn huge_tensors_are_errors_and_empty_ones_are_fine() {
    let f = write_temp(
        "huge.mad",
        b"fn main(w: i64) {\n\
            if w == 0 { let a = zeros(200000, 0); let b = zeros(0, 200000); let c = a * b; print(rows(c)); }\n\
            if w == 1 { let a = zeros(100000000000, 0); let b = zeros(0, 100000000000); let c = a * b; print(rows(c)); }\n\
            if w == 2 { let a = zeros(20000000000, 0); print(rows(a)); }\n\
            if w == 3 { let a = zeros(3, 0); let b = zeros(0, 4); print(a * b); }\n\
            if w == 4 { let s: [vec3] = [vec3(1.0, 2.0, 3.0); 100000000000]; print(len(s)); }\n\
            if w == 5 { let s: vector = [1.0; 100000000000]; print(len(s)); }\n\
          }\n",
    );
    for interp in [false, true] {
        let run = |w: &str| run_main(&f, interp, w);
        // A repeat of a dynamic type: the same error, at once (no op per element at
        // compile time, no loop over the rows it could not make).
        for w in ["4", "5"] {
            let o = run(w);
            assert_eq!(o.status.code(), Some(2), "{w} {interp}: {}", text(&o.stderr));
            assert!(text(&o.stderr).contains("a repeat `[x; n]` or a loop's reverse-mode buffer: a tensor of shape [100000000000"), "{}", text(&o.stderr));
        }
        for w in ["0", "1"] {
            let o = run(w);
            assert_eq!(o.status.code(), Some(2), "{w} {interp}: {}", text(&o.stderr));
            assert!(text(&o.stderr).contains("a matrix product: a tensor of shape"), "{}", text(&o.stderr));
        }
        assert_eq!(text(&run("2").stdout), "20000000000\n", "interp {interp}");
        assert_eq!(text(&run("3").stdout), "[[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]\n");
    }
}

/// More of the primal's run-time errors a derivative keeps: reads through a tuple field or a
/// row of an argument; and an energy term's unused out-of-bounds read of a fixed-size local
/// stops the evaluation. `pow(2, n)` takes an integer exponent; the derivative of `x ^ 0`
/// (and the second derivative of `x ^ 1`) at 0 is 0.
#[test]
fn parts_of_arguments_keep_their_errors_and_powers_differentiate_at_zero() {
    let f = write_temp(
        "parts.mad",
        b"fn h3(t: (f64, vec2), n: i64) -> f64 { let z = t.1[n]; t.0 * t.0 }\n\
          fn h5(a: [vec2; 2], n: i64) -> f64 { let r = a[1]; let z = r[n]; a[0].x * a[0].x }\n\
          fn p(x: f64, n: i64) -> f64 { x ^ n }\n\
          fn main(w: i64) {\n\
            if w == 0 { print(grad(h3)((3.0, vec2(1.0, 2.0)), 2)); }\n\
            if w == 1 { print(hessian(h5)([vec2(1.0, 2.0), vec2(3.0, 4.0)], 2)); }\n\
            if w == 2 { print(grad(p)(0.0, 0)); print(hessian(p)(0.0, 1)); print(pow(2, w + 1)); }\n\
          }\n",
    );
    for interp in [false, true] {
        let run = |w: &str| run_main(&f, interp, w);
        for w in ["0", "1"] {
            let o = run(w);
            assert_eq!(o.status.code(), Some(2), "{w} {interp}: {}", text(&o.stderr));
            assert!(text(&o.stderr).contains("index 2 is out of bounds for length 2"));
        }
        assert_eq!(text(&run("2").stdout), "0.0\n[[0.0]]\n8.0\n", "interp {interp}");
    }
    let e = write_temp(
        "term_oob.mad",
        b"dof x: vertex -> vec2;\nparam n: i64 = 0;\n\
          energy s5(e: face) { let v = [1.0, 2.0]; let z = v[n + 1]; norm2(x[e.v0] - x[e.v1]) }\n",
    );
    let o = madc(&["eval", &e, "--mesh", "grid:2x2", "--energy", "--set", "n=1"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("index 2 is out of bounds for length 2"));
    let o = madc(&["eval", &e, "--mesh", "grid:2x2", "--energy"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

/// Output that cannot be written (a full device) is an error with exit status 1 for every
/// command, never a panic and never a silent success.
#[cfg(target_os = "linux")]
#[test]
fn a_full_output_device_is_an_error() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    // A program that prints more than a buffer holds (its output is written as it returns):
    // the same error, not a run-time error with status 2.
    let many = std::env::temp_dir().join(format!("mad-cli-many-prints-{}.mad", std::process::id()));
    std::fs::write(&many, "fn main() { for i in 0..100000 { print(i); } }\n").unwrap();
    let many = many.display().to_string();
    for args in [
        &["emit", "ir", "examples/bending.mad"][..],
        &["explain", "examples/bending.mad"],
        &["eval", "examples/bending.mad", "--mesh", "grid:3x3", "--energy"],
        &["run", "examples/smooth.mad", "--json"],
        &["run", "examples/hello.mad"],
        &["run", &many],
        &["run", &many, "--interp"],
    ] {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_madc"))
            .args(args)
            .current_dir(root)
            .stdout(full)
            .output()
            .unwrap();
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("error: cannot write the output"), "{args:?}: {err}");
        assert_eq!(err.matches("cannot write").count(), 1, "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    // `--help` and `--version` on a full standard output, and commands whose standard
    // error is full (diagnostics, iteration logs): exit status 1, not 0 or a crash (101).
    for (args, stderr_full) in [
        (&["--help"][..], false),
        (&["--version"], false),
        (&["help", "run"], false),
        (&["run", "examples/flag.mad"], true),
        (&["check", "tests/diagnostics/E0101_type_mismatch.mad"], true),
    ] {
        let full = || std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_madc"));
        cmd.args(args).current_dir(root);
        if stderr_full {
            cmd.stderr(full()).stdout(std::process::Stdio::null());
        } else {
            cmd.stdout(full());
        }
        let o = cmd.output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o.stderr));
    }
}

/// §11.1: a `select`'s untaken side does not reach the result's derivatives, also when it
/// holds a product with an infinite factor (0·(−∞) in reverse mode) and in second
/// derivatives taken by reverse over reverse; both engines, every operator.
#[test]
fn products_on_the_untaken_side_of_a_select() {
    let f = write_temp(
        "select_products.mad",
        b"fn f(x: f64, y: f64) -> f64 { select(x > 0.0, log(x) * y, y * y) }
fn g(x: f64) -> f64 { select(x > 0.0, 1.0 / x, x * x) }
fn main() {
    print(grad(f)(0.0, 2.0));
    print(jacobian(f)(0.0, 2.0));
    print(hessian(f)(0.0, 2.0));
    print(hessian(g)(0.0));
    print(grad(grad(g))(0.0));
    print(grad(grad(grad(g)))(0.0));
    print(hessian(f)(1.5, 2.0));
}
",
    );
    assert_both_engines_print(&f, "(0.0, 4.0)\n[[0.0, 4.0]]\n[[0.0, 0.0], [0.0, 2.0]]\n[[2.0]]\n2.0\n0.0\n\
             [[-0.8888888888888888, 0.6666666666666666], [0.6666666666666666, 0.0]]\n");
}

/// A `while` loop whose floating-point carried values do not depend on the arguments
/// carries no derivative: reverse mode runs it as it is (no tape), so `grad(grad(f))` and
/// `@ad(sct)` work, and `madc explain` says why; a loop that does depend still takes the
/// tape.
#[test]
fn loops_whose_values_do_not_vary_carry_no_derivative() {
    let f = write_temp(
        "constant_loop.mad",
        b"fn f(x: f64) -> f64 {
    let mut s = 1.0;
    let mut k = 0;
    while k < 3 { s = s * 2.0; k += 1; }
    s * x
}
@ad(sct)
fn h(x: f64) -> f64 {
    let mut s = 1.0;
    let mut k = 0;
    while k < 3 { s = s * 2.0; k += 1; }
    s * x * x
}
fn w(x: f64) -> f64 {
    let mut s = 1.0;
    while s < 10.0 { s = s * x; }
    s
}
fn main() {
    print(grad(grad(f))(1.5));
    print(grad(f)(1.5));
    print(grad(h)(1.5));
    print(hessian(h)(1.5));
    print(grad(w)(1.5));
}
",
    );
    assert_both_engines_print(&f, "0.0\n8.0\n24.0\n[[16.0]]\n45.5625\n");
    let o = madc(&["explain", f.as_str()]);
    let out = text(&o.stdout);
    assert!(out.contains("while at 4:5: no derivative flows (its carried values do not depend on the arguments)"), "{out}");
    assert!(out.contains("while at 16:5: tape"), "{out}");
}

/// A `matrix` repeat whose row is an array literal of integers: the literals adapt to f64,
/// as in a matrix literal (§3.4, §3.7).
#[test]
fn matrix_repeats_of_integer_rows() {
    let f = write_temp(
        "matrix_repeat_rows.mad",
        b"fn main() { let m: matrix = [[1, 2]; 3]; print(m); let v: matrix = [[1.5, 2]; 2]; print(v); }\n",
    );
    assert_both_engines_print(&f, "[[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]\n[[1.5, 2.0], [1.5, 2.0]]\n");
}

/// The mixed second derivative of `a ^ b` at `b = 0` is `1/a` (the function is smooth
/// there); the rule that takes ∂/∂a as 0 at `b = 0` applies only where the product is 0·∞
/// (`a = 0`), and keeps `x ^ 1` and `x ^ 0` at 0 as §11.1 says.
#[test]
fn pow_keeps_its_mixed_derivative_at_a_zero_exponent() {
    let f = write_temp(
        "pow_mixed.mad",
        b"fn pw(a: f64, b: f64) -> f64 { a ^ b }
fn ga(b: f64) -> f64 { grad(pw, 0)(2.0, b) }
fn x1(x: f64) -> f64 { x ^ 1.0 }
fn x0(x: f64) -> f64 { x ^ 0.0 }
fn main() {
    print(hessian(pw)(2.0, 0.0));
    print(grad(ga)(0.0));
    print(hessian(x1)(0.0));
    print(hessian(x0)(0.0));
    print(grad(pw)(0.0, 0.0));
}
",
    );
    assert_both_engines_print(
        &f,
        "[[0.0, 0.5], [0.5, 0.4804530139182014]]\n0.5\n[[0.0]]\n[[0.0]]\n(0.0, 0.0)\n",
    );
}

/// `hessian` (forward over reverse) through the untaken side of a `select` whose own
/// derivative is infinite there (`x ^ 1.5`, `tanh(log(x)) * y`, `exp(log(x)) * x` at 0):
/// the same second derivatives as `grad(grad(f))` and as the chosen side alone.
#[test]
fn hessians_through_an_untaken_side_with_an_infinite_derivative() {
    let f = write_temp(
        "select_hessians.mad",
        b"fn a(x: f64) -> f64 { select(x > 0.0, x ^ 1.5, x * x) }
fn b(x: f64) -> f64 { select(x > 0.0, exp(log(x)) * x, x * x) }
fn c(x: f64, y: f64) -> f64 { select(x > 0.0, tanh(log(x)) * y, y * y) }
fn e(x: f64) -> f64 { if x > -1.0 { (exp(x) - 1.0) * (exp(x) - 1.0) } else { x } }
fn main() {
    print((hessian(a)(0.0), grad(grad(a))(0.0), jvp(grad(a))(0.0, 1.0)));
    print((hessian(b)(0.0), grad(grad(b))(0.0)));
    print(hessian(c)(0.0, 3.0));
    print(hessian(e)(0.0));
}
",
    );
    assert_both_engines_print(
        &f,
        "([[2.0]], 2.0, (0.0, 2.0))\n([[2.0]], 2.0)\n[[0.0, 0.0], [0.0, 2.0]]\n[[2.0]]\n",
    );
}

/// Shape mismatches of dynamic values name the operation as the source writes it (not the
/// IR's `tensor.insert` …), the same on both engines, at the failing line.
#[test]
fn shape_mismatches_name_the_source_operation() {
    let f = write_temp(
        "shapes.mad",
        b"fn main(w: i64) {\n\
            let mut m = zeros(2, 2);\n\
            let v: vector = [1.0, 2.0, 3.0];\n\
            if w == 0 { m[0] = v; }\n\
            if w == 1 { print(ones(2) + v); }\n\
            if w == 2 { print(m * v); }\n\
            if w == 3 { let r: matrix = [ones(2), v]; print(r); }\n\
            if w == 4 { for i in 0..2 { m[i] = v; } }\n\
            if w == 5 { let mut s: [vec3] = [vec3(0.0, 0.0, 0.0); 3]; for i in 0..4 { s[i] = vec3(1.0, 2.0, 3.0); } }\n\
          }\n",
    );
    for interp in [false, true] {
        for (w, says, line) in [
            ("0", "a value of shape [3] stored into an element of shape [2]", 4),
            ("1", "`+` of operands of shapes [2] and [3]", 5),
            ("2", "a matrix product of shapes [2, 2] and [3]", 6),
            ("3", "a value of shape [3] stored into an element of shape [2]", 7),
            // Rows written in place in a loop check as the copying insert does.
            ("4", "a value of shape [3] stored into an element of shape [2]", 8),
            ("5", "index 3 is out of bounds for length 3", 9),
        ] {
            let o = run_main(&f, interp, w);
            let err = text(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{w} {interp}: {err}");
            assert!(err.contains(says), "{w} {interp}: {err}");
            assert!(err.contains(&format!("shapes.mad:{line}:")), "{w} {interp}: {err}");
            assert!(!err.contains("tensor."), "{w} {interp}: {err}");
        }
    }
}

/// A source whose lines end in CR alone is read line by line: its diagnostics name the line.
#[test]
fn a_source_with_cr_line_ends_reports_its_lines() {
    let f = write_temp("cr.mad", b"fn main() {\r    let x = 1.0;\r    print(y);\r}\r");
    let o = madc(&["check", &f]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("cr.mad:3:11"), "{err}");
}

/// `grad` of a function that writes out of bounds of a vector it builds, then reads the
/// element back, stops as the plain call does (folding the read would drop the write).
#[test]
fn a_derivative_keeps_the_error_of_an_element_written_then_read() {
    let f = write_temp(
        "write_read.mad",
        b"fn f(x: f64, n: i64) -> f64 { let mut w: vector = zeros(n); w[5] = x; w[5] * x }\n\
          fn main() { print(grad(f)(1.0, 3)); }\n",
    );
    for interp in [false, true] {
        let mut args = vec!["run", f.as_str()];
        if interp {
            args.push("--interp");
        }
        let o = madc(&args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{interp}: {err}");
        assert!(err.contains("index 5 is out of bounds for length 3"), "{interp}: {err}");
    }
}

/// `madc bench --entry NAME FILE -- ARGS`: timings of calls of a function, its arguments read
/// as `madc run` reads them; the mesh options do not mix with it, and an argument error names
/// the argument.
#[test]
fn bench_entry_times_a_function() {
    let file = write_temp("bench_entry.mad", b"fn f(n: i64, x: f64) -> f64 { let mut s = 0.0; for i in 0..n { s += x * (i as f64); } s }\n");
    let out = madc(&["bench", "--entry", "f", "--runs", "5", &file, "--", "100", "0.5"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("median ") && lines[0].ends_with(" ms"), "{text}");
    assert!(lines.contains(&"runs 5"), "{text}");
    let median: f64 = lines[0]["median ".len()..lines[0].len() - 3].parse().expect("a number");
    assert!(median > 0.0 && median.is_finite());

    let bad = madc(&["bench", "--entry", "f", &file, "--", "100", "half"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("argument 2 (`x: f64`)"), "{}", String::from_utf8_lossy(&bad.stderr));
    let mixed = madc(&["bench", "--entry", "f", "--mesh", "grid:2x2", &file, "--", "1", "1"]);
    assert_eq!(mixed.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&mixed.stderr).contains("cannot be used with '--mesh"));
    let neither = madc(&["bench", &file]);
    assert_eq!(neither.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&neither.stderr).contains("--what"));
}

#[test]
fn adbench_files_convert_to_the_arguments_of_the_programs() {
    // A GMM instance in ADBench's format with one point standing for all n = 3.
    let file = write_temp("adbench_gmm.txt", b"2 2 3\n0.1\n0.2\n1 2\n3 4\n0.5 0.6 0.7\n0.8 0.9 1.0\n0.3 0.4\n1.0 0\n");
    let prefix = format!("{}.converted", file);
    let out = madc(&["adbench", "gmm", &file, "-o", &prefix]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let args: Vec<String> = String::from_utf8_lossy(&out.stdout).split_whitespace().map(String::from).collect();
    assert_eq!(args[4..], ["1.0".to_string(), "0".to_string()]);
    assert!(args[3].ends_with("_x.npy"));
    let x = mad_runtime::npy::load(&args[3]).expect("the points");
    assert_eq!(x.shape, vec![3, 2]);
    assert_eq!(x.data, mad_runtime::TensorData::F64(vec![0.3, 0.4, 0.3, 0.4, 0.3, 0.4]));
    // The converted arguments run the benchmark's GMM program.
    let gmm = concat!(env!("CARGO_MANIFEST_DIR"), "/../benches/adbench/gmm.mad");
    let mut run = vec!["run", gmm, "--entry", "gmm_objective", "--"];
    run.extend(args.iter().map(String::as_str));
    let value = madc(&run);
    assert!(value.status.success(), "{}", String::from_utf8_lossy(&value.stderr));
    let v: f64 = String::from_utf8_lossy(&value.stdout).trim().parse().expect("a number");
    assert!(v.is_finite());
    // A file that does not fit: exit 1, the line named.
    let bad = write_temp("adbench_bad.txt", b"1 1 1\n1 2 3\n");
    let out = madc(&["adbench", "ba", &bad]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 2: the camera: 11 numbers expected, the file has 3 left"), "{}", String::from_utf8_lossy(&out.stderr));
}
