//! `std::linalg`: triangular solves and products of dynamic matrices, on both engines (bit
//! for bit), against products that undo them, against finite differences, and their shape
//! errors.

use mad::{Engine, Program, Value};
use mad_runtime::Tensor;

use crate::program_common::{call, flat};

const SOURCE: &str = "
fn lower(l: matrix, b: vector) -> vector { solve_lower(l, b) }
fn upper(u: matrix, b: vector) -> vector { solve_upper(u, b) }
fn lower_m(l: matrix, b: matrix) -> matrix { solve_lower(l, b) }
fn upper_m(u: matrix, b: matrix) -> matrix { solve_upper(u, b) }
fn lmul(l: matrix, x: vector) -> vector { mul_lower(l, x) }
fn umul(u: matrix, x: vector) -> vector { mul_upper(u, x) }
fn lmul_m(l: matrix, x: matrix) -> matrix { mul_lower(l, x) }
fn umul_m(u: matrix, x: matrix) -> matrix { mul_upper(u, x) }
fn loss(l: matrix, b: vector) -> f64 {
    let x = solve_lower(l, b);
    let y = solve_upper(l, x);
    let z = mul_upper(l, mul_lower(l, y));
    sum(hadamard(x, x)) + sum(y) + sum(hadamard(z, b))
}
fn g_loss(l: matrix, b: vector) -> (matrix, vector) { grad(loss, (0, 1))(l, b) }
";

fn matrix(r: usize, c: usize, xs: &[f64]) -> Value {
    Value::Tensor(Tensor::from_f64(vec![r, c], xs.to_vec()).expect("shape"))
}

fn vector(xs: &[f64]) -> Value {
    Value::Tensor(Tensor::vector(xs.to_vec()))
}

fn both(p: &Program, name: &str, args: &[Value]) -> Vec<f64> {
    let a = flat(&call(p, Engine::Jit, name, args));
    let b = flat(&call(p, Engine::Interpreter, name, args));
    assert_eq!(a.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), b.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), "{name}");
    a
}

/// A 4×4 matrix with a dominant diagonal and nonzeros on both sides of it.
const M: [f64; 16] = [3.0, 0.5, -1.0, 2.0, 0.4, 2.5, 0.7, -0.3, -0.6, 0.2, 4.0, 0.9, 0.1, -0.8, 0.3, 1.5];

#[test]
fn solves_are_undone_by_the_products() {
    let p = Program::compile_str("linalg.mad", SOURCE).expect("compiles");
    let l = matrix(4, 4, &M);
    let b = [1.0, -2.0, 0.5, 3.0];
    for (solve, mul) in [("lower", "lmul"), ("upper", "umul")] {
        let x = both(&p, solve, &[l.clone(), vector(&b)]);
        let back = both(&p, mul, &[l.clone(), vector(&x)]);
        for (u, v) in back.iter().zip(&b) {
            assert!((u - v).abs() <= 1e-14, "{solve}: {back:?} vs {b:?}");
        }
    }
    // The first entry of a lower solve and the last of an upper one are one division.
    assert_eq!(both(&p, "lower", &[l.clone(), vector(&b)])[0], 1.0 / 3.0);
    assert_eq!(both(&p, "upper", &[l.clone(), vector(&b)])[3], 3.0 / 1.5);
    // A matrix right-hand side is solved column by column.
    let bm = [1.0, 0.0, -2.0, 1.0, 0.5, 2.0, 3.0, -1.0];
    for (solve, one, mul) in [("lower_m", "lower", "lmul_m"), ("upper_m", "upper", "umul_m")] {
        let x = both(&p, solve, &[l.clone(), matrix(4, 2, &bm)]);
        for c in 0..2 {
            let col: Vec<f64> = (0..4).map(|i| bm[2 * i + c]).collect();
            let xc = both(&p, one, &[l.clone(), vector(&col)]);
            for i in 0..4 {
                assert_eq!(x[2 * i + c].to_bits(), xc[i].to_bits(), "{solve} column {c}");
            }
        }
        let back = both(&p, mul, &[l.clone(), matrix(4, 2, &x)]);
        for (u, v) in back.iter().zip(&bm) {
            assert!((u - v).abs() <= 1e-14, "{mul}: {back:?} vs {bm:?}");
        }
    }
}

#[test]
fn gradients_match_finite_differences() {
    let p = Program::compile_str("linalg.mad", SOURCE).expect("compiles");
    let b = [1.0, -2.0, 0.5, 3.0];
    let g = both(&p, "g_loss", &[matrix(4, 4, &M), vector(&b)]);
    let mut x: Vec<f64> = M.to_vec();
    x.extend(b);
    let f = |y: &[f64]| both(&p, "loss", &[matrix(4, 4, &y[..16]), vector(&y[16..])])[0];
    for k in 0..x.len() {
        let h = 1e-6;
        let (mut up, mut down) = (x.clone(), x.clone());
        up[k] += h;
        down[k] -= h;
        let fd = (f(&up) - f(&down)) / (2.0 * h);
        assert!((g[k] - fd).abs() <= 1e-6 * (1.0 + fd.abs()), "entry {k}: {} vs {fd}", g[k]);
    }
}

#[test]
fn shapes_that_do_not_fit_are_errors() {
    let p = Program::compile_str("linalg.mad", SOURCE).expect("compiles");
    for engine in [Engine::Jit, Engine::Interpreter] {
        let run = |name: &str, args: &[Value]| p.call_with(engine, name, args, &mut std::io::sink()).expect_err("must fail").to_string();
        let e = run("lower", &[matrix(3, 4, &[1.0; 12]), vector(&[1.0; 3])]);
        assert!(e.contains("`reshape` of 12 elements (shape [3, 4]) to shape [3, 3]"), "{e}");
        let e = run("upper", &[matrix(3, 3, &[1.0; 9]), vector(&[1.0; 4])]);
        assert!(e.contains("`reshape` of 4 elements (shape [4]) to shape [3]"), "{e}");
        let e = run("lmul_m", &[matrix(2, 2, &[1.0; 4]), matrix(3, 1, &[1.0; 3])]);
        assert!(e.contains("to shape [2, 1]"), "{e}");
    }
}
