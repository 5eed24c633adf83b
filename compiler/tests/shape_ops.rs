//! Slices `t[lo..hi]`, `concat` and `reshape` from the language: values against closed
//! forms on both engines (bit for bit), gradients against central finite differences,
//! their compile-time errors with locations, and their run-time errors.

use mad::{Engine, Program, Value};
use mad_runtime::Tensor;

use crate::program_common::{call, flat};

const SOURCE: &str = "
fn pieces(v: vector) -> f64 {
    let a = v[1..3];
    let b = concat(a, v[..1], v[len(v) - 1..]);
    let m = reshape(concat(b, b), 2, 4);
    let r = m[1..];
    sum(hadamard(r, r)) + sum(b) * 2.0 + sum(reshape(m, 8)[6..]) + sin(m[0, 3]) * v[2]
}
fn g_pieces(v: vector) -> vector { grad(pieces)(v) }

// Windows of a vector in a loop: each slice is a copy, so writing `v` later does not change it.
fn windows(v: vector, w: i64) -> f64 {
    let mut s = 0.0;
    for i in 0..len(v) - w + 1 {
        let x = v[i..i + w];
        s += sum(hadamard(x, x)) * (i + 1) as f64;
    }
    s
}
fn g_windows(v: vector, w: i64) -> vector { grad(windows, 0)(v, w) }

fn rows_of(m: matrix) -> f64 {
    let top = m[..1];
    let rest = m[1..];
    let both = concat(rest, top);
    sum(hadamard(both, m)) + exp(both[0, 1])
}
fn g_rows_of(m: matrix) -> matrix { grad(rows_of)(m) }

fn kept() -> vector {
    let mut v: vector = [1.0, 2.0, 3.0];
    let w = v[0..2];
    v[0] = 9.0;
    concat(w, v)
}

fn fixed() -> (vector, matrix, [i64]) {
    let q = vec4(1, 2, 3, 4);
    let m = mat2x3(1, 2, 3, 4, 5, 6);
    let a: [i64; 3] = [7, 8, 9];
    (concat(q[2..], [5.0, 6.0]), concat(m[1..], zeros(1, 3)), concat(a[1..], a[..1]))
}

fn empty(v: vector) -> (vector, i64) {
    let e = v[2..2];
    (concat(e, v[..0], e), len(reshape(e, 0)))
}

fn fixed_parts(m: mat2x3, v: vec6) -> f64 {
    let a = reshape(m, 6);
    let b = reshape(v, 3, 2);
    let c = concat(v[..2], v[4..], v);
    sum(hadamard(a, a)) + b[2, 1] * b[0, 0] + sum(m[1..]) + sum(hadamard(c, c)) * 0.5
}
fn g_fixed_parts(m: mat2x3, v: vec6) -> (mat2x3, vec6) { grad(fixed_parts)(m, v) }

fn bounds(v: vector, lo: i64, hi: i64) -> f64 { sum(v[lo..hi]) }
fn shape(v: vector, r: i64, c: i64) -> matrix { reshape(v, r, c) }
fn stack(a: matrix, b: matrix) -> matrix { concat(a, b) }
";

fn vector(xs: &[f64]) -> Value {
    Value::Tensor(Tensor::vector(xs.to_vec()))
}

fn matrix(r: usize, c: usize, xs: &[f64]) -> Value {
    Value::Tensor(Tensor::from_f64(vec![r, c], xs.to_vec()).expect("shape"))
}

/// `name` on both engines, which must agree bit for bit.
fn both(p: &Program, name: &str, args: &[Value]) -> Vec<f64> {
    let jit = flat(&call(p, Engine::Jit, name, args));
    let interp = flat(&call(p, Engine::Interpreter, name, args));
    assert_eq!(jit.len(), interp.len(), "{name}");
    for (a, b) in jit.iter().zip(&interp) {
        assert_eq!(a.to_bits(), b.to_bits(), "{name}: JIT {a} vs interpreter {b}");
    }
    jit
}

/// The gradient `g` of `f` at `x` (parameter 0, the rest `extra`) against central differences.
fn check_gradient(p: &Program, f: &str, g: &[f64], x: &[f64], make: &dyn Fn(&[f64]) -> Value, extra: &[Value]) {
    assert_eq!(g.len(), x.len(), "{f}");
    for k in 0..x.len() {
        let at = |d: f64| {
            let mut y = x.to_vec();
            y[k] += d;
            let mut args = vec![make(&y)];
            args.extend_from_slice(extra);
            both(p, f, &args)[0]
        };
        let h = 1e-6;
        let fd = (at(h) - at(-h)) / (2.0 * h);
        assert!((g[k] - fd).abs() <= 1e-7 * (1.0 + fd.abs()), "{f}: d/dx[{k}] {} vs {fd}", g[k]);
    }
}

#[test]
fn values_match_closed_forms_on_both_engines() {
    let p = Program::compile_str("shapes.mad", SOURCE).expect("compiles");
    let v = [1.0, 2.0, 3.0, 4.0, 5.0];
    // b = [2, 3, 1, 5]; r = [[2, 3, 1, 5]]; m[0, 3] = 5.
    let expected = 39.0 + 22.0 + 6.0 + 5f64.sin() * 3.0;
    assert_eq!(both(&p, "pieces", &[vector(&v)]), vec![expected]);
    assert_eq!(both(&p, "kept", &[]), vec![1.0, 2.0, 9.0, 2.0, 3.0]);
    let fixed = call(&p, Engine::Jit, "fixed", &[]);
    assert_eq!(fixed, call(&p, Engine::Interpreter, "fixed", &[]));
    let Value::Tuple(parts) = fixed else { panic!("a tuple") };
    assert_eq!(parts[0], vector(&[3.0, 4.0, 5.0, 6.0]));
    assert_eq!(parts[1], matrix(2, 3, &[4.0, 5.0, 6.0, 0.0, 0.0, 0.0]));
    let Value::Tensor(ints) = &parts[2] else { panic!("a tensor") };
    assert_eq!(ints.shape, vec![3]);
    assert_eq!(format!("{:?}", ints.data), "I64([8, 9, 7])");
    let Value::Tuple(parts) = call(&p, Engine::Interpreter, "empty", &[vector(&v)]) else { panic!("a tuple") };
    assert_eq!(parts[0], vector(&[]));
    assert_eq!(parts[1], Value::I64(0));
    assert_eq!(both(&p, "shape", &[vector(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), Value::I64(3), Value::I64(2)]), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let Value::Tensor(t) = call(&p, Engine::Jit, "shape", &[vector(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), Value::I64(3), Value::I64(2)]) else {
        panic!("a tensor")
    };
    assert_eq!(t.shape, vec![3, 2]);
}

#[test]
fn gradients_match_finite_differences() {
    let p = Program::compile_str("shapes.mad", SOURCE).expect("compiles");
    let x = [0.3, -1.1, 0.8, 2.0, -0.4, 1.3];
    let g = both(&p, "g_pieces", &[vector(&x)]);
    check_gradient(&p, "pieces", &g, &x, &|y| vector(y), &[]);
    let g = both(&p, "g_windows", &[vector(&x), Value::I64(3)]);
    check_gradient(&p, "windows", &g, &x, &|y| vector(y), &[Value::I64(3)]);
    let g = both(&p, "g_rows_of", &[matrix(3, 2, &x)]);
    check_gradient(&p, "rows_of", &g, &x, &|y| matrix(3, 2, y), &[]);
    // Fixed-size operands: the adjoints keep their fixed types (`mat2x3`, `vec6`).
    let y: Vec<f64> = (0..12).map(|i| 0.3 * i as f64 - 1.1).collect();
    let args = |y: &[f64]| vec![matrix(2, 3, &y[..6]), Value::Tensor(Tensor::vector(y[6..].to_vec()))];
    let g = both(&p, "g_fixed_parts", &args(&y));
    assert_eq!(g.len(), 12);
    for k in 0..12 {
        let at = |d: f64| {
            let mut z = y.clone();
            z[k] += d;
            both(&p, "fixed_parts", &args(&z))[0]
        };
        let fd = (at(1e-6) - at(-1e-6)) / 2e-6;
        assert!((g[k] - fd).abs() <= 1e-7 * (1.0 + fd.abs()), "fixed_parts: d/dx[{k}] {} vs {fd}", g[k]);
    }
}

#[test]
fn run_time_errors_name_the_bounds_and_shapes() {
    let p = Program::compile_str("shapes.mad", SOURCE).expect("compiles");
    let v = vector(&[1.0, 2.0, 3.0]);
    for engine in [Engine::Jit, Engine::Interpreter] {
        let run = |name: &str, args: &[Value]| {
            p.call_with(engine, name, args, &mut std::io::sink()).expect_err("must fail").to_string()
        };
        for (lo, hi) in [(-1, 2), (2, 1), (0, 4)] {
            let e = run("bounds", &[v.clone(), Value::I64(lo), Value::I64(hi)]);
            assert!(e.contains(&format!("slice {lo}..{hi} is out of bounds for length 3")), "{engine:?}: {e}");
        }
        let e = run("shape", &[v.clone(), Value::I64(2), Value::I64(2)]);
        assert!(e.contains("`reshape` of 3 elements (shape [3]) to shape [2, 2]"), "{engine:?}: {e}");
        let e = run("shape", &[v.clone(), Value::I64(-1), Value::I64(-3)]);
        assert!(e.contains("`reshape` to a negative extent -1"), "{engine:?}: {e}");
        let e = run("stack", &[matrix(1, 2, &[1.0, 2.0]), matrix(1, 3, &[1.0, 2.0, 3.0])]);
        assert!(e.contains("`concat` of shapes [1, 2] and [1, 3]"), "{engine:?}: {e}");
    }
}

#[test]
fn compile_errors_have_locations() {
    let cases = [
        ("fn f() -> vector { let w = vec3(1, 2, 3); w[1..4] }", "slice bound 4 is out of bounds for length 3"),
        ("fn f(v: vector) -> vector { v[-1..2] }", "slice bound -1 is negative"),
        ("fn f(x: f64) -> f64 { x[0..1] }", "only vectors, matrices, arrays and slices can be sliced"),
        ("fn f(v: vector) -> vector { concat(v, 1.0) }", "no overload of `concat` takes arguments (vector, f64)"),
        ("fn f(v: vector) -> vector { concat(v, zeros(2, 2)) }", "no overload of `concat` takes arguments (vector, matrix)"),
        ("fn f() -> vector { concat() }", "expected 1 or more argument(s)"),
        ("fn f(v: vector) -> vector { reshape(v, 1.5) }", "expected i64, found f64"),
        ("fn f(v: vector) -> vector { reshape(v) }", "expected 2 or 3 argument(s)"),
        ("fn f(v: vector) -> vector { reshape(2.0, 1) }", "no overload of `reshape` takes arguments (f64, i64)"),
        ("fn f(v: vector) -> vector { let mut w = v; w[0..1] = v[1..2]; w }", "invalid left-hand side of assignment"),
    ];
    for (src, want) in cases {
        let e = Program::compile_str("bad.mad", src).err().unwrap_or_else(|| panic!("must not compile: {src}")).to_string();
        assert!(e.contains(want), "{src}: {e}");
        assert!(e.contains("bad.mad:1:"), "{src}: no location in {e}");
    }
}
