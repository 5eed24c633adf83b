//! `jacobian` and `hessian` of functions of dynamic `vector`s and `matrix`es (mixed with
//! fixed-size and scalar arguments): dense matrices over the flattened inputs, equal on both
//! engines, against central finite differences of the function (Jacobian) and of its
//! gradient (Hessian), and against the fixed-size construction on the same numbers.

use mad::{Engine, Program, Value};
use mad_runtime::Tensor;

use crate::program_common::{call, flat};

const SOURCE: &str = "
fn f(v: vector) -> f64 {
    let mut s = 0.0;
    for i in 0..len(v) { s += v[i] * v[i] * v[(i + 1) % len(v)] + exp(0.1 * v[i]); }
    s
}
fn h(v: vector, m: matrix, a: f64, p: vec2) -> f64 {
    sum(hadamard(m, m)) * a + f(v) * a * a + m[0, 1] * v[0] * p.y + sin(p.x * v[1])
}
fn r(v: vector, m: matrix, a: vec2) -> vector {
    let mut w: vector = zeros(len(v) + 1);
    for i in 0..len(v) { w[i] = sin(v[i]) * a.x + m[i % rows(m), 0] * v[i]; }
    w[len(v)] = a.y * v[0] * m[1, 1];
    w
}
fn grad_h(v: vector, m: matrix, a: f64, p: vec2) -> (vector, matrix, f64, vec2) { grad(h)(v, m, a, p) }
fn hess_h(v: vector, m: matrix, a: f64, p: vec2) -> matrix { hessian(h)(v, m, a, p) }
fn jac_r(v: vector, m: matrix, a: vec2) -> matrix { jacobian(r)(v, m, a) }
fn hess_f(v: vector) -> matrix { hessian(f)(v) }
fn jac_f(v: vector) -> matrix { jacobian(f)(v) }
fn f3(v: vec3) -> f64 { let w: vector = [v.x, v.y, v.z]; f(w) }
fn hess_f3(v: vec3) -> matrix { hessian(f3)(v) }
fn points(p: [vec3]) -> f64 { let mut s = 0.0; for i in 0..len(p) { s += dot(p[i], p[i]) * p[i].x; } s }
fn hess_points(p: [vec3]) -> matrix { hessian(points)(p) }
";

fn vector(xs: &[f64]) -> Value {
    Value::Tensor(Tensor::vector(xs.to_vec()))
}

fn matrix(r: usize, c: usize, xs: &[f64]) -> Value {
    Value::Tensor(Tensor::from_f64(vec![r, c], xs.to_vec()).expect("shape"))
}

/// `name` on both engines (bit for bit), and the shape of its matrix result.
fn both(p: &Program, name: &str, args: &[Value]) -> (Vec<f64>, Vec<usize>) {
    let jit = call(p, Engine::Jit, name, args);
    let interp = call(p, Engine::Interpreter, name, args);
    assert_eq!(jit, interp, "{name}: the engines differ");
    let shape = match &jit {
        Value::Tensor(t) => t.shape.clone(),
        _ => vec![],
    };
    (flat(&jit), shape)
}

/// The arguments of `h` from its 3 + 4 + 1 + 2 = 10 flattened inputs.
fn h_args(x: &[f64]) -> Vec<Value> {
    vec![vector(&x[..3]), matrix(2, 2, &x[3..7]), Value::F64(x[7]), Value::Tensor(Tensor::vector(x[8..10].to_vec()))]
}

#[test]
fn hessians_of_dynamic_arguments_match_differences_of_the_gradient() {
    let p = Program::compile_str("dense.mad", SOURCE).expect("compiles");
    let x = [0.4, -1.2, 0.9, 1.1, -0.3, 0.7, 2.0, 0.6, -0.8, 1.4];
    let (hess, shape) = both(&p, "hess_h", &h_args(&x));
    assert_eq!(shape, vec![10, 10]);
    for c in 0..10 {
        let g = |d: f64| {
            let mut y = x;
            y[c] += d;
            both(&p, "grad_h", &h_args(&y)).0
        };
        let (up, down) = (g(1e-6), g(-1e-6));
        for r in 0..10 {
            let fd = (up[r] - down[r]) / 2e-6;
            assert!((hess[r * 10 + c] - fd).abs() <= 1e-6 * (1.0 + fd.abs()), "H[{r}, {c}] = {} vs {fd}", hess[r * 10 + c]);
            let (a, b) = (hess[r * 10 + c], hess[c * 10 + r]);
            assert!((a - b).abs() <= 1e-14 * (1.0 + a.abs()), "H[{r}, {c}] = {a} vs H[{c}, {r}] = {b}");
        }
    }
    // The looped construction (a `vector`) and the fixed-size one (a `vec3`) agree.
    let v = [0.4, -1.2, 0.9];
    let (dynamic, _) = both(&p, "hess_f", &[vector(&v)]);
    let (fixed, _) = both(&p, "hess_f3", &[Value::Tensor(Tensor::vector(v.to_vec()))]);
    for (a, b) in dynamic.iter().zip(&fixed) {
        assert!((a - b).abs() <= 1e-14 * (1.0 + b.abs()), "{dynamic:?} vs {fixed:?}");
    }
    // A `[vec3]` argument flattens row-major.
    let pts = [0.5, -0.2, 0.3, 1.1, 0.4, -0.6];
    let arg = Value::Tensor(Tensor::from_f64(vec![2, 3], pts.to_vec()).unwrap());
    let (hp, shape) = both(&p, "hess_points", &[arg]);
    assert_eq!(shape, vec![6, 6]);
    // points = Σ |pᵢ|² pᵢ.x: ∂²/∂x² = 6x, ∂²/∂x∂y = 2y, ∂²/∂y² = 2x, between points 0.
    assert!((hp[0] - 6.0 * 0.5).abs() < 1e-14 && (hp[1] - 2.0 * -0.2).abs() < 1e-14 && (hp[7] - 1.0).abs() < 1e-14);
    assert_eq!(hp[3], 0.0);
}

#[test]
fn jacobians_of_dynamic_arguments_match_finite_differences() {
    let p = Program::compile_str("dense.mad", SOURCE).expect("compiles");
    let x = [0.4, -1.2, 0.9, 1.1, -0.3, 0.7, 2.0, 0.6, -0.8];
    let args = |y: &[f64]| vec![vector(&y[..3]), matrix(2, 2, &y[3..7]), Value::Tensor(Tensor::vector(y[7..9].to_vec()))];
    let (jac, shape) = both(&p, "jac_r", &args(&x));
    assert_eq!(shape, vec![4, 9]);
    for c in 0..9 {
        let at = |d: f64| {
            let mut y = x;
            y[c] += d;
            both(&p, "r", &args(&y)).0
        };
        let (up, down) = (at(1e-6), at(-1e-6));
        for r in 0..4 {
            let fd = (up[r] - down[r]) / 2e-6;
            assert!((jac[r * 9 + c] - fd).abs() <= 1e-7 * (1.0 + fd.abs()), "J[{r}, {c}] = {} vs {fd}", jac[r * 9 + c]);
        }
    }
    // A scalar function's Jacobian is one row: its gradient.
    let (j, shape) = both(&p, "jac_f", &[vector(&[0.4, -1.2, 0.9])]);
    assert_eq!(shape, vec![1, 3]);
    let g = |y: [f64; 3], k: usize, d: f64| {
        let mut z = y;
        z[k] += d;
        both(&p, "f", &[vector(&z)]).0[0]
    };
    for k in 0..3 {
        let fd = (g([0.4, -1.2, 0.9], k, 1e-6) - g([0.4, -1.2, 0.9], k, -1e-6)) / 2e-6;
        assert!((j[k] - fd).abs() <= 1e-7 * (1.0 + fd.abs()));
    }
    // An empty input gives an empty matrix.
    let (_, shape) = both(&p, "jac_f", &[vector(&[])]);
    assert_eq!(shape, vec![1, 0]);
}

#[test]
fn arguments_without_an_f64_derivative_are_refused() {
    let src = "fn f(v: [f32]) -> f64 { (v[0] * v[0]) as f64 }\nfn g(v: [f32]) -> matrix { hessian(f)(v) }";
    let e = Program::compile_str("bad.mad", src).err().expect("must not compile").to_string();
    assert!(e.contains("`hessian` needs f64 arguments"), "{e}");
}
