//! The special-function builtins (`log1p`, `expm1`, `erf`, `lgamma`, `digamma`, `trigamma`,
//! `polygamma`, `softplus`, `sigmoid`) from `.mad` source, on both engines: values, `f32`
//! and elementwise forms, and first to fourth derivatives through `grad`, `jvp` and
//! `hessian` against their closed forms and central differences.
//!
//! The closed forms use `mad_runtime::special` for the polygamma values they name; those
//! routines are checked against reference values in the runtime's own tests.

use mad::{Engine, Program, Tensor, Value};
use mad_runtime::special::{digamma, polygamma, sigmoid, trigamma};
use std::f64::consts::FRAC_2_SQRT_PI;

use crate::program_common::{call, flat};

const ENGINES: [Engine; 2] = [Engine::Jit, Engine::Interpreter];

/// `(name, body in x, f′, f″)` of every scalar function.
type Closed = fn(f64) -> f64;
const FUNCTIONS: [(&str, &str, Closed, Closed); 9] = [
    (
        "log1p",
        "log1p(x)",
        |x| 1.0 / (1.0 + x),
        |x| -1.0 / ((1.0 + x) * (1.0 + x)),
    ),
    ("expm1", "expm1(x)", f64::exp, f64::exp),
    (
        "erf",
        "erf(x)",
        |x| FRAC_2_SQRT_PI * (-x * x).exp(),
        |x| -2.0 * x * FRAC_2_SQRT_PI * (-x * x).exp(),
    ),
    ("lgamma", "lgamma(x)", digamma, trigamma),
    ("digamma", "digamma(x)", trigamma, |x| polygamma(2.0, x)),
    (
        "trigamma",
        "trigamma(x)",
        |x| polygamma(2.0, x),
        |x| polygamma(3.0, x),
    ),
    (
        "polygamma2",
        "polygamma(2, x)",
        |x| polygamma(3.0, x),
        |x| polygamma(4.0, x),
    ),
    ("softplus", "softplus(x)", sigmoid, |x| {
        sigmoid(x) * sigmoid(-x)
    }),
    (
        "sigmoid",
        "sigmoid(x)",
        |x| sigmoid(x) * sigmoid(-x),
        |x| sigmoid(x) * sigmoid(-x) * (sigmoid(-x) - sigmoid(x)),
    ),
];

/// Points inside every domain (`log1p` needs x > −1), negative ones included.
const POINTS: [f64; 4] = [-0.6, 0.3, 1.7, 4.2];

fn source() -> String {
    let mut src = String::new();
    for (name, body, _, _) in FUNCTIONS {
        src += &format!(
            "fn f_{name}(x: f64) -> f64 {{ {body} }}\n\
             fn g_{name}(x: f64) -> f64 {{ grad(f_{name})(x) }}\n\
             fn gg_{name}(x: f64) -> f64 {{ grad(grad(f_{name}))(x) }}\n\
             fn j_{name}(x: f64) -> (f64, f64) {{ jvp(f_{name})(x, 1.0) }}\n\
             fn h_{name}(x: f64) -> f64 {{ hessian(f_{name})(x)[0, 0] }}\n"
        );
    }
    src += r#"
fn lgamma3(x: f64) -> f64 { grad(grad(grad(f_lgamma)))(x) }
fn lgamma4(x: f64) -> f64 { grad(grad(grad(grad(f_lgamma))))(x) }
fn dlgamma(x: f64) -> f64 { grad(f_lgamma)(x) }
fn lgamma3h(x: f64) -> f64 { hessian(dlgamma)(x)[0, 0] }

fn sp_sum(v: vector) -> f64 { sum(softplus(v)) }
fn g_sp_sum(v: vector) -> vector { grad(sp_sum)(v) }
fn lg_sum(v: vec3) -> f64 { sum(lgamma(v)) }
fn h_lg_sum(v: vec3) -> matrix { hessian(lg_sum)(v) }
fn pg_sum(v: vec3) -> f64 { sum(polygamma(1, v)) }
fn g_pg_sum(v: vec3) -> vec3 { grad(pg_sum)(v) }
fn elementwise(v: vector) -> (vector, vector, vector, vector) {
    (log1p(v), erf(v), digamma(v), polygamma(3, v))
}

fn erf32(x: f32) -> f32 { erf(x) }
fn j_erf32(x: f32) -> (f32, f32) { jvp(erf32)(x, 1.0) }
fn all32(x: f32) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32) {
    (log1p(x), expm1(x), erf(x), lgamma(x), digamma(x), trigamma(x), polygamma(2, x), softplus(x), sigmoid(x))
}
fn all64(x: f64) -> (f64, f64, f64, f64, f64, f64, f64, f64, f64) {
    (log1p(x), expm1(x), erf(x), lgamma(x), digamma(x), trigamma(x), polygamma(2, x), softplus(x), sigmoid(x))
}
fn order(n: i64, x: f64) -> f64 { polygamma(n, x) }
"#;
    src
}

fn program() -> Program {
    Program::compile_str("special.mad", &source()).unwrap_or_else(|e| panic!("compiles: {e}"))
}

fn f64_of(v: Value) -> f64 {
    match v {
        Value::F64(x) => x,
        other => panic!("not an f64: {other:?}"),
    }
}

fn vector(xs: &[f64]) -> Value {
    Value::Tensor(Tensor::vector(xs.to_vec()))
}

fn close(what: &str, got: f64, want: f64, tol: f64) {
    assert!(
        (got - want).abs() <= tol * want.abs().max(1.0),
        "{what}: {got:e}, want {want:e}"
    );
}

/// Calls `name` on both engines; they must agree bit for bit.
fn both(p: &Program, name: &str, args: &[Value]) -> Value {
    let jit = call(p, Engine::Jit, name, args);
    let interp = call(p, Engine::Interpreter, name, args);
    assert_eq!(
        format!("{jit:?}"),
        format!("{interp:?}"),
        "{name}{args:?}: the engines differ"
    );
    jit
}

#[test]
fn first_and_second_derivatives_match_closed_forms_and_differences() {
    let p = program();
    for (name, _, d1, d2) in FUNCTIONS {
        for x in POINTS {
            let at = [Value::F64(x)];
            let f = |x: f64| {
                f64_of(call(
                    &p,
                    Engine::Jit,
                    &format!("f_{name}"),
                    &[Value::F64(x)],
                ))
            };
            let h = 1e-5;
            let fd = (f(x + h) - f(x - h)) / (2.0 * h);
            for engine in ENGINES {
                let g = f64_of(call(&p, engine, &format!("g_{name}"), &at));
                close(&format!("grad {name}({x}) on {engine:?}"), g, d1(x), 1e-13);
                close(&format!("grad {name}({x}) vs differences"), g, fd, 1e-6);
                let j = flat(&call(&p, engine, &format!("j_{name}"), &at));
                close(
                    &format!("jvp {name}({x}) on {engine:?}"),
                    j[1],
                    d1(x),
                    1e-13,
                );
                let gg = f64_of(call(&p, engine, &format!("gg_{name}"), &at));
                close(
                    &format!("grad(grad) {name}({x}) on {engine:?}"),
                    gg,
                    d2(x),
                    1e-12,
                );
                let hh = f64_of(call(&p, engine, &format!("h_{name}"), &at));
                close(
                    &format!("hessian {name}({x}) on {engine:?}"),
                    hh,
                    d2(x),
                    1e-12,
                );
            }
        }
    }
}

#[test]
fn lgamma_differentiates_to_every_order() {
    // d³ lgamma = ψ″ = polygamma(2, ·), d⁴ = polygamma(3, ·): never a zero that stops the chain.
    let p = program();
    for x in POINTS {
        let at = [Value::F64(x)];
        for engine in ENGINES {
            let d3 = f64_of(call(&p, engine, "lgamma3", &at));
            close(
                &format!("d3 lgamma({x}) on {engine:?}"),
                d3,
                polygamma(2.0, x),
                1e-12,
            );
            let d3h = f64_of(call(&p, engine, "lgamma3h", &at));
            close(
                &format!("hessian of d lgamma ({x}) on {engine:?}"),
                d3h,
                polygamma(2.0, x),
                1e-12,
            );
            let d4 = f64_of(call(&p, engine, "lgamma4", &at));
            close(
                &format!("d4 lgamma({x}) on {engine:?}"),
                d4,
                polygamma(3.0, x),
                1e-12,
            );
        }
    }
}

#[test]
fn elementwise_forms_differentiate_entry_by_entry() {
    let p = program();
    let v = [-3.5, -0.2, 0.0, 0.7, 40.0];
    for engine in ENGINES {
        let g = flat(&call(&p, engine, "g_sp_sum", &[vector(&v)]));
        for (i, &x) in v.iter().enumerate() {
            close(
                &format!("d softplus[{i}] on {engine:?}"),
                g[i],
                sigmoid(x),
                1e-15,
            );
        }
    }
    let w = [0.4, 2.5, -1.3];
    let w3 = Value::Tensor(Tensor::vector(w.to_vec()));
    for engine in ENGINES {
        let h = flat(&call(&p, engine, "h_lg_sum", std::slice::from_ref(&w3)));
        for r in 0..3 {
            for c in 0..3 {
                let want = if r == c { trigamma(w[r]) } else { 0.0 };
                close(
                    &format!("hessian lgamma [{r}, {c}] on {engine:?}"),
                    h[3 * r + c],
                    want,
                    1e-13,
                );
            }
        }
        let g = flat(&call(&p, engine, "g_pg_sum", std::slice::from_ref(&w3)));
        for (i, &x) in w.iter().enumerate() {
            close(
                &format!("d trigamma[{i}] on {engine:?}"),
                g[i],
                polygamma(2.0, x),
                1e-13,
            );
        }
    }
    let values = both(&p, "elementwise", &[vector(&v)]);
    let Value::Tuple(parts) = values else {
        panic!("a tuple")
    };
    let per: [fn(f64) -> f64; 4] = [f64::ln_1p, mad_runtime::special::erf, digamma, |x| {
        polygamma(3.0, x)
    }];
    for (part, f) in parts.iter().zip(per) {
        let got = flat(part);
        for (i, &x) in v.iter().enumerate() {
            let want = f(x);
            assert!(
                got[i] == want || got[i].is_nan() && want.is_nan(),
                "entry {i}: {} vs {want}",
                got[i]
            );
        }
    }
}

#[test]
fn f32_forms_round_the_f64_value_once() {
    let p = program();
    for x in [-0.6f32, 0.3, 1.7, 4.2] {
        let Value::Tuple(parts) = both(&p, "all32", &[Value::F32(x)]) else {
            panic!("a tuple")
        };
        let Value::Tuple(wide) = both(&p, "all64", &[Value::F64(x as f64)]) else {
            panic!("a tuple")
        };
        for (i, (a, b)) in parts.iter().zip(&wide).enumerate() {
            let (Value::F32(a), Value::F64(b)) = (a, b) else {
                panic!("kinds")
            };
            assert!(
                a.to_bits() == (*b as f32).to_bits() || a.is_nan() && b.is_nan(),
                "function {i} at {x}: {a} vs {b}"
            );
        }
        let j = both(&p, "j_erf32", &[Value::F32(x)]);
        let Value::Tuple(j) = j else {
            panic!("a tuple")
        };
        let Value::F32(d) = j[1] else {
            panic!("an f32 tangent")
        };
        let want = FRAC_2_SQRT_PI * (-(x as f64) * (x as f64)).exp();
        assert!((d as f64 - want).abs() <= 1e-6 * want, "d erf32({x}) = {d}");
    }
}

#[test]
fn special_values_at_poles_infinities_and_bad_orders() {
    let p = program();
    let at = |x: f64| flat(&both(&p, "all64", &[Value::F64(x)]));
    // (log1p, expm1, erf, lgamma, digamma, trigamma, polygamma 2, softplus, sigmoid)
    let r = at(-1.0);
    assert_eq!(r[0], f64::NEG_INFINITY);
    assert_eq!(r[3], f64::INFINITY);
    assert!(r[4].is_nan());
    assert_eq!(r[5], f64::INFINITY);
    assert!(r[6].is_nan());
    let r = at(f64::INFINITY);
    assert_eq!(
        r,
        vec![
            f64::INFINITY,
            f64::INFINITY,
            1.0,
            f64::INFINITY,
            f64::INFINITY,
            0.0,
            0.0,
            f64::INFINITY,
            1.0
        ]
    );
    let r = at(f64::NEG_INFINITY);
    assert!(r[0].is_nan());
    assert_eq!(r[1], -1.0);
    assert_eq!(r[2], -1.0);
    assert!(r[4].is_nan() && r[5].is_nan() && r[6].is_nan());
    assert_eq!((r[3], r[7], r[8]), (f64::INFINITY, 0.0, 0.0));
    assert!(at(f64::NAN).iter().all(|x| x.is_nan()));
    // Orders: an integer n ≥ 0; a negative one gives NaN.
    let order = |n: i64, x: f64| f64_of(both(&p, "order", &[Value::I64(n), Value::F64(x)]));
    assert_eq!(order(0, 2.5), digamma(2.5));
    assert_eq!(order(1, 2.5), trigamma(2.5));
    assert!(order(-1, 2.5).is_nan());
    assert!(order(171, 2.5).is_nan());
}
