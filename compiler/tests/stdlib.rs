//! The standard library (`stdlib/*.mad`) checked through the embedding API.
//!
//! Each test compiles a small `.mad` source whose functions wrap library calls,
//! calls them on fixed-seed random inputs, and compares the results with
//! references written here in Rust: hand formulas (dot, cross, cofactor
//! determinants) or defining properties (A·v = λ·v for eigenpairs, R·S = A for
//! the polar decomposition, U·diag(σ)·Vᵀ = A for the SVD). Nothing here shares
//! code with the library it checks.

// Dense reference computations index their matrices by row and column.
#![allow(clippy::needless_range_loop)]

use mad::Value;
use mad_runtime::Tensor;

// ---- inputs ------------------------------------------------------------------

/// SplitMix64: a small deterministic generator, so every run sees the same inputs.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }

    fn vec(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.unit()).collect()
    }
}

/// A dense row-major matrix on the Rust side.
#[derive(Clone, Debug)]
struct M {
    r: usize,
    c: usize,
    a: Vec<f64>,
}

impl M {
    fn new(r: usize, c: usize, a: Vec<f64>) -> M {
        assert_eq!(a.len(), r * c);
        M { r, c, a }
    }
    fn random(rng: &mut Rng, r: usize, c: usize) -> M {
        M::new(r, c, rng.vec(r * c))
    }
    fn identity(n: usize) -> M {
        M::new(
            n,
            n,
            (0..n * n)
                .map(|k| if k / n == k % n { 1.0 } else { 0.0 })
                .collect(),
        )
    }
    fn diag(d: &[f64]) -> M {
        let n = d.len();
        M::new(
            n,
            n,
            (0..n * n)
                .map(|k| if k / n == k % n { d[k / n] } else { 0.0 })
                .collect(),
        )
    }
    fn at(&self, i: usize, j: usize) -> f64 {
        self.a[i * self.c + j]
    }
    fn t(&self) -> M {
        M::new(
            self.c,
            self.r,
            (0..self.r * self.c)
                .map(|k| self.at(k % self.r, k / self.r))
                .collect(),
        )
    }
    fn mul(&self, o: &M) -> M {
        assert_eq!(self.c, o.r);
        let mut a = vec![0.0; self.r * o.c];
        for i in 0..self.r {
            for j in 0..o.c {
                a[i * o.c + j] = (0..self.c).map(|k| self.at(i, k) * o.at(k, j)).sum();
            }
        }
        M::new(self.r, o.c, a)
    }
    fn mul_vec(&self, v: &[f64]) -> Vec<f64> {
        (0..self.r)
            .map(|i| (0..self.c).map(|k| self.at(i, k) * v[k]).sum())
            .collect()
    }
    fn sub(&self, o: &M) -> M {
        M::new(
            self.r,
            self.c,
            self.a.iter().zip(&o.a).map(|(x, y)| x - y).collect(),
        )
    }
    fn col(&self, j: usize) -> Vec<f64> {
        (0..self.r).map(|i| self.at(i, j)).collect()
    }
    fn max_abs(&self) -> f64 {
        self.a.iter().fold(0.0, |m, x| m.max(x.abs()))
    }
    fn sym(&self) -> M {
        M::new(
            self.r,
            self.c,
            (0..self.r * self.c)
                .map(|k| 0.5 * (self.a[k] + self.t().a[k]))
                .collect(),
        )
    }
    fn value(&self) -> Value {
        Value::Tensor(Tensor::from_f64(vec![self.r, self.c], self.a.clone()).unwrap())
    }
}

/// The determinant by cofactor expansion along the first row.
fn det_ref(m: &M) -> f64 {
    assert_eq!(m.r, m.c);
    let n = m.r;
    if n == 1 {
        return m.a[0];
    }
    let mut d = 0.0;
    for j in 0..n {
        let minor: Vec<f64> = (1..n)
            .flat_map(|i| (0..n).filter(move |&k| k != j).map(move |k| (i, k)))
            .map(|(i, k)| m.at(i, k))
            .collect();
        let sign = if j % 2 == 0 { 1.0 } else { -1.0 };
        d += sign * m.at(0, j) * det_ref(&M::new(n - 1, n - 1, minor));
    }
    d
}

fn dot_ref(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

// ---- the program and values ------------------------------------------------------

fn compile(src: &str) -> mad::Program {
    mad::Program::compile_str("test.mad", src).unwrap()
}

fn call(prog: &mad::Program, name: &str, args: &[Value]) -> Value {
    prog.call(name, args).unwrap()
}

fn vv(a: &[f64]) -> Value {
    Value::Tensor(Tensor::vector(a.to_vec()))
}

fn f(x: f64) -> Value {
    Value::F64(x)
}

fn num(v: &Value) -> f64 {
    v.as_f64()
        .unwrap_or_else(|| panic!("expected an f64, got {v:?}"))
}

fn tensor(v: &Value, shape: &[usize]) -> Vec<f64> {
    let t = v
        .as_tensor()
        .unwrap_or_else(|| panic!("expected a tensor, got {v:?}"));
    assert_eq!(t.shape, shape, "shape of {v}");
    t.as_f64().unwrap().to_vec()
}

fn mat(v: &Value, r: usize, c: usize) -> M {
    M::new(r, c, tensor(v, &[r, c]))
}

fn tuple(v: &Value, n: usize) -> Vec<Value> {
    match v {
        Value::Tuple(items) if items.len() == n => items.clone(),
        other => panic!("expected a {n}-tuple, got {other:?}"),
    }
}

fn close(a: f64, b: f64, tol: f64, what: &str) {
    assert!((a - b).abs() <= tol * (1.0 + b.abs()), "{what}: {a} vs {b}");
}

fn close_all(a: &[f64], b: &[f64], tol: f64, what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    for (x, y) in a.iter().zip(b) {
        close(*x, *y, tol, what);
    }
}

/// Orthonormal columns and determinant +1.
fn assert_rotation(q: &M, tol: f64, what: &str) {
    let n = q.r;
    assert!(
        q.t().mul(q).sub(&M::identity(n)).max_abs() <= tol,
        "{what}: QᵀQ != I: {q:?}"
    );
    close(det_ref(q), 1.0, tol, &format!("{what}: det"));
}

const TOL: f64 = 1e-12;

// ---- std::vec -------------------------------------------------------------------

const VEC_SRC: &str = "
use std::vec::*;
fn dot2(a: vec2, b: vec2) -> f64 { dot(a, b) }
fn dot3(a: vec3, b: vec3) -> f64 { dot(a, b) }
fn dot4(a: vec4, b: vec4) -> f64 { dot(a, b) }
fn cross3(a: vec3, b: vec3) -> vec3 { cross(a, b) }
fn cross2(a: vec2, b: vec2) -> f64 { cross(a, b) }
fn norm2_2(v: vec2) -> f64 { norm2(v) }
fn norm2_3(v: vec3) -> f64 { norm2(v) }
fn norm2_4(v: vec4) -> f64 { norm2(v) }
fn norm_2(v: vec2) -> f64 { norm(v) }
fn norm_3(v: vec3) -> f64 { norm(v) }
fn norm_4(v: vec4) -> f64 { norm(v) }
fn normalize_2(v: vec2) -> vec2 { normalize(v) }
fn normalize_3(v: vec3) -> vec3 { normalize(v) }
fn normalize_4(v: vec4) -> vec4 { normalize(v) }
fn outer22(a: vec2, b: vec2) -> mat2 { outer(a, b) }
fn outer23(a: vec2, b: vec3) -> mat2x3 { outer(a, b) }
fn outer24(a: vec2, b: vec4) -> mat2x4 { outer(a, b) }
fn outer32(a: vec3, b: vec2) -> mat3x2 { outer(a, b) }
fn outer33(a: vec3, b: vec3) -> mat3 { outer(a, b) }
fn outer34(a: vec3, b: vec4) -> mat3x4 { outer(a, b) }
fn outer42(a: vec4, b: vec2) -> mat4x2 { outer(a, b) }
fn outer43(a: vec4, b: vec3) -> mat4x3 { outer(a, b) }
fn outer44(a: vec4, b: vec4) -> mat4 { outer(a, b) }
";

#[test]
fn dot_norm_normalize_match_hand_formulas() {
    let prog = compile(VEC_SRC);
    let mut rng = Rng(1);
    for _ in 0..20 {
        for n in 2..=4 {
            let a = rng.vec(n);
            let b = rng.vec(n);
            let d = num(&call(&prog, &format!("dot{n}"), &[vv(&a), vv(&b)]));
            close(d, dot_ref(&a, &b), TOL, "dot");
            let n2 = num(&call(&prog, &format!("norm2_{n}"), &[vv(&a)]));
            close(n2, dot_ref(&a, &a), TOL, "norm2");
            let nn = num(&call(&prog, &format!("norm_{n}"), &[vv(&a)]));
            close(nn, dot_ref(&a, &a).sqrt(), TOL, "norm");
            let u = tensor(&call(&prog, &format!("normalize_{n}"), &[vv(&a)]), &[n]);
            let expect: Vec<f64> = a.iter().map(|x| x / dot_ref(&a, &a).sqrt()).collect();
            close_all(&u, &expect, TOL, "normalize");
        }
    }
}

#[test]
fn cross_products_match_hand_formulas() {
    let prog = compile(VEC_SRC);
    let mut rng = Rng(2);
    for _ in 0..20 {
        let a = rng.vec(3);
        let b = rng.vec(3);
        let c = tensor(&call(&prog, "cross3", &[vv(&a), vv(&b)]), &[3]);
        let expect = [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ];
        close_all(&c, &expect, TOL, "cross3");
        // The cross product is orthogonal to both factors.
        close(dot_ref(&c, &a), 0.0, TOL, "cross3 ⟂ a");
        close(dot_ref(&c, &b), 0.0, TOL, "cross3 ⟂ b");
        let z = num(&call(&prog, "cross2", &[vv(&a[..2]), vv(&b[..2])]));
        // The z component of the 3-D cross product of (a, 0) and (b, 0).
        close(z, expect[2], TOL, "cross2");
    }
}

#[test]
fn outer_products_of_every_shape() {
    let prog = compile(VEC_SRC);
    let mut rng = Rng(3);
    for r in 2..=4 {
        for c in 2..=4 {
            let a = rng.vec(r);
            let b = rng.vec(c);
            let m = mat(
                &call(&prog, &format!("outer{r}{c}"), &[vv(&a), vv(&b)]),
                r,
                c,
            );
            for i in 0..r {
                for j in 0..c {
                    close(m.at(i, j), a[i] * b[j], TOL, "outer");
                }
            }
        }
    }
}

// ---- std::mat: transpose, trace, frob2, diag, det, inv ------------------------

const SHAPES: [(usize, usize); 9] = [
    (2, 2),
    (2, 3),
    (2, 4),
    (3, 2),
    (3, 3),
    (3, 4),
    (4, 2),
    (4, 3),
    (4, 4),
];

fn mat_type(r: usize, c: usize) -> String {
    if r == c {
        format!("mat{r}")
    } else {
        format!("mat{r}x{c}")
    }
}

fn mat_src() -> String {
    let mut s = String::from("use std::mat::*;\n");
    for (r, c) in SHAPES {
        let (t, tt) = (mat_type(r, c), mat_type(c, r));
        s += &format!("fn transpose{r}{c}(m: {t}) -> {tt} {{ transpose(m) }}\n");
        s += &format!("fn frob2_{r}{c}(m: {t}) -> f64 {{ frob2(m) }}\n");
    }
    for n in 2..=4 {
        s += &format!("fn trace{n}(m: mat{n}) -> f64 {{ trace(m) }}\n");
        s += &format!("fn det{n}(m: mat{n}) -> f64 {{ det(m) }}\n");
        s += &format!("fn diag{n}(v: vec{n}) -> mat{n} {{ diag(v) }}\n");
    }
    s += "fn frob2_dyn(m: matrix) -> f64 { frob2(m) }\n";
    s += "fn inv2(m: mat2) -> mat2 { inv(m) }\n";
    s += "fn inv3(m: mat3) -> mat3 { inv(m) }\n";
    s
}

#[test]
fn transpose_and_frob2_of_every_shape() {
    let prog = compile(&mat_src());
    let mut rng = Rng(4);
    for (r, c) in SHAPES {
        let m = M::random(&mut rng, r, c);
        let t = mat(
            &call(&prog, &format!("transpose{r}{c}"), &[m.value()]),
            c,
            r,
        );
        for i in 0..r {
            for j in 0..c {
                assert_eq!(t.at(j, i), m.at(i, j), "transpose {r}x{c}");
            }
        }
        let f2 = num(&call(&prog, &format!("frob2_{r}{c}"), &[m.value()]));
        close(f2, m.a.iter().map(|x| x * x).sum(), TOL, "frob2");
    }
    // frob2 of a dynamic matrix of a size no fixed type has
    let m = M::random(&mut rng, 5, 7);
    let f2 = num(&call(&prog, "frob2_dyn", &[m.value()]));
    close(f2, m.a.iter().map(|x| x * x).sum(), TOL, "frob2 matrix");
}

#[test]
fn trace_and_diag() {
    let prog = compile(&mat_src());
    let mut rng = Rng(5);
    for n in 2..=4 {
        let m = M::random(&mut rng, n, n);
        let tr = num(&call(&prog, &format!("trace{n}"), &[m.value()]));
        close(tr, (0..n).map(|i| m.at(i, i)).sum(), TOL, "trace");
        let d = rng.vec(n);
        let dm = mat(&call(&prog, &format!("diag{n}"), &[vv(&d)]), n, n);
        assert_eq!(dm.a, M::diag(&d).a, "diag");
    }
}

#[test]
fn det_matches_cofactor_expansion() {
    let prog = compile(&mat_src());
    let mut rng = Rng(6);
    for _ in 0..20 {
        for n in 2..=4 {
            let m = M::random(&mut rng, n, n);
            let d = num(&call(&prog, &format!("det{n}"), &[m.value()]));
            close(d, det_ref(&m), TOL, &format!("det{n}"));
        }
    }
    // Exact on small integer matrices.
    let m = M::new(
        4,
        4,
        vec![
            2.0, 0.0, 1.0, 3.0, 1.0, 1.0, 0.0, 2.0, 0.0, 3.0, 1.0, 1.0, 4.0, 1.0, 2.0, 0.0,
        ],
    );
    assert_eq!(num(&call(&prog, "det4", &[m.value()])), det_ref(&m));
    // det(I) = 1, det of a singular matrix = 0.
    assert_eq!(num(&call(&prog, "det3", &[M::identity(3).value()])), 1.0);
    let s = M::new(3, 3, vec![1.0, 2.0, 3.0, 2.0, 4.0, 6.0, 0.0, 1.0, 5.0]);
    assert_eq!(num(&call(&prog, "det3", &[s.value()])), 0.0);
}

#[test]
fn inv_times_matrix_is_identity() {
    let prog = compile(&mat_src());
    let mut rng = Rng(7);
    for _ in 0..20 {
        for n in 2..=3 {
            let mut m = M::random(&mut rng, n, n);
            // Keep the inputs well conditioned: add n to the diagonal.
            for i in 0..n {
                m.a[i * n + i] += n as f64;
            }
            let inv = mat(&call(&prog, &format!("inv{n}"), &[m.value()]), n, n);
            assert!(
                inv.mul(&m).sub(&M::identity(n)).max_abs() < 1e-12,
                "inv{n}(A)·A"
            );
            assert!(
                m.mul(&inv).sub(&M::identity(n)).max_abs() < 1e-12,
                "A·inv{n}(A)"
            );
            // det(inv(A)) = 1 / det(A)
            close(det_ref(&inv) * det_ref(&m), 1.0, 1e-12, "det(inv A) det A");
        }
    }
    // A matrix whose inverse is exact in binary floating point.
    let m = M::new(2, 2, vec![4.0, 1.0, 2.0, 3.0]);
    let inv = mat(&call(&prog, "inv2", &[m.value()]), 2, 2);
    assert_eq!(inv.a, vec![0.3, -0.1, -0.2, 0.4]);
}

/// Within the documented magnitudes (entries up to about 1e154 for mat2, 1e102 for mat3,
/// and down to their reciprocals) `inv` is accurate; beyond them the determinant overflows
/// as §13.2 says, and scaling first (`inv(m / s) / s`) recovers the inverse.
#[test]
fn inv_across_the_documented_magnitudes() {
    let prog = compile(&mat_src());
    let mut rng = Rng(71);
    for (n, limit) in [(2usize, 150), (3, 100)] {
        for e in [-limit, -limit / 2, 0, limit / 2, limit] {
            let mut b = M::random(&mut rng, n, n);
            for i in 0..n {
                b.a[i * n + i] += n as f64;
            }
            let s = 10f64.powi(e);
            let m = M::new(n, n, b.a.iter().map(|v| v * s).collect());
            let inv = mat(&call(&prog, &format!("inv{n}"), &[m.value()]), n, n);
            let back = M::new(n, n, inv.a.iter().map(|v| v * s).collect());
            assert!(back.mul(&b).sub(&M::identity(n)).max_abs() < 1e-11, "inv{n}(10^{e} B)");
        }
        // Past the limit the determinant overflows: not the inverse; scaled first, it is.
        let big = 10f64.powi(if n == 2 { 160 } else { 110 });
        let m = M::new(n, n, M::identity(n).a.iter().map(|v| v * big).collect());
        let inv = mat(&call(&prog, &format!("inv{n}"), &[m.value()]), n, n);
        assert!(inv.a.iter().all(|&v| v == 0.0 || v.is_nan()), "inv{n} past the limit: {inv:?}");
        let unit = mat(&call(&prog, &format!("inv{n}"), &[M::identity(n).value()]), n, n);
        assert_eq!(unit.a, M::identity(n).a);
    }
}

// ---- std::mat: eig_sym, polar, svd -----------------------------------------------

const DECOMP_SRC: &str = "
use std::mat::{eig_sym, polar, svd};
fn eig2(m: mat2) -> (vec2, mat2) { eig_sym(m) }
fn eig3(m: mat3) -> (vec3, mat3) { eig_sym(m) }
fn polar2(m: mat2) -> (mat2, mat2) { polar(m) }
fn polar3(m: mat3) -> (mat3, mat3) { polar(m) }
fn svd2(m: mat2) -> (mat2, vec2, mat2) { svd(m) }
fn svd3(m: mat3) -> (mat3, vec3, mat3) { svd(m) }
";

/// Random inputs of size n, with the hard cases mixed in: zero, identity,
/// repeated diagonal entries, rank one (some with equal rows), and a reflection.
fn test_matrices(rng: &mut Rng, n: usize) -> Vec<M> {
    let mut out = vec![M::new(n, n, vec![0.0; n * n]), M::identity(n)];
    let mut d = vec![2.0; n];
    d[0] = -1.0;
    out.push(M::diag(&d));
    let (a, b) = (rng.vec(n), rng.vec(n));
    out.push(M::new(
        n,
        n,
        (0..n * n).map(|k| a[k / n] * b[k % n]).collect(),
    ));
    // Rank one with every row equal (m·v is a multiple of one vector for every v).
    out.push(M::new(n, n, vec![1.0; n * n]));
    out.push(M::new(n, n, (0..n * n).map(|k| 2.0 * b[k % n]).collect()));
    let mut refl = M::identity(n);
    refl.a[0] = -1.0;
    out.push(refl.mul(&M::random(rng, n, n)));
    for _ in 0..25 {
        out.push(M::random(rng, n, n));
    }
    out
}

fn eig_name(n: usize) -> String {
    format!("eig{n}")
}

#[test]
fn eig_sym_gives_ascending_eigenpairs_and_a_rotation() {
    let prog = compile(DECOMP_SRC);
    let mut rng = Rng(8);
    for n in 2..=3 {
        for m in test_matrices(&mut rng, n) {
            let s = m.sym();
            let r = tuple(&call(&prog, &eig_name(n), &[s.value()]), 2);
            let lambda = tensor(&r[0], &[n]);
            let v = mat(&r[1], n, n);
            let scale = 1.0 + s.max_abs();
            for i in 0..n {
                let x = v.col(i);
                let sx = s.mul_vec(&x);
                for k in 0..n {
                    assert!(
                        (sx[k] - lambda[i] * x[k]).abs() <= 1e-12 * scale,
                        "S·v = λ·v for {s:?}: {lambda:?} {v:?}"
                    );
                }
            }
            for i in 1..n {
                assert!(lambda[i - 1] <= lambda[i], "ascending: {lambda:?}");
            }
            assert_rotation(&v, 1e-12, "eigenvectors");
            // The invariants: trace = Σλ, det = Πλ.
            close(
                lambda.iter().sum(),
                (0..n).map(|i| s.at(i, i)).sum(),
                1e-12 * scale,
                "trace",
            );
            close(
                lambda.iter().product(),
                det_ref(&s),
                1e-11 * scale.powi(n as i32),
                "det",
            );
        }
    }
}

#[test]
fn eig_sym_reads_only_the_symmetric_part() {
    let prog = compile(DECOMP_SRC);
    // (m + mᵀ)/2 of this matrix is [[2, 1], [1, 2]]: eigenvalues 1 and 3.
    let m = M::new(2, 2, vec![2.0, 0.0, 2.0, 2.0]);
    let r = tuple(&call(&prog, "eig2", &[m.value()]), 2);
    close_all(&tensor(&r[0], &[2]), &[1.0, 3.0], 1e-15, "eigenvalues");
    // A diagonal matrix with known eigenvalues, given out of order.
    let d = M::diag(&[3.0, -2.0, 0.5]);
    let r = tuple(&call(&prog, "eig3", &[d.value()]), 2);
    close_all(
        &tensor(&r[0], &[3]),
        &[-2.0, 0.5, 3.0],
        1e-15,
        "eigenvalues",
    );
}

#[test]
fn polar_gives_a_rotation_and_a_symmetric_factor() {
    let prog = compile(DECOMP_SRC);
    let mut rng = Rng(9);
    for n in 2..=3 {
        for a in test_matrices(&mut rng, n) {
            let r = tuple(&call(&prog, &format!("polar{n}"), &[a.value()]), 2);
            let rot = mat(&r[0], n, n);
            let s = mat(&r[1], n, n);
            let scale = 1.0 + a.max_abs();
            assert_rotation(&rot, 1e-12, "polar R");
            assert!(
                s.sub(&s.t()).max_abs() <= 1e-13 * scale,
                "S symmetric: {s:?}"
            );
            assert!(
                rot.mul(&s).sub(&a).max_abs() <= 1e-12 * scale,
                "R·S = A for {a:?}"
            );
            if det_ref(&a) > 1e-9 {
                // S is positive semi-definite: xᵀSx >= 0 for any x.
                for _ in 0..20 {
                    let x = rng.vec(n);
                    assert!(
                        dot_ref(&x, &s.mul_vec(&x)) >= -1e-12 * scale,
                        "S PSD for {a:?}"
                    );
                }
            }
        }
    }
    // The polar factors of a rotation times a stretch are that rotation and stretch.
    let (c, s) = (0.6, 0.8);
    let q = M::new(3, 3, vec![c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0]);
    let stretch = M::diag(&[3.0, 2.0, 0.5]);
    let r = tuple(&call(&prog, "polar3", &[q.mul(&stretch).value()]), 2);
    assert!(mat(&r[0], 3, 3).sub(&q).max_abs() < 1e-12, "R");
    assert!(mat(&r[1], 3, 3).sub(&stretch).max_abs() < 1e-12, "S");
}

#[test]
fn svd_reconstructs_with_rotations_and_ordered_singular_values() {
    let prog = compile(DECOMP_SRC);
    let mut rng = Rng(10);
    for n in 2..=3 {
        for a in test_matrices(&mut rng, n) {
            let r = tuple(&call(&prog, &format!("svd{n}"), &[a.value()]), 3);
            let u = mat(&r[0], n, n);
            let sigma = tensor(&r[1], &[n]);
            let v = mat(&r[2], n, n);
            let scale = 1.0 + a.max_abs();
            assert_rotation(&u, 1e-12, "svd U");
            assert_rotation(&v, 1e-12, "svd V");
            let rebuilt = u.mul(&M::diag(&sigma)).mul(&v.t());
            assert!(
                rebuilt.sub(&a).max_abs() <= 1e-12 * scale,
                "U·Σ·Vᵀ = A for {a:?}: {sigma:?}"
            );
            // Descending, all non-negative but the last, whose sign is det's.
            for i in 0..n - 1 {
                assert!(sigma[i] >= -1e-15, "sigma[{i}] >= 0: {sigma:?}");
                assert!(
                    sigma[i] + 1e-12 * scale >= sigma[i + 1].abs(),
                    "descending: {sigma:?}"
                );
            }
            let det = det_ref(&a);
            if det.abs() > 1e-9 {
                assert_eq!(
                    sigma[n - 1] < 0.0,
                    det < 0.0,
                    "sign of the last singular value: {sigma:?}, det {det}"
                );
            }
            // The squared singular values are the eigenvalues of AᵀA: compare their
            // symmetric functions with trace, sum of principal 2x2 minors and det.
            let ata = a.t().mul(&a);
            let s2: Vec<f64> = sigma.iter().map(|x| x * x).collect();
            let tol = 1e-11 * scale.powi(2);
            close(
                s2.iter().sum(),
                (0..n).map(|i| ata.at(i, i)).sum(),
                tol,
                "Σσ²",
            );
            close(
                sigma.iter().product(),
                det,
                1e-11 * scale.powi(n as i32),
                "Πσ = det",
            );
            if n == 3 {
                let minors: f64 = [(0, 1), (0, 2), (1, 2)]
                    .iter()
                    .map(|&(i, j)| ata.at(i, i) * ata.at(j, j) - ata.at(i, j) * ata.at(j, i))
                    .sum();
                let pairs = s2[0] * s2[1] + s2[0] * s2[2] + s2[1] * s2[2];
                close(pairs, minors, 1e-11 * scale.powi(4), "Σσᵢ²σⱼ²");
            }
        }
    }
}

// ---- std::math -------------------------------------------------------------------

const MATH_SRC: &str = "
use std::math::{clamp, lerp};
fn clamp_f(x: f64, lo: f64, hi: f64) -> f64 { clamp(x, lo, hi) }
fn clamp_i(x: i64, lo: i64, hi: i64) -> i64 { clamp(x, lo, hi) }
fn lerp_f(a: f64, b: f64, t: f64) -> f64 { lerp(a, b, t) }
fn lerp2(a: vec2, b: vec2, t: f64) -> vec2 { lerp(a, b, t) }
fn lerp3(a: vec3, b: vec3, t: f64) -> vec3 { lerp(a, b, t) }
fn lerp4(a: vec4, b: vec4, t: f64) -> vec4 { lerp(a, b, t) }
";

#[test]
fn clamp_of_floats_and_integers() {
    let prog = compile(MATH_SRC);
    let cases = [
        (-2.0, -1.0),
        (0.25, 0.25),
        (7.0, 1.0),
        (1.0, 1.0),
        (-1.0, -1.0),
    ];
    for (x, expect) in cases {
        assert_eq!(
            num(&call(&prog, "clamp_f", &[f(x), f(-1.0), f(1.0)])),
            expect,
            "clamp({x})"
        );
    }
    for (x, expect) in [(-5, 0), (3, 3), (12, 10), (i64::MAX, 10), (i64::MIN, 0)] {
        let r = call(
            &prog,
            "clamp_i",
            &[Value::I64(x), Value::I64(0), Value::I64(10)],
        );
        assert_eq!(r.as_i64(), Some(expect), "clamp({x})");
    }
}

#[test]
fn lerp_is_exact_at_the_ends_and_linear_between() {
    let prog = compile(MATH_SRC);
    let mut rng = Rng(11);
    for _ in 0..20 {
        let (a, b, t) = (rng.unit() * 10.0, rng.unit() * 10.0, rng.unit());
        assert_eq!(num(&call(&prog, "lerp_f", &[f(a), f(b), f(0.0)])), a);
        assert_eq!(num(&call(&prog, "lerp_f", &[f(a), f(b), f(1.0)])), b);
        close(
            num(&call(&prog, "lerp_f", &[f(a), f(b), f(t)])),
            a + t * (b - a),
            TOL,
            "lerp",
        );
        for n in 2..=4 {
            let (va, vb) = (rng.vec(n), rng.vec(n));
            let r = tensor(
                &call(&prog, &format!("lerp{n}"), &[vv(&va), vv(&vb), f(t)]),
                &[n],
            );
            let expect: Vec<f64> = va.iter().zip(&vb).map(|(x, y)| x + t * (y - x)).collect();
            close_all(&r, &expect, TOL, "lerp vec");
            let end = tensor(
                &call(&prog, &format!("lerp{n}"), &[vv(&va), vv(&vb), f(1.0)]),
                &[n],
            );
            assert_eq!(end, vb, "lerp at t = 1");
        }
    }
}

/// The derivatives of the 3×3 eigenvalues and of the polar rotation, through the Jacobi
/// sweeps, against central differences: dλ_i/dx = v_iᵀ (dS/dx) v_i for simple eigenvalues.
#[test]
fn eig_sym_and_polar_derivatives_match_differences() {
    let prog = compile(
        "
use std::mat::{eig_sym, polar};
fn s_of(x: f64) -> mat3 { mat3(2.0 + x, 0.3, 0.1 * x, 0.3, 1.0 - x * x, 0.2 * x, 0.1 * x, 0.2 * x, -1.0) }
fn lmax(x: f64) -> f64 { let (l, v) = eig_sym(s_of(x)); l[2] + 0.5 * l[0] }
fn dlmax(x: f64) -> f64 { grad(lmax)(x) }
fn rot(x: f64) -> f64 { let (r, p) = polar(s_of(x) + mat3(0.0, x, 0.0, 0.0, 0.0, 0.0, 0.4, 0.0, 0.0)); r[0, 1] + 2.0 * r[2, 0] + p[1, 1] }
fn drot(x: f64) -> f64 { grad(rot)(x) }
",
    );
    for x in [-0.7, -0.2, 0.0, 0.3, 0.9] {
        let h = 1e-6;
        for (fname, dname) in [("lmax", "dlmax"), ("rot", "drot")] {
            let fd = (num(&call(&prog, fname, &[f(x + h)])) - num(&call(&prog, fname, &[f(x - h)])))
                / (2.0 * h);
            let ad = num(&call(&prog, dname, &[f(x)]));
            assert!((ad - fd).abs() <= 1e-7 * (1.0 + fd.abs()), "{dname}({x}) = {ad} vs fd {fd}");
        }
    }
}

/// Gradients through the 3×3 decompositions on many random matrices (distinct eigenvalues
/// and singular values), against the analytic derivatives of simple eigenvalues and
/// singular values: ∂(Σ wᵢλᵢ)/∂S = V diag(w) Vᵀ and ∂(Σ wᵢσᵢ)/∂M = U diag(w) Vᵀ. (The last
/// sweeps used to rotate away off-diagonal entries near underflow, and the derivatives
/// through those rotations were NaN for about one matrix in ten.)
#[test]
fn eig_sym_and_svd_gradients_of_random_3x3_matrices_are_the_analytic_ones() {
    let prog = compile(
        "
fn ev(m: mat3) -> f64 { let (l, v) = eig_sym(m); l[0] + 2.0 * l[1] + 3.0 * l[2] }
fn dev(m: mat3) -> mat3 { grad(ev)(m) }
fn eig3(m: mat3) -> (vec3, mat3) { eig_sym(m) }
fn sv(m: mat3) -> f64 { let (u, s, v) = svd(m); s[0] + 2.0 * s[1] + 3.0 * s[2] }
fn dsv(m: mat3) -> mat3 { grad(sv)(m) }
fn svd3(m: mat3) -> (mat3, vec3, mat3) { svd(m) }
fn rot(m: mat3) -> f64 { let (r, p) = polar(m); r[0, 1] + 2.0 * r[2, 0] }
fn drot(m: mat3) -> mat3 { grad(rot)(m) }
",
    );
    let w = [1.0, 2.0, 3.0];
    let mut rng = Rng(2024);
    let (mut eig_checked, mut svd_checked) = (0, 0);
    for _ in 0..400 {
        let m = M::random(&mut rng, 3, 3);
        // Eigenvalues of the symmetric part, and their gaps.
        let s = m.sym();
        let r = tuple(&call(&prog, "eig3", &[s.value()]), 2);
        let (lambda, v) = (tensor(&r[0], &[3]), mat(&r[1], 3, 3));
        if (lambda[1] - lambda[0]).min(lambda[2] - lambda[1]) > 1e-3 {
            let want = v.mul(&M::diag(&w)).mul(&v.t());
            let got = mat(&call(&prog, "dev", &[s.value()]), 3, 3);
            close_all(&got.a, &want.a, 1e-9, "∂(Σ wλ)/∂S");
            eig_checked += 1;
        }
        let r = tuple(&call(&prog, "svd3", &[m.value()]), 3);
        let (u, sigma, vv) = (mat(&r[0], 3, 3), tensor(&r[1], &[3]), mat(&r[2], 3, 3));
        let gaps = (sigma[0] - sigma[1]).min(sigma[1] - sigma[2].abs()).min(sigma[2].abs());
        if gaps > 1e-3 {
            let want = u.mul(&M::diag(&w)).mul(&vv.t());
            let got = mat(&call(&prog, "dsv", &[m.value()]), 3, 3);
            close_all(&got.a, &want.a, 1e-8, "∂(Σ wσ)/∂M");
            let dr = mat(&call(&prog, "drot", &[m.value()]), 3, 3);
            assert!(dr.a.iter().all(|x| x.is_finite()), "polar rotation gradient of {m:?}: {dr:?}");
            svd_checked += 1;
        }
    }
    assert!(eig_checked > 300 && svd_checked > 200, "{eig_checked} and {svd_checked} matrices checked");
}

/// At a diagonal input with distinct eigenvalues every Jacobi pivot is 0 from the start; the
/// rotations by the identity still carry the eigenvectors' derivatives, so the derivative of
/// V·diag(λ)·Vᵀ (which is S) along a symmetric W is W: ∂(Σ Wᵢⱼ (VΛVᵀ)ᵢⱼ)/∂S = sym(W).
#[test]
fn eig_sym_derivatives_at_a_diagonal_input_include_the_eigenvectors() {
    let prog = compile(
        "
fn rebuilt(m: mat3) -> f64 {
    let (l, v) = eig_sym(m);
    sum(hadamard(mat3(0.3, -1.2, 0.7, 0.5, 0.9, -0.4, 1.1, 0.2, -0.8), v * diag(l) * transpose(v)))
}
fn d(m: mat3) -> mat3 { grad(rebuilt)(m) }
",
    );
    let w = M::new(3, 3, vec![0.3, -1.2, 0.7, 0.5, 0.9, -0.4, 1.1, 0.2, -0.8]);
    for diag in [[3.0, 2.0, 1.0], [1.0, -2.0, 5.0]] {
        let got = mat(&call(&prog, "d", &[M::diag(&diag).value()]), 3, 3);
        close_all(&got.a, &w.sym().a, 1e-12, "∂/∂S of V Λ Vᵀ at a diagonal S");
    }
    // Block diagonal: a 2×2 block with distinct eigenvalues beside a third one.
    let block = M::new(3, 3, vec![2.0, 0.5, 0.0, 0.5, 1.0, 0.0, 0.0, 0.0, -1.0]);
    let got = mat(&call(&prog, "d", &[block.value()]), 3, 3);
    close_all(&got.a, &w.sym().a, 1e-12, "∂/∂S of V Λ Vᵀ at a block-diagonal S");
}

/// First and second derivatives of eigenvectors through `eig_sym(mat3)` (and `polar`)
/// where structure keeps a pivot exactly 0 or two diagonal entries equal: block-diagonal
/// and diagonal inputs, [[2, 1, 1], [1, 2, 1], [1, 1, 3]] (its first rotation is by 45°
/// and zeroes a[0, 2] for good), against central differences of the values and of the
/// gradients. (Equal diagonal entries lost the rotation angle's derivative, and pivots kept
/// exactly 0 were skipped while their derivatives were not.)
#[test]
fn eigenvector_derivatives_at_structured_3x3_inputs() {
    let prog = compile(
        "
fn f(m: mat3) -> f64 { let (l, v) = eig_sym(m); v[0, 0] * v[1, 0] + v[2, 2] * v[1, 2] + 0.3 * l.y * v[0, 1] * v[0, 1] }
fn gf(m: mat3) -> mat3 { grad(f)(m) }
fn rot(m: mat3) -> f64 { let (r, p) = polar(m); r[0, 1] }
/// (relative error of the Hessian along e, error of the gradient along e, the same for polar)
fn check(m: mat3, e: mat3) -> vec3 {
    let h = 1e-5;
    let fd = (gf(m + h * e) - gf(m - h * e)) / (2.0 * h);
    let ad = jvp(gf)(m, e).1;
    let g = (f(m + h * e) - f(m - h * e)) / (2.0 * h);
    let r = (rot(m + h * e) - rot(m - h * e)) / (2.0 * h);
    vec3(frob2(fd - ad) / frob2(fd), abs(g - jvp(f)(m, e).1), abs(r - jvp(rot)(m, e).1))
}
fn e() -> mat3 { mat3(0.1, 0.5, -0.2, 0.5, 0.2, 0.3, -0.2, 0.3, 0.1) }
fn diagonal() -> vec3 { check(mat3(3.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 2.0), e()) }
fn block() -> vec3 { check(mat3(1.0, 0.5, 0.0, 0.5, 2.0, 0.0, 0.0, 0.0, 3.0), e()) }
fn equal_diagonal() -> vec3 { check(mat3(2.0, 1.0, 1.0, 1.0, 2.0, 1.0, 1.0, 1.0, 3.0), e()) }
fn generic() -> vec3 { check(mat3(1.3, 0.2, -0.4, 0.2, -0.7, 0.9, -0.4, 0.9, 2.1), e()) }
fn polar_equal_norms() -> vec3 { check(mat3(1.0, 2.0, 0.0, 2.0, 1.0, 0.5, 0.0, 0.0, 3.0), e()) }
",
    );
    for case in ["diagonal", "block", "equal_diagonal", "generic", "polar_equal_norms"] {
        let v = tensor(&call(&prog, case, &[]), &[3]);
        assert!(v[0] < 1e-12, "{case}: Hessian along e off by {} (relative)", v[0]);
        assert!(v[1] < 1e-8, "{case}: gradient along e off by {}", v[1]);
        assert!(v[2] < 1e-8, "{case}: polar's gradient along e off by {}", v[2]);
    }
}

/// `eig_sym(mat2)` (and `svd(mat2)` through it) is continuous at every diagonal input,
/// m[0, 0] < m[1, 1] included, so derivatives there agree with central differences from
/// both sides; the unavoidable sign jump of the eigenvectors lies on b < 0 with equal
/// diagonal entries.
#[test]
fn eig_sym_of_mat2_is_continuous_at_diagonal_inputs() {
    let prog = compile(
        "
fn f(x: mat2) -> f64 { let v = eig_sym(x).1; v[0, 0] + 2.0 * v[1, 0] }
fn jump(a: f64, d: f64) -> f64 { frob2(eig_sym(mat2(a, 1e-9, 1e-9, d)).1 - eig_sym(mat2(a, -1e-9, -1e-9, d)).1) }
fn fd(a: f64, d: f64) -> vec2 {
    let m = mat2(a, 0.0, 0.0, d);
    let t = mat2(0.0, 1.0, 1.0, 0.0);
    let h = 1e-6;
    vec2((f(m + h * t) - f(m - h * t)) / (2.0 * h), jvp(f)(m, t).1)
}
fn lower_first() -> f64 { jump(-1.0, 2.0) }
fn upper_first() -> f64 { jump(2.0, -1.0) }
fn fd_lower_first() -> vec2 { fd(-1.0, 2.0) }
fn fd_upper_first() -> vec2 { fd(2.0, -1.0) }
",
    );
    for case in ["lower_first", "upper_first"] {
        let j = num(&call(&prog, case, &[]));
        assert!(j < 1e-16, "{case}: the eigenvectors jump by {j} across b = 0");
        let v = tensor(&call(&prog, &format!("fd_{case}"), &[]), &[2]);
        assert!((v[0] - v[1]).abs() < 1e-8, "{case}: central difference {} vs jvp {}", v[0], v[1]);
    }
}
