//! The differentiation operators of the language (`grad`, `grad(f, i)`, `jvp`,
//! `vjp`, `hessian`, `jacobian`), run on both engines and checked against central
//! finite differences of the primal function (called through the same program)
//! and against hand-written analytic derivatives.

use mad::{Engine, Program, Tensor, Value};

use crate::program_common;
use program_common::{call, flat};

const SRC: &str = r#"
fn b1(x: f64, y: f64) -> f64 { x * log(y) + log(x * y) * y }
fn b1_grad(x: f64, y: f64) -> (f64, f64) { grad(b1)(x, y) }
fn b1_grad_y(x: f64, y: f64) -> f64 { grad(b1, 1)(x, y) }
fn b1_hess(x: f64, y: f64) -> matrix { hessian(b1)(x, y) }
fn b1_jvp(x: f64, y: f64, dx: f64, dy: f64) -> (f64, f64) { jvp(b1)(x, y, dx, dy) }
fn b1_vjp(x: f64, y: f64, w: f64) -> (f64, (f64, f64)) { vjp(b1)(x, y, w) }

fn b2(x: matrix, y: matrix) -> f64 { sum(x * y) }
fn b2_grad(x: matrix, y: matrix) -> (matrix, matrix) { grad(b2)(x, y) }
fn filled(n: i64, a: f64) -> matrix {
    let mut m = zeros(n, n);
    for i in 0..n {
        for j in 0..n {
            m[i, j] = a * ((i + 1) as f64) + 0.5 * (j as f64);
        }
    }
    m
}
fn b2_built(n: i64) -> (matrix, matrix) { grad(b2)(filled(n, 1.0), filled(n, -0.25)) }

fn loglik(a: f64, b: f64, sigma: f64, xs: [f64], ys: [f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..len(xs) {
        let r = (ys[i] - (a + b * xs[i])) / sigma;
        s += -0.5 * r * r - log(sigma);
    }
    s
}
fn loglik_grad(a: f64, b: f64, sigma: f64, xs: [f64], ys: [f64]) -> (f64, f64, f64) {
    let (ga, gb, gs, _, _) = grad(loglik)(a, b, sigma, xs, ys);
    (ga, gb, gs)
}
fn loglik_grad_sigma(a: f64, b: f64, sigma: f64, xs: [f64], ys: [f64]) -> f64 {
    grad(loglik, 2)(a, b, sigma, xs, ys)
}

fn piecewise(x: f64, y: f64) -> f64 {
    if x > y { x * x - y } else { sin(x) * y }
}
fn piecewise_grad(x: f64, y: f64) -> (f64, f64) { grad(piecewise)(x, y) }

fn rpow(x: f64, n: i64) -> f64 {
    if n == 0 { 1.0 } else { x * rpow(x, n - 1) }
}
fn rpow_grad(x: f64, n: i64) -> f64 { grad(rpow)(x, n) }
fn rpow_jvp(x: f64, n: i64, dx: f64) -> (f64, f64) { jvp(rpow)(x, n, dx) }
fn rpow_hess(x: f64, n: i64) -> matrix { hessian(rpow)(x, n) }

fn norm_grad(v: vec3) -> vec3 { grad(norm)(v) }
fn det2_grad(m: mat2) -> mat2 { grad(det)(m) }
fn det3_grad(m: mat3) -> mat3 { grad(det)(m) }
fn det3(m: mat3) -> f64 { det(m) }

fn c(x: f64) -> f64 { sin(x) * x * x }
fn c1(x: f64) -> f64 { grad(c)(x) }
fn c2(x: f64) -> f64 { grad(grad(c))(x) }
fn c3(x: f64) -> f64 { hessian(c1)(x)[0, 0] }
fn c3_nested(x: f64) -> f64 { grad(c2)(x) }

fn field(v: vec2) -> vec3 { vec3(v.x * v.y, sin(v.x), exp(v.y) * v.x) }
fn field_jac(v: vec2) -> matrix { jacobian(field)(v) }
fn field_vjp(v: vec2, w: vec3) -> (vec3, vec2) { vjp(field)(v, w) }
fn field_jvp(v: vec2, dv: vec2) -> (vec3, vec3) { jvp(field)(v, dv) }

fn uses_grad(x: f64, y: f64) -> f64 {
    let (a, b) = grad(b1)(x, y);
    a * b + x
}
fn uses_grad_grad(x: f64, y: f64) -> (f64, f64) { grad(uses_grad)(x, y) }

fn spring(a: vec3, b: vec3) -> f64 { 0.5 * (norm(a - b) - 1.0) ^ 2 }
fn spring_hess(a: vec3, b: vec3) -> matrix { hessian(spring)(a, b) }

fn orbit(x: f64) -> f64 {
    let mut s = x;
    let mut k = 0;
    while s < 10.0 {
        s = s * x + 0.1;
        k += 1;
    }
    s
}
fn orbit_jvp(x: f64, dx: f64) -> (f64, f64) { jvp(orbit)(x, dx) }
fn orbit_jac(x: f64) -> matrix { jacobian(orbit)(x) }
"#;

const ENGINES: [Engine; 2] = [Engine::Jit, Engine::Interpreter];

fn program() -> Program {
    match Program::compile_str("ad_language.mad", SRC) {
        Ok(p) => p,
        Err(e) => panic!("compiles: {e}"),
    }
}



/// `args` with the float scalars and float tensors replaced, in order, by `xs`.
fn unflat(args: &[Value], xs: &[f64]) -> Vec<Value> {
    let mut k = 0;
    args.iter()
        .map(|a| match a {
            Value::F64(_) => {
                k += 1;
                Value::F64(xs[k - 1])
            }
            Value::Tensor(t) if t.as_f64().is_some() => {
                let n = t.as_f64().map_or(0, <[f64]>::len);
                let v = Value::Tensor(
                    Tensor::from_f64(t.shape.clone(), xs[k..k + n].to_vec()).expect("shape"),
                );
                k += n;
                v
            }
            other => other.clone(),
        })
        .collect()
}

/// The Jacobian of `name` (all float outputs × all float inputs) by central differences.
fn fd_jacobian(p: &Program, name: &str, args: &[Value]) -> Vec<Vec<f64>> {
    let x0: Vec<f64> = args.iter().flat_map(flat).collect();
    let mut cols = Vec::new();
    for i in 0..x0.len() {
        let h = 1e-6 * x0[i].abs().max(1.0);
        let mut xp = x0.clone();
        let mut xm = x0.clone();
        xp[i] += h;
        xm[i] -= h;
        let fp = flat(&call(p, Engine::Interpreter, name, &unflat(args, &xp)));
        let fm = flat(&call(p, Engine::Interpreter, name, &unflat(args, &xm)));
        cols.push(
            fp.iter()
                .zip(&fm)
                .map(|(a, b)| (a - b) / (2.0 * h))
                .collect::<Vec<f64>>(),
        );
    }
    // rows = outputs
    let m = cols.first().map_or(0, Vec::len);
    (0..m)
        .map(|r| cols.iter().map(|c| c[r]).collect())
        .collect()
}

fn close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(
        got.len(),
        want.len(),
        "{what}: lengths of {got:?} and {want:?}"
    );
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "{what}[{i}]: got {g}, want {w}\n  got {got:?}\n want {want:?}"
        );
    }
}

fn f(x: f64) -> Value {
    Value::F64(x)
}

fn vecv(xs: &[f64]) -> Value {
    Value::Tensor(Tensor::from_f64(vec![xs.len()], xs.to_vec()).expect("shape"))
}

fn matv(r: usize, c: usize, xs: &[f64]) -> Value {
    Value::Tensor(Tensor::from_f64(vec![r, c], xs.to_vec()).expect("shape"))
}

/// Checks `deriv(args)` (flattened) against the finite-difference gradient of the
/// scalar `primal(args)` over all float inputs, on both engines.
fn check_grad_fd(p: &Program, primal: &str, deriv: &str, args: &[Value]) {
    let want: Vec<f64> = fd_jacobian(p, primal, args).remove(0);
    for e in ENGINES {
        close(
            &flat(&call(p, e, deriv, args)),
            &want,
            1e-6,
            &format!("{deriv} {e:?}"),
        );
    }
}

#[test]
fn b1_against_analytic_and_finite_differences() {
    let p = program();
    for (x, y) in [(2.0_f64, 3.0_f64), (0.7, 1.3), (5.0, 0.2)] {
        let gx = y.ln() + y / x;
        let gy = x / y + (x * y).ln() + 1.0;
        let hess = [
            -y / (x * x),
            1.0 / y + 1.0 / x,
            1.0 / y + 1.0 / x,
            -x / (y * y) + 1.0 / y,
        ];
        let val = x * y.ln() + (x * y).ln() * y;
        for e in ENGINES {
            close(
                &flat(&call(&p, e, "b1_grad", &[f(x), f(y)])),
                &[gx, gy],
                1e-12,
                "b1 grad",
            );
            close(
                &flat(&call(&p, e, "b1_grad_y", &[f(x), f(y)])),
                &[gy],
                1e-12,
                "b1 grad(f, 1)",
            );
            close(
                &flat(&call(&p, e, "b1_hess", &[f(x), f(y)])),
                &hess,
                1e-12,
                "b1 hessian",
            );
            close(
                &flat(&call(&p, e, "b1_jvp", &[f(x), f(y), f(0.3), f(-1.1)])),
                &[val, 0.3 * gx - 1.1 * gy],
                1e-12,
                "b1 jvp",
            );
            close(
                &flat(&call(&p, e, "b1_vjp", &[f(x), f(y), f(2.5)])),
                &[val, 2.5 * gx, 2.5 * gy],
                1e-12,
                "b1 vjp",
            );
        }
        check_grad_fd(&p, "b1", "b1_grad", &[f(x), f(y)]);
        // The Hessian's rows are the finite differences of the gradient.
        let fd = fd_jacobian(&p, "b1_grad", &[f(x), f(y)]);
        close(
            &flat(&call(&p, Engine::Jit, "b1_hess", &[f(x), f(y)])),
            &fd.concat(),
            1e-6,
            "b1 hessian fd",
        );
    }
    // The result's shape: a dynamic 2×2 matrix.
    let h = call(&p, Engine::Jit, "b1_hess", &[f(2.0), f(3.0)]);
    assert_eq!(h.as_tensor().map(|t| t.shape.clone()), Some(vec![2, 2]));
}

#[test]
fn b2_matrix_product_gradient() {
    let p = program();
    let n = 3;
    let xs: Vec<f64> = (0..n * n).map(|i| 0.3 * i as f64 - 1.0).collect();
    let ys: Vec<f64> = (0..n * n).map(|i| (i as f64 * 0.7).sin()).collect();
    // d/dX sum(X Y) [i, k] = sum_j Y[k, j];  d/dY [k, j] = sum_i X[i, k].
    let mut gx = vec![0.0; n * n];
    let mut gy = vec![0.0; n * n];
    for i in 0..n {
        for k in 0..n {
            gx[i * n + k] = (0..n).map(|j| ys[k * n + j]).sum();
            gy[i * n + k] = (0..n).map(|r| xs[r * n + i]).sum();
        }
    }
    let want: Vec<f64> = gx.iter().chain(&gy).copied().collect();
    let args = [matv(n, n, &xs), matv(n, n, &ys)];
    for e in ENGINES {
        close(
            &flat(&call(&p, e, "b2_grad", &args)),
            &want,
            1e-12,
            "b2 grad",
        );
    }
    check_grad_fd(&p, "b2", "b2_grad", &args);
    // Matrices built inside the program with zeros and element assignment.
    for e in ENGINES {
        let got = flat(&call(&p, e, "b2_built", &[Value::I64(4)]));
        let fill = |a: f64| -> Vec<f64> {
            (0..16)
                .map(|q| a * ((q / 4 + 1) as f64) + 0.5 * ((q % 4) as f64))
                .collect()
        };
        let (x, y) = (fill(1.0), fill(-0.25));
        let mut want = vec![0.0; 32];
        for i in 0..4 {
            for k in 0..4 {
                want[i * 4 + k] = (0..4).map(|j| y[k * 4 + j]).sum();
                want[16 + i * 4 + k] = (0..4).map(|r| x[r * 4 + i]).sum();
            }
        }
        close(&got, &want, 1e-12, "b2 built");
    }
}

#[test]
fn regression_log_likelihood_over_slices() {
    let p = program();
    let xs: Vec<f64> = (0..20).map(|i| i as f64 * 0.25).collect();
    let ys: Vec<f64> = xs
        .iter()
        .map(|x| 1.5 - 0.7 * x + (x * 3.0).sin() * 0.2)
        .collect();
    let (a, b, s) = (1.2, -0.6, 0.8);
    let (mut ga, mut gb, mut gs) = (0.0, 0.0, 0.0);
    for (x, y) in xs.iter().zip(&ys) {
        let r = (y - (a + b * x)) / s;
        ga += r / s;
        gb += r * x / s;
        gs += r * r / s - 1.0 / s;
    }
    let args = [f(a), f(b), f(s), vecv(&xs), vecv(&ys)];
    for e in ENGINES {
        close(
            &flat(&call(&p, e, "loglik_grad", &args)),
            &[ga, gb, gs],
            1e-11,
            "loglik grad",
        );
        close(
            &flat(&call(&p, e, "loglik_grad_sigma", &args)),
            &[gs],
            1e-11,
            "loglik grad(f, 2)",
        );
    }
}

#[test]
fn branches_recursion_and_stdlib() {
    let p = program();
    for (x, y) in [(2.0, 1.0), (0.5, 1.5)] {
        check_grad_fd(&p, "piecewise", "piecewise_grad", &[f(x), f(y)]);
    }
    for (x, n) in [(1.3_f64, 5_i64), (0.8, 3)] {
        let nf = n as f64;
        for e in ENGINES {
            let args = [f(x), Value::I64(n)];
            close(
                &flat(&call(&p, e, "rpow_grad", &args)),
                &[nf * x.powi(n as i32 - 1)],
                1e-12,
                "rpow grad",
            );
            close(
                &flat(&call(&p, e, "rpow_jvp", &[f(x), Value::I64(n), f(0.5)])),
                &[x.powi(n as i32), 0.5 * nf * x.powi(n as i32 - 1)],
                1e-12,
                "rpow jvp",
            );
            close(
                &flat(&call(&p, e, "rpow_hess", &args)),
                &[nf * (nf - 1.0) * x.powi(n as i32 - 2)],
                1e-12,
                "rpow hessian",
            );
        }
    }
    let v = [1.0, -2.0, 0.5];
    let nv = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    let m2 = [1.5, -0.3, 0.7, 2.0];
    let m3 = [2.0, 0.1, -0.4, 0.3, 1.7, 0.5, -0.2, 0.6, 1.1];
    for e in ENGINES {
        close(
            &flat(&call(&p, e, "norm_grad", &[vecv(&v)])),
            &v.map(|x| x / nv),
            1e-12,
            "grad(norm)",
        );
        // d det / d m = cofactor matrix.
        close(
            &flat(&call(&p, e, "det2_grad", &[matv(2, 2, &m2)])),
            &[m2[3], -m2[2], -m2[1], m2[0]],
            1e-12,
            "grad(det) 2",
        );
    }
    check_grad_fd(&p, "det3", "det3_grad", &[matv(3, 3, &m3)]);
}

#[test]
fn second_and_third_derivatives() {
    let p = program();
    for x in [0.3_f64, 1.7, -2.2] {
        let (s, co) = (x.sin(), x.cos());
        let d1 = co * x * x + 2.0 * x * s;
        let d2 = -s * x * x + 4.0 * x * co + 2.0 * s;
        let d3 = -co * x * x - 6.0 * x * s + 6.0 * co;
        for e in ENGINES {
            close(&flat(&call(&p, e, "c1", &[f(x)])), &[d1], 1e-12, "c'");
            close(&flat(&call(&p, e, "c2", &[f(x)])), &[d2], 1e-12, "c''");
            close(
                &flat(&call(&p, e, "c3", &[f(x)])),
                &[d3],
                1e-11,
                "c''' (hessian of grad)",
            );
            close(
                &flat(&call(&p, e, "c3_nested", &[f(x)])),
                &[d3],
                1e-11,
                "c''' (grad of grad of grad)",
            );
        }
    }
    // A function that calls `grad` internally, differentiated again.
    for (x, y) in [(2.0, 3.0), (0.9, 1.4)] {
        check_grad_fd(&p, "uses_grad", "uses_grad_grad", &[f(x), f(y)]);
    }
    // The Hessian over two vec3 arguments (6×6) against differences of the gradient.
    let a = [0.1, 0.2, -0.3];
    let b = [1.0, 0.5, 0.4];
    let h = call(&p, Engine::Jit, "spring_hess", &[vecv(&a), vecv(&b)]);
    assert_eq!(h.as_tensor().map(|t| t.shape.clone()), Some(vec![6, 6]));
    let mut fd = Vec::new();
    for i in 0..6 {
        let mut xs: Vec<f64> = a.iter().chain(&b).copied().collect();
        let hstep = 1e-5;
        xs[i] += hstep;
        let gp = grad_spring(&xs);
        xs[i] -= 2.0 * hstep;
        let gm = grad_spring(&xs);
        fd.push(
            gp.iter()
                .zip(&gm)
                .map(|(p, m)| (p - m) / (2.0 * hstep))
                .collect::<Vec<_>>(),
        );
    }
    for e in ENGINES {
        close(
            &flat(&call(&p, e, "spring_hess", &[vecv(&a), vecv(&b)])),
            &fd.concat(),
            1e-6,
            "spring hessian",
        );
    }
}

/// The analytic gradient of `0.5 (|a - b| - 1)²` over (a, b).
fn grad_spring(xs: &[f64]) -> Vec<f64> {
    let d: Vec<f64> = (0..3).map(|i| xs[i] - xs[i + 3]).collect();
    let l = d.iter().map(|x| x * x).sum::<f64>().sqrt();
    let ga: Vec<f64> = d.iter().map(|x| (l - 1.0) * x / l).collect();
    ga.iter().copied().chain(ga.iter().map(|x| -x)).collect()
}

#[test]
fn jacobian_jvp_and_vjp_of_a_vector_function() {
    let p = program();
    let v = [0.7_f64, -0.4];
    let w = [1.0, -2.0, 0.5];
    let (x, y) = (v[0], v[1]);
    let jac = [[y, x], [x.cos(), 0.0], [y.exp(), x * y.exp()]];
    let value = [x * y, x.sin(), y.exp() * x];
    for e in ENGINES {
        close(
            &flat(&call(&p, e, "field_jac", &[vecv(&v)])),
            &jac.concat(),
            1e-12,
            "jacobian",
        );
        let jtw: Vec<f64> = (0..2)
            .map(|c| (0..3).map(|r| jac[r][c] * w[r]).sum())
            .collect();
        let want: Vec<f64> = value.iter().copied().chain(jtw).collect();
        close(
            &flat(&call(&p, e, "field_vjp", &[vecv(&v), vecv(&w)])),
            &want,
            1e-12,
            "vjp",
        );
        let dv = [0.3, 1.2];
        let jv: Vec<f64> = (0..3)
            .map(|r| jac[r][0] * dv[0] + jac[r][1] * dv[1])
            .collect();
        let want: Vec<f64> = value.iter().copied().chain(jv).collect();
        close(
            &flat(&call(&p, e, "field_jvp", &[vecv(&v), vecv(&dv)])),
            &want,
            1e-12,
            "jvp",
        );
    }
    let fd = fd_jacobian(&p, "field", &[vecv(&v)]);
    close(
        &flat(&call(&p, Engine::Jit, "field_jac", &[vecv(&v)])),
        &fd.concat(),
        1e-6,
        "jacobian fd",
    );
    let m = call(&p, Engine::Jit, "field_jac", &[vecv(&v)]);
    assert_eq!(m.as_tensor().map(|t| t.shape.clone()), Some(vec![3, 2]));
}

#[test]
fn forward_mode_through_a_data_dependent_while() {
    let p = program();
    for x in [1.5_f64, 2.3, 3.1] {
        let fd = fd_jacobian(&p, "orbit", &[f(x)]);
        for e in ENGINES {
            let got = flat(&call(&p, e, "orbit_jvp", &[f(x), f(1.0)]));
            close(&got[1..], &[fd[0][0]], 1e-6, "jvp through while");
            close(
                &flat(&call(&p, e, "orbit_jac", &[f(x)])),
                &[fd[0][0]],
                1e-6,
                "jacobian through while",
            );
        }
    }
}

#[test]
fn hessian_of_an_array_parameter_is_linear_in_its_length_and_matches_the_jacobian_of_grad() {
    // `hessian` of an `[f64; N]` function took each of the N tangents apart into N entries
    // (N² ops: N = 200 compiled for 12 s, N = 1000 not in a minute).
    const N: usize = 96;
    let src = format!(
        "fn f(a: [f64; {N}]) -> f64 {{ a[0] * a[{l}] * sum(a) + sin(a[3]) * a[5] }}\n\
         fn h(a: [f64; {N}]) -> matrix {{ hessian(f)(a) }}\n\
         fn j(a: [f64; {N}]) -> matrix {{ jacobian(grad(f))(a) }}\n",
        l = N - 1
    );
    let p = Program::compile_str("hessian_array.mad", &src).unwrap();
    let module = &p.compiled().module;
    let (_, hess) = module
        .functions
        .iter()
        .find(|(_, f)| f.name.ends_with("$hessian"))
        .expect("the hessian function");
    assert!(hess.ops.len() < 8 * N, "{} ops in {}", hess.ops.len(), hess.name);
    let x: Vec<f64> = (0..N).map(|i| 0.5 + 0.01 * i as f64).collect();
    let arg = Value::Tensor(Tensor::from_f64(vec![N], x.clone()).unwrap());
    for engine in [Engine::Jit, Engine::Interpreter] {
        let h = flat(&call(&p, engine, "h", std::slice::from_ref(&arg)));
        let j = flat(&call(&p, engine, "j", std::slice::from_ref(&arg)));
        assert_eq!(h.len(), N * N);
        for (a, b) in h.iter().zip(&j) {
            assert_eq!(a.to_bits(), b.to_bits(), "{engine:?}");
        }
        // Analytic: f = a0·aL·S + sin(a3)·a5 with S = Σa.
        let s: f64 = x.iter().sum();
        let (a0, al) = (x[0], x[N - 1]);
        let at = |i: usize, k: usize| h[i * N + k];
        assert!((at(0, N - 1) - (s + a0 + al)).abs() < 1e-12, "{}", at(0, N - 1));
        assert!((at(0, 0) - 2.0 * al).abs() < 1e-12);
        assert!((at(1, 2)).abs() < 1e-12);
        assert!((at(0, 7) - al).abs() < 1e-12);
        assert!((at(3, 3) + x[3].sin() * x[5]).abs() < 1e-12);
        assert!((at(3, 5) - x[3].cos()).abs() < 1e-12);
    }
}

#[test]
fn grad_of_loops_reading_a_vector_by_index() {
    // Reverse mode through `x[i]` reads in a loop updates the adjoint element by element
    // (`passes::accum`): for `sq`, linear in the length (a 10⁵-element gradient took 17 s);
    // `nb` reads two elements per iteration, which still copies per iteration. The values are
    // the formula's either way.
    let src = "fn sq(x: vector) -> f64 { let mut s = 0.0; for i in 0..len(x) { s += x[i] * x[i]; } s }\n\
               fn nb(x: vector) -> f64 { let mut s = 0.0; for i in 0..len(x) - 1 { s += x[i] * x[i + 1] * x[i]; } s }\n\
               fn gsq(x: vector) -> vector { grad(sq)(x) }\n\
               fn gnb(x: vector) -> vector { grad(nb)(x) }\n";
    let p = Program::compile_str("vector_loops.mad", src).unwrap();
    let n = 2000;
    let x: Vec<f64> = (0..n).map(|i| 0.25 + 0.001 * i as f64).collect();
    let arg = Value::Tensor(Tensor::from_f64(vec![n], x.clone()).unwrap());
    for engine in [Engine::Jit, Engine::Interpreter] {
        let g = flat(&call(&p, engine, "gsq", std::slice::from_ref(&arg)));
        for i in 0..n {
            assert_eq!(g[i], 2.0 * x[i], "{engine:?} {i}");
        }
        let g = flat(&call(&p, engine, "gnb", std::slice::from_ref(&arg)));
        for i in 0..n {
            // ∂/∂x_i of Σ x_j² x_{j+1}: 2 x_i x_{i+1} (j = i) + x_{i-1}² (j = i − 1).
            let mut want = 0.0;
            if i + 1 < n {
                want += 2.0 * x[i] * x[i + 1];
            }
            if i > 0 {
                want += x[i - 1] * x[i - 1];
            }
            assert!((g[i] - want).abs() <= 1e-15 * want.abs().max(1.0), "{engine:?} {i}: {} vs {want}", g[i]);
        }
    }
}

/// `grad(f, (i, j))`: the listed partials in the order written, the same as `grad(f)`'s on both
/// engines; the unlisted arguments are data (their adjoint loops are gone from the IR).
#[test]
fn grad_with_respect_to_several_arguments() {
    let src = "
fn fit(a: f64, xs: vector, b: f64, ys: vector) -> f64 {
    let mut s = 0.0;
    for i in 0..len(xs) { let r = ys[i] - (a + b * xs[i]); s += r * r; }
    s
}
fn all(a: f64, xs: vector, b: f64, ys: vector) -> (f64, vector, f64, vector) { grad(fit)(a, xs, b, ys) }
fn two(a: f64, xs: vector, b: f64, ys: vector) -> (f64, f64) { grad(fit, (2, 0))(a, xs, b, ys) }
fn one(a: f64, xs: vector, b: f64, ys: vector) -> (vector,) { grad(fit, (3,))(a, xs, b, ys) }
";
    let prog = Program::compile_str("wrt.mad", src).expect("compiles");
    let v = |xs: &[f64]| Value::Tensor(Tensor { shape: vec![xs.len()], data: mad_runtime::TensorData::F64(xs.to_vec()) });
    let args = [Value::F64(0.5), v(&[1.0, 2.0, 3.5]), Value::F64(-1.25), v(&[0.25, 4.0, -2.0])];
    for engine in [Engine::Jit, Engine::Interpreter] {
        let all = flat(&call(&prog, engine, "all", &args));
        let two = flat(&call(&prog, engine, "two", &args));
        let one = flat(&call(&prog, engine, "one", &args));
        // all = (da, dxs[3], db, dys[3])
        assert_eq!(two, vec![all[4], all[0]]);
        assert_eq!(one, all[5..8].to_vec());
    }
    // `two` computes no adjoint of a vector: no tensor insert is left in it.
    let m = prog.module();
    let name = m.functions.iter().find(|(_, f)| f.name.starts_with("grad(fit, (2, 0))")).map(|(h, _)| h).expect("the operator's function");
    let f = &m.functions[name];
    let mut inserts = 0;
    mad::analysis::for_each_op(f, &f.body, &mut |_, op| inserts += usize::from(op.kind == mad::ir::OpKind::Insert));
    assert_eq!(inserts, 0, "{}", mad::ir::print::print_function(m, name));
    for bad in ["grad(fit, (0, 0))", "grad(fit, (9,))", "grad(fit, (1.0,))"] {
        let src2 = format!("{src}\nfn z(a: f64, xs: vector, b: f64, ys: vector) -> f64 {{ {bad}(a, xs, b, ys).0 }}");
        assert!(Program::compile_str("bad.mad", &src2).is_err(), "{bad} must be an error");
    }
}
