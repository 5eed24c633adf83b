//! What the code generator does beyond plain lowering, checked against the
//! interpreter (which runs the IR as written): derivative functions inlined
//! into their callers, loop invariants hoisted and kept in front of loops,
//! heap-tensor headers read once per loop, no error-flag test in simple `for`
//! loops, index errors recorded inline, integer division by constants, and
//! `sin`/`cos` pairs as one `sincos` call.

use crate::common;

use common::diff::diff_text;
use mad::Engine;
use mad::Program;
use mad::ir::validate::validate_module;
use mad::{Tensor, TensorData, Value};

#[test]
fn integer_division_by_constants() {
    diff_text(
        "
func @q(%a: i64) -> (i64, i64, i64, i64, i64, i64, i64, i64) {
  %c7 = const 7 : i64
  %m7 = const -7 : i64
  %c8 = const 8 : i64
  %m8 = const -8 : i64
  %q1 = div %a, %c7 : i64
  %r1 = rem %a, %c7 : i64
  %q2 = div %a, %m7 : i64
  %r2 = rem %a, %m7 : i64
  %q3 = div %a, %c8 : i64
  %r3 = rem %a, %c8 : i64
  %q4 = div %a, %m8 : i64
  %r4 = rem %a, %m8 : i64
  %t = tuple %q1, %r1, %q2, %r2, %q3, %r3, %q4, %r4 : (i64, i64, i64, i64, i64, i64, i64, i64)
  return %t
}
func @z(%a: i64, %b: i64) -> (i64, i64) {
  %zero = const 0 : i64
  %m1 = const -1 : i64
  %q = div %a, %m1 : i64
  %r = rem %b, %zero : i64
  %t = tuple %q, %r : (i64, i64)
  return %t
}
",
        64,
    );
}

#[test]
fn sine_and_cosine_of_one_value() {
    // One `sincos` call for each pair (in either order, also inside a loop).
    diff_text(
        "
func @sc(%x: f64, %y: f64, %n: i64) -> (f64, f64, f64) {
  %c = cos %x : f64
  %s = sin %x : f64
  %t = sin %y : f64
  %p = mul %c, %s : f64
  %z = const 0 : i64
  %cap = const 20 : i64
  %m = min %n, %cap : i64
  %r = scf.for %z, %m, %x : f64 {
  ^(%i: i64, %a: f64):
    %sa = sin %a : f64
    %ca = cos %a : f64
    %u = add %sa, %ca : f64
    yield %u
  }
  %o = tuple %p, %t, %r : (f64, f64, f64)
  return %o
}
",
        128,
    );
}

#[test]
fn loops_with_invariants_and_out_of_bounds_reads() {
    // The invariants (a division, a square root, a select, the extent of %x)
    // leave the loops; the read `%x[i + k]` may run past the end, which is an
    // error in the first failing trip on both engines.
    diff_text(
        "
func @f(%x: tensor<f64; ?>, %y: tensor<f64; ?>, %s: f64, %k: i64, %n: i64) -> f64 {
  %z = const 0 : i64
  %a = const 0.0 : f64
  %cap = const 40 : i64
  %m = min %n, %cap : i64
  %r = scf.for %z, %m, %a : f64 {
  ^(%i: i64, %acc: f64):
    %one = const 1.0 : f64
    %inv = div %one, %s : f64
    %root = sqrt %s : f64
    %pos = gt %s, %a : bool
    %w = select %pos, %inv, %root : f64
    %len = tensor.dim[0] %x : i64
    %j = add %i, %k : i64
    %xi = tensor.index %x, %j : f64
    %inner = scf.for %z, %len, %acc : f64 {
    ^(%p: i64, %b: f64):
      %yp = tensor.index %y, %p : f64
      %t = mul %yp, %w : f64
      %u = add %b, %t : f64
      yield %u
    }
    %v = mul %xi, %w : f64
    %o = add %inner, %v : f64
    yield %o
  }
  return %r
}
",
        96,
    );
}

fn vector(xs: Vec<f64>) -> Value {
    Value::Tensor(Tensor {
        shape: vec![xs.len()],
        data: TensorData::F64(xs),
    })
}

/// Both engines give the same bits (the interpreter runs the IR as written,
/// the JIT the module prepared for code generation).
fn same_on_both(p: &Program, name: &str, args: &[Value]) -> Value {
    let mut out = Vec::new();
    let i = p
        .call_with(Engine::Interpreter, name, args, &mut out)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let j = p
        .call_with(Engine::Jit, name, args, &mut out)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(format!("{i:?}"), format!("{j:?}"), "{name}");
    j
}

#[test]
fn derivatives_called_in_loops() {
    let p = Program::compile_str(
        "loops.mad",
        "
fn b1(x: f64, y: f64) -> f64 { x * log(y) + log(x * y) * y }
fn loop1(x: f64, y: f64, n: i64) -> f64 {
    let mut s = 0.0;
    for i in 0..n {
        let (gx, gy) = grad(b1)(x + 1e-3 * (i as f64), y);
        s += gx + gy;
    }
    s
}
fn ll(p: vec3, x: [f64], y: [f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..len(x) {
        let r = (y[i] - (p.x + p.y * x[i])) / p.z;
        s += -0.5 * r * r - log(p.z);
    }
    s
}
fn loop4(sigma: f64, x: [f64], y: [f64], n: i64) -> f64 {
    let mut s = 0.0;
    for i in 0..n {
        let g = grad(ll, 0)(vec3(0.5 + 1e-3 * (i as f64), 2.0, sigma), x, y);
        s += g.x + g.y + g.z;
    }
    s
}
fn b3(x: [f64]) -> f64 {
    let mut s = 0.0;
    let mut i = 0;
    while s < 50.0 {
        s += exp(x[i % 10] * 0.01) * (1.0 + 0.1 * sin(s));
        i += 1;
    }
    s
}
fn loop3(x: [f64], n: i64) -> f64 {
    let mut s = 0.0;
    for k in 0..n {
        let g = grad(b3)(x);
        s += g[0] + g[9];
    }
    s
}
fn reads_past(x: [f64], n: i64) -> f64 {
    let mut s = 0.0;
    for i in 0..n {
        s += grad(ll, 0)(vec3(1.0, 1.0, 1.0), x, x).x + x[i];
    }
    s
}
",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let prepared = mad::passes::for_codegen(p.module());
    assert!(validate_module(&prepared).is_ok());
    // The operator calls are gone from the loops (inlined).
    fn calls_operator(m: &mad::ir::Module, f: &mad::ir::Function, r: &mad::ir::Region) -> bool {
        r.ops.iter().any(|&id| {
            let op = &f.ops[id];
            matches!(op.kind, mad::ir::OpKind::Call(g) if m.functions[g].name.contains('('))
                || op.regions.iter().any(|nr| calls_operator(m, f, nr))
        })
    }
    let calls_grad = |name: &str| {
        let f = prepared
            .functions
            .iter()
            .find(|(_, f)| f.name == name)
            .expect("function")
            .1;
        calls_operator(&prepared, f, &f.body)
    };
    for name in ["loop1", "loop4", "loop3"] {
        assert!(
            !calls_grad(name),
            "{name} still calls a derivative function"
        );
    }

    let v = same_on_both(
        &p,
        "loop1",
        &[Value::F64(2.0), Value::F64(3.0), Value::I64(50)],
    );
    assert!(matches!(v, Value::F64(s) if s.is_finite()));
    let xs: Vec<f64> = (0..12).map(|k| k as f64 / 12.0).collect();
    let ys: Vec<f64> = xs.iter().map(|x| 1.0 + 2.0 * x).collect();
    same_on_both(
        &p,
        "loop4",
        &[
            Value::F64(0.3),
            vector(xs.clone()),
            vector(ys),
            Value::I64(20),
        ],
    );
    same_on_both(
        &p,
        "loop3",
        &[vector(xs.iter().map(|x| x.sin()).collect()), Value::I64(3)],
    );
    // An index past the end inside the loop is the same error on both engines.
    let mut out = Vec::new();
    let args = [vector(xs), Value::I64(13)];
    let i = p
        .call_with(Engine::Interpreter, "reads_past", &args, &mut out)
        .expect_err("out of bounds");
    let j = p
        .call_with(Engine::Jit, "reads_past", &args, &mut out)
        .expect_err("out of bounds");
    assert_eq!(i.to_string(), j.to_string());
}
