//! Reverse-mode adjoints whose local derivative is a quotient (`log`, `atan`,
//! `asin`, `acos`, `/`): they divide the cotangent (`g / d`) where the divisor
//! varies in the region being built, keep the reciprocal `1 / d` where it is
//! invariant there (a loop body reading a parameter), and keep their strong
//! zeros and special values either way. References are the closed-form
//! derivatives written in Rust.

use mad::ad::show::{Derivative, derivative_ir};
use mad::back::interp;
use mad::front::{SourceFiles, compile};
use mad::{Program, Value};

const SRC: &str = "
fn fl(c: f64, x: f64) -> f64 { c * log(x) }
fn fa(c: f64, x: f64) -> f64 { c * atan(x) }
fn fs(c: f64, x: f64) -> f64 { c * asin(x) }
fn fc(c: f64, x: f64) -> f64 { c * acos(x) }
fn fd(c: f64, a: f64, b: f64) -> f64 { c * (a / b) }
fn gl(c: f64, x: f64) -> (f64, f64) { grad(fl)(c, x) }
fn ga(c: f64, x: f64) -> (f64, f64) { grad(fa)(c, x) }
fn gs(c: f64, x: f64) -> (f64, f64) { grad(fs)(c, x) }
fn gc(c: f64, x: f64) -> (f64, f64) { grad(fc)(c, x) }
fn gd(c: f64, a: f64, b: f64) -> (f64, f64, f64) { grad(fd)(c, a, b) }
fn loop_inv(s: f64, n: i64) -> f64 {
    let mut t = 0.0;
    for i in 0..n { t += (i as f64) / s + log(s); }
    t
}
fn loop_var(s: f64, n: i64) -> f64 {
    let mut t = 0.0;
    for i in 0..n { let u = s + (i as f64); t += 1.0 / u + log(u); }
    t
}
fn loop_ext(p: vec2, n: i64) -> f64 {
    let mut t = 0.0;
    for i in 0..n { t += (i as f64) / p.y + log(p.y); }
    t
}
fn gi(s: f64, n: i64) -> f64 { grad(loop_inv, 0)(s, n) }
fn gv(s: f64, n: i64) -> f64 { grad(loop_var, 0)(s, n) }
";

fn floats(v: &Value) -> Vec<f64> {
    match v {
        Value::F64(x) => vec![*x],
        Value::Tuple(items) => items.iter().flat_map(floats).collect(),
        other => panic!("not floats: {other:?}"),
    }
}

/// The gradient from the interpreter and from compiled code, which agree bit for bit.
fn grad(prog: &Program, name: &str, args: &[f64]) -> Vec<f64> {
    let vals: Vec<Value> = args.iter().map(|&a| Value::F64(a)).collect();
    let f = prog.func_ref(name).expect("function");
    let mut out = Vec::new();
    let jit = floats(&prog.jit().call(f, &vals, &mut out).expect("runs"));
    let interp = floats(&interp::call(prog.module(), f, &vals, &mut out).expect("runs"));
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(
        bits(&jit),
        bits(&interp),
        "{name}{args:?}: compiled and interpreted agree"
    );
    jit
}

fn close(got: f64, want: f64) -> bool {
    got == want || (got - want).abs() <= 4.0 * f64::EPSILON * want.abs()
}

#[test]
fn quotient_adjoints_match_the_closed_forms() {
    let prog = Program::compile_str("q.mad", SRC).unwrap();
    for (c, x) in [(1.0, 0.3), (-2.5, 0.7), (3.0, -0.4)] {
        let g = grad(&prog, "ga", &[c, x]);
        assert!(close(g[1], c / (1.0 + x * x)), "atan at {x}: {}", g[1]);
        let g = grad(&prog, "gs", &[c, x]);
        assert!(
            close(g[1], c / (1.0 - x * x).sqrt()),
            "asin at {x}: {}",
            g[1]
        );
        let g = grad(&prog, "gc", &[c, x]);
        assert!(
            close(g[1], -c / (1.0 - x * x).sqrt()),
            "acos at {x}: {}",
            g[1]
        );
        let g = grad(&prog, "gd", &[c, x, 1.7]);
        assert!(close(g[1], c / 1.7), "d/da at {x}: {}", g[1]);
        assert!(close(g[2], -c * x / (1.7 * 1.7)), "d/db at {x}: {}", g[2]);
    }
    for (c, x) in [(1.0, 0.3), (-2.5, 7.0), (1e-300, 1e-10)] {
        let g = grad(&prog, "gl", &[c, x]);
        assert_eq!(g[1], c / x, "log at {x}: the cotangent divided once");
    }
}

#[test]
fn quotient_adjoints_keep_strong_zeros_and_special_values() {
    let prog = Program::compile_str("q.mad", SRC).unwrap();
    // A zero cotangent gives +0 even where the divisor is 0 (0/0 would be NaN).
    for c in [0.0, -0.0] {
        assert_eq!(grad(&prog, "gl", &[c, 0.0])[1].to_bits(), 0f64.to_bits());
        assert_eq!(grad(&prog, "gs", &[c, 1.0])[1].to_bits(), 0f64.to_bits());
        assert_eq!(grad(&prog, "gc", &[c, 1.0])[1].to_bits(), 0f64.to_bits());
        let g = grad(&prog, "gd", &[c, 1.0, 0.0]);
        assert_eq!(g[1].to_bits(), 0f64.to_bits(), "d/da of 0*(1/0)");
        assert_eq!(g[2].to_bits(), 0f64.to_bits(), "d/db of 0*(1/0)");
    }
    // A nonzero cotangent keeps the IEEE values of the old form.
    assert_eq!(grad(&prog, "gl", &[2.0, 0.0])[1], f64::INFINITY);
    assert_eq!(grad(&prog, "gl", &[2.0, -0.0])[1], f64::NEG_INFINITY);
    assert_eq!(grad(&prog, "gs", &[2.0, 1.0])[1], f64::INFINITY);
    assert_eq!(grad(&prog, "gc", &[2.0, 1.0])[1], f64::NEG_INFINITY);
    let g = grad(&prog, "gd", &[2.0, 1.0, 0.0]);
    assert_eq!((g[1], g[2]), (f64::INFINITY, f64::NEG_INFINITY));
    let g = grad(&prog, "gd", &[2.0, 0.0, 0.0]);
    assert!(g[1] == f64::INFINITY && g[2].is_nan(), "{g:?}");
    assert!(
        grad(&prog, "gl", &[f64::NAN, 2.0])[1].is_nan(),
        "a NaN cotangent is not zero"
    );
}

#[test]
fn loops_divide_by_varying_divisors_and_keep_invariant_reciprocals() {
    let prog = Program::compile_str("q.mad", SRC).unwrap();
    let n = 5;
    let s: f64 = 1.5;
    let want_inv: f64 = (0..n).map(|i| -(i as f64) / (s * s) + 1.0 / s).sum();
    let want_var: f64 = (0..n)
        .map(|i| {
            let u = s + i as f64;
            -1.0 / (u * u) + 1.0 / u
        })
        .sum();
    let args = [Value::F64(s), Value::I64(n)];
    let gi = floats(&prog.call("gi", &args).unwrap())[0];
    let gv = floats(&prog.call("gv", &args).unwrap())[0];
    assert!(
        (gi - want_inv).abs() <= 1e-14 * want_inv.abs(),
        "{gi} vs {want_inv}"
    );
    assert!(
        (gv - want_var).abs() <= 1e-14 * want_var.abs(),
        "{gv} vs {want_var}"
    );

    // The reverse loop of `loop_inv` multiplies by the reciprocal of the
    // parameter `s` (invariant there); the one of `loop_var` divides by `u`.
    // The text of the reverse-mode function (printed after the `grad` wrapper).
    let ir = |name: &str| {
        let mut files = SourceFiles::new();
        let id = files.add("q.mad".to_string(), SRC.to_string());
        let mut compiled = compile(&mut files, id).unwrap_or_else(|_| panic!("compiles"));
        let f = compiled.function(name).expect("function").func;
        let text =
            derivative_ir(&mut compiled.module, f, Derivative::Grad).expect("differentiates");
        let vjp = text.rfind("func @").expect("a function");
        assert!(text[vjp..].contains("$vjp"), "{text}");
        text[vjp..].to_string()
    };
    // `p.y` is read inside the loop body but from the invariant `p`.
    for name in ["loop_inv", "loop_ext"] {
        let inv = ir(name);
        let reciprocal = inv.lines().filter(|l| l.contains(" = div %")).any(|l| {
            let num = l
                .split("div ")
                .nth(1)
                .and_then(|r| r.split(',').next())
                .unwrap_or("");
            inv.contains(&format!("{num} = const 1.0 : f64"))
        });
        assert!(
            reciprocal,
            "{name}: an invariant divisor keeps `div 1.0, s`: {inv}"
        );
    }
    let var = ir("loop_var");
    let body = &var[var.rfind("scf.for").expect("a reverse loop")..];
    let numerators: Vec<&str> = body
        .lines()
        .filter(|l| l.contains(" = div %"))
        .filter_map(|l| l.split("div ").nth(1).and_then(|r| r.split(',').next()))
        .collect();
    let is_one = |num: &str| var.contains(&format!("{num} = const 1.0 : f64"));
    // `1.0 / u` of the source stays; the adjoints of `log(u)` and of the
    // division divide the cotangent by `u` (one shared quotient) instead of
    // multiplying it by `1 / u`.
    assert!(numerators.iter().any(|n| is_one(n)), "{body}");
    assert!(
        numerators.iter().any(|n| !is_one(n)),
        "a quotient of the cotangent: {body}"
    );
}
