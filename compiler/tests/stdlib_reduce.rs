//! `std::reduce` (`max(v)`, `min(v)`, `argmax`, `argmin`, `logsumexp`) from `.mad` source on
//! both engines: values, ties, NaN and empty vectors, and derivatives (the subgradient to the
//! first extreme entry, softmax, the Hessian of `logsumexp`) against closed forms and
//! central differences.

use mad::{Engine, Program, Tensor, Value};

use crate::program_common::{call, flat};
use crate::program_common::close;

const ENGINES: [Engine; 2] = [Engine::Jit, Engine::Interpreter];

const SRC: &str = r#"
fn all(v: vector) -> (f64, f64, i64, i64, f64) { (max(v), min(v), argmax(v), argmin(v), logsumexp(v)) }
fn all2(v: vec2) -> (f64, f64, i64, i64, f64) { (max(v), min(v), argmax(v), argmin(v), logsumexp(v)) }
fn all3(v: vec3) -> (f64, f64, i64, i64, f64) { (max(v), min(v), argmax(v), argmin(v), logsumexp(v)) }
fn all4(v: vec4) -> (f64, f64, i64, i64, f64) { (max(v), min(v), argmax(v), argmin(v), logsumexp(v)) }

fn mx(v: vector) -> f64 { max(v) }
fn mn(v: vector) -> f64 { min(v) }
fn lse(v: vector) -> f64 { logsumexp(v) }
fn g_mx(v: vector) -> vector { grad(mx)(v) }
fn g_mn(v: vector) -> vector { grad(mn)(v) }
fn g_lse(v: vector) -> vector { grad(lse)(v) }
fn j_lse(v: vector, t: vector) -> (f64, f64) { jvp(lse)(v, t) }
fn g_lse4(v: vec4) -> vec4 { grad(logsumexp)(v) }
fn lse3(v: vec3) -> f64 { logsumexp(v) }
fn h_lse3(v: vec3) -> matrix { hessian(lse3)(v) }
fn max3(v: vec3) -> f64 { max(v) }
fn g_max3(v: vec3) -> vec3 { grad(max3)(v) }

// A mixture's log-likelihood, as ADBench's GMM writes it: logsumexp over components.
fn mixture(w: vec3, x: f64) -> f64 {
    let mut terms = w;
    for k in 0..3 {
        let mu = k as f64;
        terms[k] = w[k] - logsumexp(w) - 0.5 * (x - mu) ^ 2;
    }
    logsumexp(terms)
}
fn g_mixture(w: vec3, x: f64) -> (vec3, f64) { grad(mixture)(w, x) }
"#;

fn program() -> Program {
    Program::compile_str("reduce.mad", SRC).unwrap_or_else(|e| panic!("compiles: {e}"))
}

fn vector(xs: &[f64]) -> Value {
    Value::Tensor(Tensor::vector(xs.to_vec()))
}

/// `(max, min, argmax, argmin, logsumexp)` of one call on both engines (which must agree).
fn all(p: &Program, name: &str, v: &[f64]) -> (f64, f64, i64, i64, f64) {
    let mut seen = Vec::new();
    for engine in ENGINES {
        let r = call(p, engine, name, &[vector(v)]);
        let Value::Tuple(items) = &r else {
            panic!("a tuple")
        };
        let (Value::F64(a), Value::F64(b), Value::I64(c), Value::I64(d), Value::F64(e)) =
            (&items[0], &items[1], &items[2], &items[3], &items[4])
        else {
            panic!("kinds: {r:?}")
        };
        seen.push(format!("{r:?}"));
        if seen.len() == 2 {
            assert_eq!(seen[0], seen[1], "{name}({v:?}): the engines differ");
            return (*a, *b, *c, *d, *e);
        }
    }
    unreachable!()
}

fn softmax(v: &[f64]) -> Vec<f64> {
    let m = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = v.iter().map(|x| (x - m).exp()).collect();
    let s: f64 = e.iter().sum();
    e.iter().map(|x| x / s).collect()
}

fn logsumexp(v: &[f64]) -> f64 {
    let m = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    m + v.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
}

#[test]
fn values_on_every_vector_type() {
    let p = program();
    let v = [0.5, -2.0, 3.25, 3.25, -2.0];
    let (mx, mn, am, an, lse) = all(&p, "all", &v);
    assert_eq!((mx, mn, am, an), (3.25, -2.0, 2, 1));
    close("logsumexp", &[lse], &[logsumexp(&v)], 1e-15);
    for (name, v) in [("all2", &v[..2]), ("all3", &v[1..4]), ("all4", &v[1..])] {
        let (mx, mn, am, an, lse) = all(&p, name, v);
        let want_mx = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let want_mn = v.iter().cloned().fold(f64::INFINITY, f64::min);
        assert_eq!((mx, mn), (want_mx, want_mn), "{name}");
        assert_eq!(v[am as usize], mx, "{name}");
        assert_eq!(v[an as usize], mn, "{name}");
        assert!(
            v[..am as usize].iter().all(|x| *x < mx),
            "{name}: the first maximum"
        );
        assert!(
            v[..an as usize].iter().all(|x| *x > mn),
            "{name}: the first minimum"
        );
        close(name, &[lse], &[logsumexp(v)], 1e-15);
    }
}

#[test]
fn logsumexp_neither_overflows_nor_underflows() {
    let p = program();
    let (_, _, _, _, big) = all(&p, "all", &[1000.0, 1000.0]);
    assert_eq!(big, 1000.0 + std::f64::consts::LN_2);
    let (_, _, _, _, small) = all(&p, "all", &[-1000.0, -1000.0, -1000.0]);
    close("small", &[small], &[-1000.0 + 3f64.ln()], 1e-15);
    let (_, _, _, _, one) = all(&p, "all", &[-7.5]);
    assert_eq!(one, -7.5);
    // Infinite maxima are the result; -inf entries add nothing.
    let inf = f64::INFINITY;
    assert_eq!(all(&p, "all", &[1.0, inf, 2.0]).4, inf);
    assert_eq!(all(&p, "all", &[-inf, -inf]).4, -inf);
    assert_eq!(all(&p, "all", &[-inf, 0.0]).4, 0.0);
}

#[test]
fn empty_vectors_and_nan_entries() {
    let p = program();
    let (mx, mn, am, an, lse) = all(&p, "all", &[]);
    assert_eq!(
        (mx, mn, am, an, lse),
        (f64::NEG_INFINITY, f64::INFINITY, -1, -1, f64::NEG_INFINITY)
    );
    let nan = f64::NAN;
    let (mx, mn, am, an, lse) = all(&p, "all", &[1.0, 5.0, nan, 7.0, nan]);
    assert!(mx.is_nan() && mn.is_nan() && lse.is_nan());
    assert_eq!((am, an), (2, 2), "the first NaN");
    let (mx, _, am, an, _) = all(&p, "all", &[nan, 5.0]);
    assert!(mx.is_nan());
    assert_eq!((am, an), (0, 0));
}

#[test]
fn max_and_min_derivatives_go_to_the_first_extreme_entry() {
    let p = program();
    let v = [1.0, 4.0, -3.0, 4.0, -3.0];
    for engine in ENGINES {
        let g = flat(&call(&p, engine, "g_mx", &[vector(&v)]));
        assert_eq!(g, vec![0.0, 1.0, 0.0, 0.0, 0.0], "{engine:?}");
        let g = flat(&call(&p, engine, "g_mn", &[vector(&v)]));
        assert_eq!(g, vec![0.0, 0.0, 1.0, 0.0, 0.0], "{engine:?}");
        let g = flat(&call(&p, engine, "g_max3", &[vector(&[2.0, 2.0, -1.0])]));
        assert_eq!(g, vec![1.0, 0.0, 0.0], "{engine:?}");
    }
}

#[test]
fn logsumexp_differentiates_to_softmax() {
    let p = program();
    let v = [0.3, -1.2, 2.1, 0.8, 2.1, -40.0];
    let want = softmax(&v);
    let t = [0.5, -1.0, 0.25, 2.0, -0.75, 1.5];
    for engine in ENGINES {
        let g = flat(&call(&p, engine, "g_lse", &[vector(&v)]));
        close(&format!("grad on {engine:?}"), &g, &want, 1e-15);
        let j = flat(&call(&p, engine, "j_lse", &[vector(&v), vector(&t)]));
        let dir: f64 = want.iter().zip(&t).map(|(a, b)| a * b).sum();
        close(&format!("jvp on {engine:?}"), &j[1..], &[dir], 1e-14);
        let g4 = flat(&call(&p, engine, "g_lse4", &[vector(&v[..4])]));
        close(
            &format!("grad(logsumexp) of a vec4 on {engine:?}"),
            &g4,
            &softmax(&v[..4]),
            1e-15,
        );
    }
    // Against central differences of the primal.
    let f = |x: &[f64]| logsumexp(x);
    let h = 1e-6;
    let fd: Vec<f64> = (0..v.len())
        .map(|i| {
            let (mut a, mut b) = (v.to_vec(), v.to_vec());
            a[i] += h;
            b[i] -= h;
            (f(&a) - f(&b)) / (2.0 * h)
        })
        .collect();
    let g = flat(&call(&p, Engine::Jit, "g_lse", &[vector(&v)]));
    close("grad vs differences", &g, &fd, 1e-8);
}

#[test]
fn logsumexp_hessian_is_diag_p_minus_p_pt() {
    let p = program();
    for v in [[0.3, -1.2, 2.1], [5.0, 5.0, 5.0], [700.0, -700.0, 0.0]] {
        let s = softmax(&v);
        let mut want = Vec::new();
        for r in 0..3 {
            for c in 0..3 {
                want.push(if r == c { s[r] } else { 0.0 } - s[r] * s[c]);
            }
        }
        for engine in ENGINES {
            let h = flat(&call(&p, engine, "h_lse3", &[vector(&v)]));
            close(&format!("hessian at {v:?} on {engine:?}"), &h, &want, 1e-15);
        }
    }
}

#[test]
fn a_mixture_log_likelihood_differentiates() {
    let p = program();
    let w = [0.2, -0.5, 1.1];
    let x = 0.7;
    let f = |w: &[f64], x: f64| {
        let norm = logsumexp(w);
        let terms: Vec<f64> = (0..3)
            .map(|k| w[k] - norm - 0.5 * (x - k as f64).powi(2))
            .collect();
        logsumexp(&terms)
    };
    let h = 1e-6;
    let mut fd = Vec::new();
    for i in 0..3 {
        let (mut a, mut b) = (w.to_vec(), w.to_vec());
        a[i] += h;
        b[i] -= h;
        fd.push((f(&a, x) - f(&b, x)) / (2.0 * h));
    }
    fd.push((f(&w, x + h) - f(&w, x - h)) / (2.0 * h));
    for engine in ENGINES {
        let g = flat(&call(&p, engine, "g_mixture", &[vector(&w), Value::F64(x)]));
        close(&format!("mixture gradient on {engine:?}"), &g, &fd, 1e-8);
    }
}
