//! Fixed-size vectors and matrices past 4 (`vecN` up to `vec16`, `matRxC` up to
//! `mat16x16`): the language on them (constructors, array literals, indexing, arithmetic,
//! builtins, `print`), every size-generic standard-library function at sizes 5, 7, 10 and
//! 16 against closed forms and against the same computation on `vector`/`matrix`,
//! derivatives (`grad`, `jvp`, `vjp`, `jacobian`, `hessian`) against central differences,
//! mesh energies of `vec7` unknowns, `.npy` arguments and results, typed calls, and the
//! errors past the bound. Every call runs
//! on the JIT and on the interpreter, which must agree bit for bit.

use crate::cli_common::madc;
use crate::program_common::{close, flat};
use mad::{Engine, Program, Tensor, TensorData, Value};
use mad_runtime::npy;

const ENGINES: [Engine; 2] = [Engine::Jit, Engine::Interpreter];

// ---- helpers ----------------------------------------------------------------------

/// Calls `name` on both engines, which must agree exactly; the value and what it printed.
fn both(p: &Program, name: &str, args: &[Value]) -> (Value, String) {
    let mut seen: Vec<(Value, String)> = Vec::new();
    for engine in ENGINES {
        let mut out = Vec::new();
        let v = p
            .call_with(engine, name, args, &mut out)
            .unwrap_or_else(|e| panic!("{name} on {engine:?}: {e}"));
        seen.push((v, String::from_utf8(out).expect("utf-8 output")));
    }
    let (jit, interp) = (&seen[0], &seen[1]);
    assert_eq!(
        format!("{:?}", jit.0),
        format!("{:?}", interp.0),
        "{name}: the JIT and the interpreter differ"
    );
    assert_eq!(jit.1, interp.1, "{name}: the engines print differently");
    seen.swap_remove(0)
}

/// The floats of a call's value on both engines.
fn floats(p: &Program, name: &str, args: &[Value]) -> Vec<f64> {
    flat(&both(p, name, args).0)
}

fn compile(src: &str) -> Program {
    Program::compile_str("fixed.mad", src).unwrap_or_else(|e| panic!("compiles: {e}"))
}

fn vector(xs: &[f64]) -> Value {
    Value::Tensor(Tensor::vector(xs.to_vec()))
}

fn matrix(r: usize, c: usize, xs: &[f64]) -> Value {
    Value::Tensor(Tensor::from_f64(vec![r, c], xs.to_vec()).expect("a matrix"))
}

/// Deterministic inputs in (-1, 1), distinct for each seed.
fn inputs(seed: u64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|k| (((seed * 97 + k as u64) as f64 * 12.9898).sin() * 43758.5453).fract())
        .collect()
}

/// Σ aᵢbᵢ added left to right from the first product, as the library adds.
fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).skip(1).fold(a[0] * b[0], |s, (x, y)| s + x * y)
}

/// Central differences of `f` at `x`: column `j` is ∂f/∂xⱼ (`f` returns several outputs).
fn differences(f: &dyn Fn(&[f64]) -> Vec<f64>, x: &[f64]) -> Vec<Vec<f64>> {
    let h = 1e-6;
    (0..x.len())
        .map(|j| {
            let (mut a, mut b) = (x.to_vec(), x.to_vec());
            a[j] += h;
            b[j] -= h;
            let (fa, fb) = (f(&a), f(&b));
            fa.iter().zip(&fb).map(|(p, q)| (p - q) / (2.0 * h)).collect()
        })
        .collect()
}

// ---- the language on the larger sizes ------------------------------------------------

const LANGUAGE: &str = "
fn as_array(v: [f64; 7]) -> vec7 { v }
fn as_rows(r: [vec3; 5]) -> mat5x3 { r }
fn values() {
    let a = vec7(1, 2, 3, 4, 5, 6, 7);
    let b = [7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0];
    print(dot(as_array(b), a));
    print((a + b, a - b, 2.0 * a, a / 2.0, -a));
    print((a.x, a.y, a.z, a.w, a[6], len(a)));
    let m = mat5x3(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    print((m[4, 2], m[1], rows(m), cols(m), len(m)));
    print(m * vec3(1, 0, -1));
    print(transpose(m) * m);
    print((sum(a), sum(m), hadamard(a, b), sqrt(hadamard(a, a)), max(a, b)));
    print(select(a[0] > b[0], a, b));
    print(a as [i64; 7]);
    let mut w = a;
    w[6] = 0.5;
    let mut n = m;
    n[4, 2] = -1.0;
    n[0] = vec3(0, 0, 0);
    print((w, n));
    print(as_rows([m[0], m[1], m[2], m[3], m[4]]) - mat5x3::rows(m[0], m[1], m[2], m[3], m[4]));
    print(mat3x5::cols(m[0], m[1], m[2], m[3], m[4]));
    print(mat16::identity()[15]);
    print(mat16x1::identity()[0]);
}
fn big(m: mat16, v: vec16) -> (mat16, vec16, f64) { (m * m, m * v, sum(m) + sum(-v)) }
";

#[test]
fn constructors_literals_indexing_and_arithmetic() {
    let p = compile(LANGUAGE);
    let (_, out) = both(&p, "values", &[]);
    let want = "\
84.0
([8.0, 8.0, 8.0, 8.0, 8.0, 8.0, 8.0], [-6.0, -4.0, -2.0, 0.0, 2.0, 4.0, 6.0], [2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0], [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5], [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0])
(1.0, 2.0, 3.0, 4.0, 7.0, 7)
(15.0, [4.0, 5.0, 6.0], 5, 3, 5)
[-2.0, -2.0, -2.0, -2.0, -2.0]
[[335.0, 370.0, 405.0], [370.0, 410.0, 450.0], [405.0, 450.0, 495.0]]
(28.0, 120.0, [7.0, 12.0, 15.0, 16.0, 15.0, 12.0, 7.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [7.0, 6.0, 5.0, 4.0, 5.0, 6.0, 7.0])
[7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0]
[1, 2, 3, 4, 5, 6, 7]
([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 0.5], [[0.0, 0.0, 0.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [10.0, 11.0, 12.0], [13.0, 14.0, -1.0]])
[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
[[1.0, 4.0, 7.0, 10.0, 13.0], [2.0, 5.0, 8.0, 11.0, 14.0], [3.0, 6.0, 9.0, 12.0, 15.0]]
[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
1.0
";
    assert_eq!(out, want);
}

#[test]
fn sixteen_by_sixteen_products() {
    let p = compile(LANGUAGE);
    let m = inputs(1, 256);
    let v = inputs(2, 16);
    let r = floats(&p, "big", &[matrix(16, 16, &m), vector(&v)]);
    for i in 0..16 {
        for j in 0..16 {
            let col: Vec<f64> = (0..16).map(|k| m[k * 16 + j]).collect();
            assert_eq!(r[i * 16 + j], dot(&m[i * 16..i * 16 + 16], &col), "m * m [{i}, {j}]");
        }
        assert_eq!(r[256 + i], dot(&m[i * 16..i * 16 + 16], &v), "m * v [{i}]");
    }
    let s = m.iter().skip(1).fold(m[0], |s, x| s + x) + v.iter().skip(1).fold(-v[0], |s, x| s - x);
    assert_eq!(r[272], s);
}

#[test]
fn the_largest_fixed_sizes_stay_off_the_heap() {
    use mad::codegen::layout::type_has_heap;
    use mad::front::SurfaceType;
    for t in [SurfaceType::Vec(16), SurfaceType::Mat(16, 16), SurfaceType::Mat(1, 16)] {
        assert!(!type_has_heap(&t.ir_type()), "{t} is scalarized");
    }
    assert!(type_has_heap(&SurfaceType::Vector.ir_type()));
}

/// Reads at run-time indices: of a parameter, of a value carried through a loop and
/// written there, and of an `if`'s result; one body, on fixed sizes and on `vector` and
/// `matrix`.
fn indices_src() -> String {
    let body = "{
    let mut s = 0.0;
    let mut w = v;
    for k in 0..n {
        for i in 0..16 {
            s += m[i, (i + k) % 16] * w[(i * 7 + k) % 16];
            w[(i + k) % 16] = w[i] * 0.5 + 1.0;
        }
        let u = if s > 0.0 { w } else { v };
        s += u[k % 16];
    }
    (s, w)
}";
    format!(
        "fn fixed(m: mat16, v: vec16, n: i64) -> (f64, vec16) {body}\n\
         fn dynamic(m: matrix, v: vector, n: i64) -> (f64, vector) {body}\n"
    )
}

#[test]
fn run_time_indices_read_the_right_entries() {
    let p = compile(&indices_src());
    let (m, v) = (inputs(161, 256), inputs(162, 16));
    for n in [0, 1, 5, 40] {
        let fixed = floats(&p, "fixed", &[matrix(16, 16, &m), vector(&v), Value::I64(n)]);
        let dynamic = floats(&p, "dynamic", &[matrix(16, 16, &m), vector(&v), Value::I64(n)]);
        assert_eq!(fixed, dynamic, "{n} trips");
    }
}

// ---- the standard library -------------------------------------------------------------

/// Wrappers of every size-generic library function at the sizes `ns` (vectors, square
/// matrices), 5x3 and 7x16, and the same computations on `vector` and `matrix`.
fn library_src(ns: &[usize]) -> String {
    let mut s = String::new();
    for &n in ns {
        let (v, m) = (format!("vec{n}"), format!("mat{n}"));
        s += &format!("fn dot{n}(a: {v}, b: {v}) -> f64 {{ dot(a, b) }}\n");
        s += &format!("fn lengths{n}(a: {v}) -> (f64, f64, {v}) {{ (norm2(a), norm(a), normalize(a)) }}\n");
        s += &format!("fn outer{n}(a: {v}, b: {v}) -> {m} {{ outer(a, b) }}\n");
        s += &format!("fn transpose{n}(m: {m}) -> {m} {{ transpose(m) }}\n");
        s += &format!("fn lib_transpose{n}(m: {m}) -> {m} {{ std::mat::transpose(m) }}\n");
        s += &format!("fn trace{n}(m: {m}) -> f64 {{ trace(m) }}\n");
        s += &format!("fn frob2_{n}(m: {m}) -> f64 {{ frob2(m) }}\n");
        s += &format!("fn diag{n}(a: {v}) -> {m} {{ diag(a) }}\n");
        s += &format!("fn lerp{n}(a: {v}, b: {v}, t: f64) -> {v} {{ lerp(a, b, t) }}\n");
        s += &format!(
            "fn reduce{n}(a: {v}) -> (f64, f64, i64, i64, f64) {{ (max(a), min(a), argmax(a), argmin(a), logsumexp(a)) }}\n"
        );
    }
    s += "
fn outer53(a: vec5, b: vec3) -> mat5x3 { outer(a, b) }
fn outer7x16(a: vec7, b: vec16) -> mat7x16 { outer(a, b) }
fn transpose53(m: mat5x3) -> mat3x5 { std::mat::transpose(m) }
fn frob2_53(m: mat5x3) -> f64 { frob2(m) }
fn dot_dyn(a: vector, b: vector) -> f64 { sum(hadamard(a, b)) }
fn frob2_dyn(m: matrix) -> f64 { frob2(m) }
fn transpose_dyn(m: matrix) -> matrix { transpose(m) }
fn reduce_dyn(a: vector) -> (f64, f64, i64, i64, f64) { (max(a), min(a), argmax(a), argmin(a), logsumexp(a)) }
";
    s
}

#[test]
fn vector_functions_match_closed_forms() {
    let p = compile(&library_src(&[7, 16]));
    for n in [7, 16] {
        let a = inputs(n as u64, n);
        let b = inputs(100 + n as u64, n);
        let d = floats(&p, &format!("dot{n}"), &[vector(&a), vector(&b)]);
        assert_eq!(d, [dot(&a, &b)], "dot{n}");
        close("dot against vector", &d, &floats(&p, "dot_dyn", &[vector(&a), vector(&b)]), 1e-15);
        let l = floats(&p, &format!("lengths{n}"), &[vector(&a)]);
        let n2 = dot(&a, &a);
        assert_eq!(l[..2], [n2, n2.sqrt()], "norm2, norm of vec{n}");
        let unit: Vec<f64> = a.iter().map(|x| x / n2.sqrt()).collect();
        assert_eq!(l[2..], unit[..], "normalize vec{n}");
        let o = floats(&p, &format!("outer{n}"), &[vector(&a), vector(&b)]);
        let want: Vec<f64> = a.iter().flat_map(|x| b.iter().map(move |y| x * y)).collect();
        assert_eq!(o, want, "outer vec{n}");
        let t = 0.25;
        let l = floats(&p, &format!("lerp{n}"), &[vector(&a), vector(&b), Value::F64(t)]);
        let want: Vec<f64> = a.iter().zip(&b).map(|(x, y)| (1.0 - t) * x + t * y).collect();
        assert_eq!(l, want, "lerp vec{n}");
    }
    let (a, b) = (inputs(5, 5), inputs(3, 3));
    let o = floats(&p, "outer53", &[vector(&a), vector(&b)]);
    assert_eq!(o, a.iter().flat_map(|x| b.iter().map(move |y| x * y)).collect::<Vec<_>>());
    let (a, b) = (inputs(7, 7), inputs(16, 16));
    let o = floats(&p, "outer7x16", &[vector(&a), vector(&b)]);
    assert_eq!(o, a.iter().flat_map(|x| b.iter().map(move |y| x * y)).collect::<Vec<_>>());
}

#[test]
fn matrix_functions_match_closed_forms_and_matrix() {
    let p = compile(&library_src(&[7, 16]));
    for n in [7, 16] {
        let m = inputs(n as u64 + 7, n * n);
        let mv = [matrix(n, n, &m)];
        let t = floats(&p, &format!("transpose{n}"), &mv);
        let want: Vec<f64> = (0..n * n).map(|k| m[(k % n) * n + k / n]).collect();
        assert_eq!(t, want, "transpose mat{n}");
        assert_eq!(floats(&p, &format!("lib_transpose{n}"), &mv), want);
        assert_eq!(floats(&p, "transpose_dyn", &mv), want, "as a matrix");
        let tr = floats(&p, &format!("trace{n}"), &mv);
        assert_eq!(tr, [(1..n).fold(m[0], |s, i| s + m[i * n + i])], "trace mat{n}");
        let f2 = floats(&p, &format!("frob2_{n}"), &mv);
        assert_eq!(f2, floats(&p, "frob2_dyn", &mv), "frob2 mat{n} as a matrix");
        close("frob2", &f2, &[m.iter().map(|x| x * x).sum()], 1e-14);
        let d = inputs(n as u64, n);
        let dm = floats(&p, &format!("diag{n}"), &[vector(&d)]);
        let want: Vec<f64> = (0..n * n)
            .map(|k| if k / n == k % n { d[k / n] } else { 0.0 })
            .collect();
        assert_eq!(dm, want, "diag vec{n}");
    }
    let m = inputs(53, 15);
    let t = floats(&p, "transpose53", &[matrix(5, 3, &m)]);
    let want: Vec<f64> = (0..15).map(|k| m[(k % 5) * 3 + k / 5]).collect();
    assert_eq!(t, want, "transpose mat5x3");
    assert_eq!(
        floats(&p, "frob2_53", &[matrix(5, 3, &m)]),
        floats(&p, "frob2_dyn", &[matrix(5, 3, &m)])
    );
}

#[test]
fn reductions_match_the_vector_versions() {
    let p = compile(&library_src(&[7, 16]));
    let nan = f64::NAN;
    let mut cases: Vec<Vec<f64>> = vec![inputs(9, 7), inputs(10, 16)];
    cases.push(vec![0.5, 3.0, -2.0, 3.0, -2.0, 1.0, 0.0]);
    cases.push(vec![1.0, 2.0, nan, 9.0, nan, -1.0, 0.0]);
    cases.push(vec![800.0; 16]);
    cases.push({
        let mut v = vec![-900.0; 16];
        v[15] = f64::INFINITY;
        v
    });
    for v in cases {
        let fixed = both(&p, &format!("reduce{}", v.len()), &[vector(&v)]).0;
        let dynamic = both(&p, "reduce_dyn", &[vector(&v)]).0;
        assert_eq!(format!("{fixed:?}"), format!("{dynamic:?}"), "{v:?}");
    }
    let (r, _) = both(&p, "reduce7", &[vector(&[0.5, 3.0, -2.0, 3.0, -2.0, 1.0, 0.0])]);
    let Value::Tuple(items) = r else { panic!("a tuple") };
    assert_eq!((&items[2], &items[3]), (&Value::I64(1), &Value::I64(2)), "the first extremes");
}

// ---- derivatives ---------------------------------------------------------------------

const DERIVATIVES: &str = "
fn energy16(x: vec16) -> f64 { logsumexp(x) + norm(x) * trace(diag(x)) + dot(x, lerp(x, normalize(x), 0.25)) }
fn g_energy16(x: vec16) -> vec16 { grad(energy16)(x) }
fn mat_energy(m: mat5x3, a: vec5, b: vec3) -> f64 { frob2(transpose(m) + outer(b, a)) + dot(m * b, a) }
fn g_mat_energy(m: mat5x3, a: vec5, b: vec3) -> (mat5x3, vec5, vec3) { grad(mat_energy)(m, a, b) }
fn cell(x: vec10) -> vec10 { normalize(x) * logsumexp(x) + diag(x) * x }
fn j_cell(x: vec10) -> matrix { jacobian(cell)(x) }
fn scalar10(x: vec10) -> f64 { logsumexp(x) * norm(x) + frob2(outer(x, x)) }
fn g_scalar10(x: vec10) -> vec10 { grad(scalar10)(x) }
fn h_scalar10(x: vec10) -> matrix { hessian(scalar10)(x) }
fn jv_normalize7(x: vec7, t: vec7) -> (vec7, vec7) { jvp(normalize)(x, t) }
fn vj_normalize7(x: vec7, w: vec7) -> (vec7, vec7) { vjp(normalize)(x, w) }
fn normalize7(x: vec7) -> vec7 { normalize(x) }
fn g_norm7(x: vec7) -> vec7 { grad(norm)(x) }
fn g_lse16(x: vec16) -> vec16 { grad(logsumexp)(x) }
fn max7(x: vec7) -> f64 { max(x) }
fn g_max7(x: vec7) -> vec7 { grad(max7)(x) }
";

#[test]
fn gradients_match_differences_and_closed_forms() {
    let p = compile(DERIVATIVES);
    let x = inputs(16, 16);
    let g = floats(&p, "g_energy16", &[vector(&x)]);
    let f = |y: &[f64]| floats(&p, "energy16", &[vector(y)]);
    let fd: Vec<f64> = differences(&f, &x).into_iter().map(|c| c[0]).collect();
    close("grad of a vec16 energy", &g, &fd, 1e-6);

    let (m, a, b) = (inputs(15, 15), inputs(5, 5), inputs(3, 3));
    let g = floats(&p, "g_mat_energy", &[matrix(5, 3, &m), vector(&a), vector(&b)]);
    let f = |y: &[f64]| {
        let args = [matrix(5, 3, &y[..15]), vector(&y[15..20]), vector(&y[20..])];
        floats(&p, "mat_energy", &args)
    };
    let all: Vec<f64> = [&m[..], &a[..], &b[..]].concat();
    let fd: Vec<f64> = differences(&f, &all).into_iter().map(|c| c[0]).collect();
    close("grad through mat5x3, vec5, vec3", &g, &fd, 1e-6);

    let x7 = inputs(7, 7);
    let n = dot(&x7, &x7).sqrt();
    let g = floats(&p, "g_norm7", &[vector(&x7)]);
    close("grad(norm) of a vec7", &g, &x7.iter().map(|v| v / n).collect::<Vec<_>>(), 1e-15);
    let e: Vec<f64> = x.iter().map(|v| v.exp()).collect();
    let total: f64 = e.iter().sum();
    let softmax: Vec<f64> = e.iter().map(|v| v / total).collect();
    close("grad(logsumexp) of a vec16", &floats(&p, "g_lse16", &[vector(&x)]), &softmax, 1e-14);
    let g = floats(&p, "g_max7", &[vector(&[0.0, 2.0, -1.0, 2.0, 0.5, 1.0, 2.0])]);
    assert_eq!(g, [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0], "to the first largest entry");
}

#[test]
fn jvp_and_vjp_of_a_vec7_function() {
    let p = compile(DERIVATIVES);
    let x = inputs(70, 7);
    let (t, w) = (inputs(71, 7), inputs(72, 7));
    let f = |y: &[f64]| floats(&p, "normalize7", &[vector(y)]);
    let cols = differences(&f, &x);
    let jt: Vec<f64> = (0..7).map(|i| (0..7).map(|j| cols[j][i] * t[j]).sum()).collect();
    let jtw: Vec<f64> = (0..7).map(|j| (0..7).map(|i| cols[j][i] * w[i]).sum()).collect();
    let r = floats(&p, "jv_normalize7", &[vector(&x), vector(&t)]);
    assert_eq!(r[..7], f(&x)[..], "jvp's value");
    close("jvp", &r[7..], &jt, 1e-6);
    let r = floats(&p, "vj_normalize7", &[vector(&x), vector(&w)]);
    assert_eq!(r[..7], f(&x)[..], "vjp's value");
    close("vjp", &r[7..], &jtw, 1e-6);
}

#[test]
fn jacobian_and_hessian_of_vec10_functions() {
    let p = compile(DERIVATIVES);
    let x = inputs(10, 10);
    let j = both(&p, "j_cell", &[vector(&x)]).0;
    assert_eq!(j.as_tensor().map(|t| t.shape.clone()), Some(vec![10, 10]));
    let f = |y: &[f64]| floats(&p, "cell", &[vector(y)]);
    let cols = differences(&f, &x);
    let want: Vec<f64> = (0..100).map(|k| cols[k % 10][k / 10]).collect();
    close("jacobian of a vec10 -> vec10 function", &flat(&j), &want, 1e-6);

    let h = both(&p, "h_scalar10", &[vector(&x)]).0;
    assert_eq!(h.as_tensor().map(|t| t.shape.clone()), Some(vec![10, 10]));
    let h = flat(&h);
    let g = |y: &[f64]| floats(&p, "g_scalar10", &[vector(y)]);
    let cols = differences(&g, &x);
    let want: Vec<f64> = (0..100).map(|k| cols[k % 10][k / 10]).collect();
    close("hessian of a vec10 function", &h, &want, 1e-6);
    for r in 0..10 {
        for c in 0..r {
            close("symmetry", &[h[r * 10 + c]], &[h[c * 10 + r]], 1e-12);
        }
    }
}

// ---- mesh energies ---------------------------------------------------------------------

/// Unknowns of seven components per vertex, through the size-generic library.
const DOF7: &str = r#"
dof x: vertex -> vec7;
energy stretch(e: edge) {
    let d = x[e.v0] - x[e.v1];
    norm2(d) * (1.0 + 0.1 * logsumexp(d))
}
energy area(f: face) {
    let m = mat3x7::rows(x[f.v0], x[f.v1], x[f.v2]);
    frob2(m * transpose(m)) + trace(outer(x[f.v0], x[f.v2]))
}
"#;

#[test]
fn energies_of_vec7_unknowns_match_differences() {
    crate::energy_common::derivatives_match_differences(DOF7, "grid:3x3", 0.5, 7);
}

// ---- `.npy` and typed calls ----------------------------------------------------------------

const NPY: &str = "fn scale53(m: mat5x3, s: f64) -> mat5x3 { m * s }\n";

#[test]
fn npy_round_trip_of_a_mat5x3() {
    let d = std::env::temp_dir().join(format!("mad-fixed-sizes-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let prog = d.join("scale.mad");
    std::fs::write(&prog, NPY).unwrap();
    let m: Vec<f64> = (0..15).map(f64::from).collect();
    let input = d.join("m.npy");
    npy::save(&input, &Tensor::from_f64(vec![5, 3], m.clone()).unwrap()).unwrap();
    let out = d.join("r.npy");
    let (prog, input, out) = (prog.display().to_string(), input.display().to_string(), out.display().to_string());
    for engine in [&[][..], &["--interp"][..]] {
        let args = [&["run", &prog, "--entry", "scale53", "--out-npy", &out], engine, &["--", &input, "0.5"]].concat();
        let (rc, stdout, err) = madc(&args);
        assert_eq!((rc, stdout.as_str()), (0, ""), "{err}");
        let want: Vec<f64> = m.iter().map(|x| x * 0.5).collect();
        assert_eq!(npy::load(&out).unwrap(), Tensor::from_f64(vec![5, 3], want).unwrap());
    }
    // The transposed shape does not fit, and the error says which does.
    let wrong = d.join("t.npy");
    npy::save(&wrong, &Tensor::from_f64(vec![3, 5], m).unwrap()).unwrap();
    let wrong = wrong.display().to_string();
    let (rc, _, err) = madc(&["run", &prog, "--entry", "scale53", "--", &wrong, "1"]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("`m: mat5x3`") && err.contains("shape (5, 3)"), "{err}");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn typed_calls_of_the_larger_sizes() {
    let p = compile("fn scale53(m: mat5x3, s: f64) -> mat5x3 { m * s }\nfn twice16(v: vec16) -> vec16 { 2.0 * v }\n");
    let f = p.function::<([[f64; 3]; 5], f64), [[f64; 3]; 5]>("scale53").unwrap();
    let m = [[1.0, 2.0, 3.0]; 5];
    assert_eq!(f.call((m, 2.0)).unwrap(), [[2.0, 4.0, 6.0]; 5]);
    let g = p.function::<([f64; 16],), [f64; 16]>("twice16").unwrap();
    assert_eq!(g.call(([1.5; 16],)).unwrap(), [3.0; 16]);
    let v = Value::Tensor(Tensor::new(vec![16], TensorData::F64(vec![1.0; 16])).unwrap());
    assert_eq!(flat(&both(&p, "twice16", &[v]).0), vec![2.0; 16]);
}

// ---- errors ----------------------------------------------------------------------------

/// The codes and rendered text of a program that must not compile.
fn errors(src: &str) -> (Vec<String>, String) {
    match Program::compile_str("bad.mad", src) {
        Err(mad::Error::Compile(d)) => (d.codes(), d.render(false)),
        Err(e) => panic!("not a compile error: {e}"),
        Ok(_) => panic!("compiled: {src}"),
    }
}

/// Each program fails with the one code given, and its diagnostic says every text given.
fn expect_errors(cases: &[(&str, &str, &[&str])]) {
    for (src, code, says) in cases {
        let (codes, text) = errors(src);
        assert_eq!(codes, [*code], "{text}");
        for s in *says {
            assert!(text.contains(s), "{src}: no `{s}` in\n{text}");
        }
    }
}

#[test]
fn sizes_past_the_bound_name_it() {
    let bound = "fixed sizes go up to 16";
    expect_errors(&[
        ("fn f(x: vec17) -> f64 { 0.0 }", "E0107", &["`vec17` is not a vector type: `vecN` has N from 2 to 16", bound]),
        ("fn f() -> f64 { let m: mat17 = 1.0; 0.0 }", "E0107", &["`mat17` is not a matrix type: `matN` has N from 2 to 16", bound]),
        ("fn f() { let m = mat17(1.0); }", "E0107", &["`mat17` is not a matrix type", bound]),
        ("fn f() { let v = vec17(1.0); }", "E0107", &["`vec17` is not a vector type", bound]),
        ("fn f() { let m = mat3x17::identity(); }", "E0107", &["`matRxC` has R and C from 1 to 16", bound]),
    ]);
}

#[test]
fn constructors_take_every_entry() {
    expect_errors(&[
        ("fn f() { let v = vec7(1.0, 2.0); }", "E0103", &["`vec7` expects 7 argument(s), found 2"]),
        ("fn f() { let m = mat5x3(1.0, 2.0, 3.0); }", "E0103", &["`mat5x3` expects 15 argument(s), found 3"]),
        ("fn f() { let m = mat5x3::rows(vec3(1, 2, 3)); }", "E0103", &["`mat5x3::rows` expects 5 argument(s), found 1"]),
    ]);
}

#[test]
fn a_mismatch_lists_each_family_once() {
    expect_errors(&[
        (
            "fn f() -> f64 { dot(vec7(1, 2, 3, 4, 5, 6, 7), vec2(1, 2)) }",
            "E0104",
            &["candidates are:\n      std::vec::dot(vecN, vecN) -> f64, N from 2 to 16\n"],
        ),
        ("fn f(m: matrix) -> f64 { trace(m) }", "E0104", &["std::mat::trace(matN) -> f64, N from 2 to 16"]),
        (
            "fn f() -> f64 { grad(norm)(1.0) }",
            "E0104",
            &["grad(std::vec::norm) of std::vec::norm(vecN) -> f64, N from 2 to 16"],
        ),
    ]);
}

#[test]
fn size_variables_belong_to_the_library() {
    let (codes, text) = errors("@sizes(N) fn f(v: vecN) -> f64 { 0.0 }");
    assert_eq!(codes, ["E0115", "E0107"], "{text}");
    assert!(text.contains("unknown attribute `@sizes`") && text.contains("unknown type `vecN`"), "{text}");
}
