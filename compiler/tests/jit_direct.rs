//! Heap-tensor ops on `f64` lowered as typed routine calls
//! (`back::cranelift::direct`, `mad_runtime::jit::direct`): matrix products
//! (matrix × matrix, matrix × vector), transposes, sums, fills and
//! elementwise `+ - * /` agree bit for bit with the interpreter on random
//! arguments (shapes that do not match included, so the errors are the general
//! path's), loops whose trips allocate tensors of changing sizes reuse freed
//! arena entries without changing any result, and a failing op still reports
//! its place in the source.

use crate::common;

use common::diff::diff_module;
use mad::ir::parse::parse_module;
use mad::{Engine, Error, Program, RtError, Tensor, Value};

const OPS: &str = "
func @mm(%x: tensor<f64; ?, ?>, %y: tensor<f64; ?, ?>) -> tensor<f64; ?, ?> {
  %z = tensor.matmul %x, %y : tensor<f64; ?, ?>
  return %z
}
func @mv(%x: tensor<f64; ?, ?>, %v: tensor<f64; ?>) -> tensor<f64; ?> {
  %z = tensor.matmul %x, %v : tensor<f64; ?>
  return %z
}
func @tr(%x: tensor<f64; ?, ?>) -> (tensor<f64; ?, ?>, f64) {
  %t = tensor.transpose %x : tensor<f64; ?, ?>
  %s = tensor.sum %t : f64
  %out = tuple %t, %s : (tensor<f64; ?, ?>, f64)
  return %out
}
func @sums(%v: tensor<f64; ?>, %m: tensor<f64; ?, ?, ?>) -> f64 {
  %a = tensor.sum %v : f64
  %b = tensor.sum %m : f64
  %c = add %a, %b : f64
  return %c
}
func @fills(%x: f64, %r: i64, %c: i64) -> (tensor<f64; ?, ?>, tensor<f64; ?>) {
  %m = tensor.full %x, %r, %c : tensor<f64; ?, ?>
  %v = tensor.full %x, %c : tensor<f64; ?>
  %out = tuple %m, %v : (tensor<f64; ?, ?>, tensor<f64; ?>)
  return %out
}
func @elementwise(%x: tensor<f64; ?, ?>, %y: tensor<f64; ?, ?>) -> tensor<f64; ?, ?> {
  %a = add %x, %y : tensor<f64; ?, ?>
  %b = sub %a, %y : tensor<f64; ?, ?>
  %c = mul %b, %x : tensor<f64; ?, ?>
  %d = div %c, %y : tensor<f64; ?, ?>
  return %d
}
func @fixed(%x: tensor<f64; 17, 17>, %y: tensor<f64; 17, 17>) -> f64 {
  %z = tensor.matmul %x, %y : tensor<f64; 17, 17>
  %t = tensor.transpose %z : tensor<f64; 17, 17>
  %w = add %t, %x : tensor<f64; 17, 17>
  %s = tensor.sum %w : f64
  return %s
}
func @grad_b2(%x: tensor<f64; ?, ?>, %y: tensor<f64; ?, ?>) -> (tensor<f64; ?, ?>, tensor<f64; ?, ?>) {
  %one = const 1.0 : f64
  %z = tensor.matmul %x, %y : tensor<f64; ?, ?>
  %r = tensor.dim[0] %z : i64
  %c = tensor.dim[1] %z : i64
  %g = tensor.full %one, %r, %c : tensor<f64; ?, ?>
  %xt = tensor.transpose %x : tensor<f64; ?, ?>
  %dy = tensor.matmul %xt, %g : tensor<f64; ?, ?>
  %yt = tensor.transpose %y : tensor<f64; ?, ?>
  %dx = tensor.matmul %g, %yt : tensor<f64; ?, ?>
  %out = tuple %dx, %dy : (tensor<f64; ?, ?>, tensor<f64; ?, ?>)
  return %out
}
func @sizes(%x: f64, %n: i64) -> (f64, tensor<f64; ?, ?>) {
  %lo = const 0 : i64
  %z = const 0.0 : f64
  %three = const 3 : i64
  %four = const 4 : i64
  %one = const 1 : i64
  %e = tensor.full %x, %one, %one : tensor<f64; ?, ?>
  %s, %last = scf.for %lo, %n, %z, %e : (f64, tensor<f64; ?, ?>) {
  ^(%i: i64, %t: f64, %prev: tensor<f64; ?, ?>):
    %r0 = rem %i, %three : i64
    %r = add %r0, %one : i64
    %c0 = rem %i, %four : i64
    %c = add %c0, %three : i64
    %a = tensor.full %x, %r, %c : tensor<f64; ?, ?>
    %at = tensor.transpose %a : tensor<f64; ?, ?>
    %p = tensor.matmul %at, %a : tensor<f64; ?, ?>
    %q = add %p, %p : tensor<f64; ?, ?>
    %u = tensor.sum %q : f64
    %t2 = add %t, %u : f64
    yield %t2, %a
  }
  %out = tuple %s, %last : (f64, tensor<f64; ?, ?>)
  return %out
}
";

/// The CLIF signatures of the typed routines, and of `mad_rt_apply`.
const TYPED_SIGS: [&str; 4] = [
    "(i64, i32, i64, i64) -> i64 system_v",
    "(i64, i32, i64) -> i64 system_v",
    "(i64, i32, i64) -> f64 system_v",
    "(i64, i32, f64, i64, i64, i64) -> i64 system_v",
];
const APPLY_SIG: &str = "(i64, i32, i64, i64) system_v";

#[test]
fn dynamic_f64_ops_call_the_typed_routines() {
    let one = |name: &str| {
        let start = OPS.find(&format!("func @{name}(")).expect("function");
        let end = OPS[start..].find("\n}\n").expect("end") + start + 3;
        let m = parse_module(&OPS[start..end]).expect("parses");
        mad::back::cranelift::clif_text(&m).expect("compiles")
    };
    let grad = one("grad_b2") + &one("tr") + &one("elementwise");
    for sig in TYPED_SIGS {
        assert!(grad.contains(sig), "{sig} in {grad}");
    }
    assert!(!grad.contains(APPLY_SIG), "no general op site: {grad}");
    // Tensors of fixed extents too large to scalarize keep the general path (it checks
    // result shapes).
    assert!(one("fixed").contains(APPLY_SIG));
}

#[test]
fn direct_ops_agree_with_the_interpreter() {
    let m = parse_module(OPS).expect("parses");
    diff_module(&m, 400, OPS, true);
}

const SRC: &str = "
fn b2(x: matrix, y: matrix) -> f64 { sum(x * y) }
fn g2(x: matrix, y: matrix) -> (matrix, matrix) { grad(b2)(x, y) }
fn loop2(x: matrix, y: matrix, n: i64) -> f64 {
    let mut s = 0.0;
    for i in 0..n {
        let (gx, gy) = grad(b2)(x, y);
        s += gx[0, 0] + gy[0, 0];
    }
    s
}
fn prod(x: matrix, y: matrix) -> matrix { x * y }
fn fill(r: i64, c: i64) -> matrix { ones(r, c) + zeros(r, c) }
";

fn mat(r: usize, c: usize, f: impl Fn(usize) -> f64) -> Value {
    Value::Tensor(Tensor::from_f64(vec![r, c], (0..r * c).map(f).collect()).unwrap())
}

fn both(p: &Program, name: &str, args: &[Value]) -> (Result<Value, Error>, Result<Value, Error>) {
    let mut sink = Vec::new();
    let jit = p.call_with(Engine::Jit, name, args, &mut sink);
    let int = p.call_with(Engine::Interpreter, name, args, &mut sink);
    (jit, int)
}

/// The gradient of `sum(X Y)` by hand: `dX[i, k] = Σ_j Y[k, j]`,
/// `dY[k, j] = Σ_i X[i, k]`, each sum left to right from 0 (the order of
/// the run time's matrix product with a matrix of ones).
fn hand_grad(x: &[f64], y: &[f64], m: usize, k: usize, n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut dx = vec![0.0; m * k];
    for i in 0..m {
        for p in 0..k {
            dx[i * k + p] = (0..n).fold(0.0, |s, j| s + 1.0 * y[p * n + j]);
        }
    }
    let mut dy = vec![0.0; k * n];
    for p in 0..k {
        for j in 0..n {
            dy[p * n + j] = (0..m).fold(0.0, |s, i| s + x[i * k + p] * 1.0);
        }
    }
    (dx, dy)
}

#[test]
fn b2_gradient_matches_a_hand_written_one_bit_for_bit() {
    let p = Program::compile_str("direct.mad", SRC).expect("compiles");
    for (m, k, n) in [(1, 1, 1), (2, 2, 2), (3, 5, 2), (8, 8, 8), (17, 4, 9)] {
        let xs: Vec<f64> = (0..m * k).map(|i| (0.3 * i as f64).sin() * 1e3).collect();
        let ys: Vec<f64> = (0..k * n).map(|i| (0.7 * i as f64 + 0.2).cos()).collect();
        let args = [mat(m, k, |i| xs[i]), mat(k, n, |i| ys[i])];
        let (jit, int) = both(&p, "g2", &args);
        let (jit, int) = (jit.expect("jit runs"), int.expect("interpreter runs"));
        let (dx, dy) = hand_grad(&xs, &ys, m, k, n);
        let want = Value::Tuple(vec![mat(m, k, |i| dx[i]), mat(k, n, |i| dy[i])]);
        assert!(
            common::diff::same(&jit, &want),
            "{m}×{k}×{n}: {jit:?} vs {want:?}"
        );
        assert!(common::diff::same(&int, &want), "{m}×{k}×{n}: interpreter");
        // Many trips through the released loop (reused arena entries).
        let mut la = args.to_vec();
        la.push(Value::I64(50));
        let (jit, int) = both(&p, "loop2", &la);
        let want = 50.0 * (dx[0] + dy[0]);
        let got = jit.expect("jit loop runs");
        assert!(common::diff::same(
            &got,
            &int.expect("interpreter loop runs")
        ));
        assert!(matches!(got, Value::F64(s) if (s - want).abs() <= 1e-9 * want.abs().max(1.0)));
    }
}

#[test]
fn errors_keep_their_source_location() {
    let p = Program::compile_str("direct.mad", SRC).expect("compiles");
    let cases: Vec<(&str, Vec<Value>)> = vec![
        (
            "prod",
            vec![mat(2, 3, |i| i as f64), mat(2, 3, |i| i as f64)],
        ),
        ("g2", vec![mat(2, 3, |i| i as f64), mat(4, 2, |i| i as f64)]),
        ("fill", vec![Value::I64(-1), Value::I64(2)]),
        ("fill", vec![Value::I64(2), Value::I64(i64::MAX)]),
    ];
    for (name, args) in cases {
        let (jit, int) = both(&p, name, &args);
        match (jit, int) {
            (
                Err(Error::Runtime {
                    error: ej,
                    at: Some(aj),
                }),
                Err(Error::Runtime {
                    error: ei,
                    at: Some(ai),
                }),
            ) => {
                assert_eq!(ej, ei, "{name}");
                assert_eq!((aj.line, aj.column), (ai.line, ai.column), "{name}");
                if name != "fill" {
                    assert!(matches!(ej, RtError::ShapeMismatch(_)), "{name}: {ej:?}");
                }
            }
            other => panic!("{name}: expected run-time errors with locations, got {other:?}"),
        }
    }
}
