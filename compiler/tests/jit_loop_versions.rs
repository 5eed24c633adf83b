//! Loops whose element reads are indexed by the induction variable (`x[j]`,
//! `x[j + k]`, `x[k - j]`, `m[r, j]`) are compiled twice, with the
//! bounds checks proved once in front of the loop or checked per trip; both
//! must behave as the interpreter does: the same values, and an out-of-bounds
//! read reported with the same index and length at the same trip (also when an
//! earlier trip fails otherwise, or an offset wraps around `i64`).

use crate::common;

use common::diff::{compare, diff_text};
use mad::back::cranelift;
use mad::ir::parse::parse_module;
use mad::{Engine, Program, RtError, Tensor, TensorData, Value};

/// Bounds clamped to a few trips; `%k` unclamped (random `i64`s include the extremes).
const AFFINE: &str = "
func @fwd(%x: tensor<f64; ?>, %y: tensor<f64; ?>, %lo: i64, %hi: i64, %k: i64) -> f64 {
  %cap = const 12 : i64
  %ncap = const -4 : i64
  %l = max %lo, %ncap : i64
  %h = min %hi, %cap : i64
  %a = const 0.0 : f64
  %r = scf.for %l, %h, %a : f64 {
  ^(%i: i64, %acc: f64):
    %xi = tensor.index %x, %i : f64
    %j = add %i, %k : i64
    %yj = tensor.index %y, %j : f64
    %t = mul %xi, %yj : f64
    %u = add %acc, %t : f64
    yield %u
  }
  return %r
}
func @rev(%x: tensor<f64; ?>, %lo: i64, %hi: i64, %k: i64) -> f64 {
  %cap = const 12 : i64
  %ncap = const -4 : i64
  %l = max %lo, %ncap : i64
  %h = min %hi, %cap : i64
  %a = const 0.0 : f64
  %z = const 0 : i64
  %r = scf.for %l, %h, %a : f64 {
  ^(%i: i64, %acc: f64):
    %m = sub %k, %i : i64
    %j = add %z, %m : i64
    %xj = tensor.index %x, %j : f64
    %xk = tensor.index %x, %k : f64
    %t = mul %xj, %xk : f64
    %u = add %acc, %t : f64
    yield %u
  }
  return %r
}
func @mixed(%x: tensor<f64; ?>, %n: i64, %d: i64) -> (f64, i64) {
  %cap = const 12 : i64
  %h = min %n, %cap : i64
  %z = const 0 : i64
  %a = const 0.0 : f64
  %c = const 7 : i64
  %r, %s = scf.for %z, %h, %a, %z : (f64, i64) {
  ^(%i: i64, %acc: f64, %q: i64):
    %e = sub %i, %d : i64
    %v = div %c, %e : i64
    %w = add %q, %v : i64
    %two = const 2 : i64
    %i2 = mul %i, %two : i64
    %xi = tensor.index %x, %i : f64
    %x2 = tensor.index %x, %i2 : f64
    %t = add %xi, %x2 : f64
    %u = add %acc, %t : f64
    yield %u, %w
  }
  %o = tuple %r, %s : (f64, i64)
  return %o
}
func @nest(%x: tensor<f64; ?>, %k: i64, %n: i64) -> f64 {
  %cap = const 6 : i64
  %h = min %n, %cap : i64
  %z = const 0 : i64
  %a = const 0.0 : f64
  %r = scf.for %z, %h, %a : f64 {
  ^(%p: i64, %acc: f64):
    %s = scf.for %z, %h, %acc : f64 {
    ^(%i: i64, %b: f64):
      %xi = tensor.index %x, %i : f64
      %xk = tensor.index %x, %k : f64
      %t = mul %xi, %xk : f64
      %u = add %b, %t : f64
      yield %u
    }
    yield %s
  }
  return %r
}
func @grid(%m: tensor<f64; ?, ?>, %r: i64, %n: i64) -> f64 {
  %cap = const 12 : i64
  %h = min %n, %cap : i64
  %z = const 0 : i64
  %a = const 0.0 : f64
  %s = scf.for %z, %h, %a : f64 {
  ^(%i: i64, %acc: f64):
    %e = tensor.index %m, %r, %i : f64
    %f = tensor.index %m, %i, %r : f64
    %t = sub %e, %f : f64
    %u = add %acc, %t : f64
    yield %u
  }
  return %s
}
";

#[test]
fn versioned_reads_agree_with_the_interpreter_on_random_arguments() {
    diff_text(AFFINE, 400);
}

fn vector(xs: &[f64]) -> Value {
    Value::Tensor(Tensor { shape: vec![xs.len()], data: TensorData::F64(xs.to_vec()) })
}

fn int(x: i64) -> Value {
    Value::I64(x)
}

#[test]
fn reads_at_the_edges_of_the_extent() {
    let m = parse_module(AFFINE).expect("parses");
    let jit = cranelift::compile(&m, &[]).expect("compiles");
    let fwd = m.find("fwd").expect("fwd");
    let rev = m.find("rev").expect("rev");
    let x = vector(&[1.0, 2.0, 3.0, 4.0, 5.0]);
    let y3 = vector(&[0.5, -1.0, 2.0]);
    let cases: Vec<(mad::ir::FuncRef, Vec<Value>)> = vec![
        // In bounds exactly to the end, one past it, starting below zero, empty.
        (fwd, vec![x.clone(), x.clone(), int(0), int(5), int(0)]),
        (fwd, vec![x.clone(), x.clone(), int(0), int(6), int(0)]),
        (fwd, vec![x.clone(), x.clone(), int(-1), int(3), int(0)]),
        (fwd, vec![x.clone(), x.clone(), int(4), int(2), int(0)]),
        // The second tensor is shorter: fails at trip 3 with its length.
        (fwd, vec![x.clone(), y3.clone(), int(0), int(5), int(0)]),
        // Offsets that overflow `i64` on the way.
        (fwd, vec![x.clone(), x.clone(), int(0), int(3), int(i64::MAX)]),
        (fwd, vec![x.clone(), x.clone(), int(0), int(3), int(i64::MIN)]),
        (fwd, vec![x.clone(), x.clone(), int(1), int(4), int(-1)]),
        // Reverse reads `x[k - i]`.
        (rev, vec![x.clone(), int(0), int(5), int(4)]),
        (rev, vec![x.clone(), int(0), int(6), int(4)]),
        (rev, vec![x.clone(), int(-1), int(5), int(4)]),
        (rev, vec![x.clone(), int(0), int(2), int(i64::MIN)]),
    ];
    for (f, args) in cases {
        compare(&m, &jit, f, &args).unwrap_or_else(|e| panic!("{e}"));
    }
    // The reference errors, independently of the interpreter.
    let mut out = Vec::new();
    assert_eq!(
        jit.call(fwd, &[x.clone(), x.clone(), int(0), int(6), int(0)], &mut out),
        Err(RtError::IndexOutOfBounds { index: 5, len: 5 })
    );
    assert_eq!(
        jit.call(fwd, &[x.clone(), y3, int(0), int(5), int(0)], &mut out),
        Err(RtError::IndexOutOfBounds { index: 3, len: 3 })
    );
    assert_eq!(
        jit.call(rev, &[x.clone(), int(0), int(6), int(4)], &mut out),
        Err(RtError::IndexOutOfBounds { index: -1, len: 5 })
    );
    assert_eq!(jit.call(fwd, &[x.clone(), x.clone(), int(0), int(5), int(0)], &mut out), Ok(Value::F64(55.0)));
    assert_eq!(jit.call(rev, &[x.clone(), int(0), int(5), int(4)], &mut out), Ok(Value::F64(75.0)));
}

#[test]
fn an_earlier_error_of_another_kind_is_the_one_reported() {
    let m = parse_module(AFFINE).expect("parses");
    let jit = cranelift::compile(&m, &[]).expect("compiles");
    let mixed = m.find("mixed").expect("mixed");
    let x = vector(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let mut out = Vec::new();
    // Division by zero at trip 2, before `x[2 i]` runs past the end at trip 3.
    assert_eq!(jit.call(mixed, &[x.clone(), int(6), int(2)], &mut out), Err(RtError::DivByZero));
    // No division by zero: the read past the end at trip 3.
    assert_eq!(
        jit.call(mixed, &[x.clone(), int(6), int(-1)], &mut out),
        Err(RtError::IndexOutOfBounds { index: 6, len: 6 })
    );
    for d in -2..8 {
        for n in -1..8 {
            compare(&m, &jit, mixed, &[x.clone(), int(n), int(d)]).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

/// B4's log-likelihood gradient: its reverse sweep reads `x[n - 1 - i]`,
/// `y[n - 1 - i]`; a shorter `y` is reported as the interpreter does.
#[test]
fn gradient_with_data_of_mismatched_lengths() {
    let p = Program::compile_str(
        "ll.mad",
        "
fn ll(p: vec3, x: [f64], y: [f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..len(x) {
        let r = (y[i] - (p.x + p.y * x[i])) / p.z;
        s += -0.5 * r * r - log(p.z);
    }
    s
}
fn g(a: f64, x: [f64], y: [f64]) -> f64 {
    let g = grad(ll, 0)(vec3(a, 2.0, 0.5), x, y);
    g.x + g.y + g.z
}
",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let xs: Vec<f64> = (0..7).map(|k| k as f64 / 7.0).collect();
    let ys: Vec<f64> = xs.iter().map(|x| 1.0 + 2.0 * x).collect();
    let mut out = Vec::new();
    for ny in [7usize, 6, 0] {
        let args = [Value::F64(0.9), vector(&xs), vector(&ys[..ny])];
        let i = p.call_with(Engine::Interpreter, "g", &args, &mut out);
        let j = p.call_with(Engine::Jit, "g", &args, &mut out);
        assert_eq!(format!("{i:?}"), format!("{j:?}"), "len(y) = {ny}");
        if ny == 7 {
            // Reference: the partials summed by hand.
            let (a, b, s) = (0.9, 2.0, 0.5);
            let want: f64 = xs
                .iter()
                .zip(&ys)
                .map(|(x, y)| {
                    let r = (y - (a + b * x)) / s;
                    r / s + r * x / s + (r * r / s - 1.0 / s)
                })
                .sum();
            let Ok(Value::F64(got)) = j else { panic!("{j:?}") };
            assert!((got - want).abs() <= 1e-12 * want.abs().max(1.0), "{got} vs {want}");
        } else {
            assert!(
                matches!(j, Err(mad::Error::Runtime { error: RtError::IndexOutOfBounds { len, .. }, .. }) if len == ny as i64),
                "{j:?}"
            );
        }
    }
}
