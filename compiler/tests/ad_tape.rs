//! Reverse mode through the tape: data-dependent `while` loops (the B3 loop of
//! the benchmarks), `for` loops with `break`, `@ad(tape)` loops, nested loops, and
//! `hessian` (forward over the taped reverse), on both engines. References: central
//! finite differences of the primal, forward mode, and a hand-written reverse
//! sweep over a trace recorded in Rust.

use mad::{Engine, Program, Tensor, Value};

use crate::program_common;
use program_common::{call, close, flat};

const SRC: &str = r#"
fn b3(x: [f64]) -> f64 {
    let mut s = 0.0;
    let mut i = 0;
    while s < 1000.0 {
        s += exp(x[i % 100] * 0.01) * (1.0 + 0.1 * sin(s));
        i += 1;
    }
    s
}
fn b3_grad(x: [f64]) -> [f64] { grad(b3)(x) }
fn b3_jvp(x: [f64], dx: [f64]) -> (f64, f64) { jvp(b3)(x, dx) }

fn brk(x: f64, y: f64) -> f64 {
    let mut s = x;
    for i in 0..100 {
        if s > 50.0 { break; }
        s = s * y + sin(s) * x;
    }
    s
}
fn brk_grad(x: f64, y: f64) -> (f64, f64) { grad(brk)(x, y) }
fn brk_jvp(x: f64, y: f64, dx: f64, dy: f64) -> (f64, f64) { jvp(brk)(x, y, dx, dy) }

fn plain(x: vec3) -> f64 {
    let mut s = 1.0;
    for i in 0..3 { s = s * x[i] + sin(s) * x[(i + 1) % 3]; }
    s
}
@ad(tape)
fn taped(x: vec3) -> f64 {
    let mut s = 1.0;
    for i in 0..3 { s = s * x[i] + sin(s) * x[(i + 1) % 3]; }
    s
}
fn plain_grad(x: vec3) -> vec3 { grad(plain)(x) }
fn taped_grad(x: vec3) -> vec3 { grad(taped)(x) }

fn nested(x: vec3) -> f64 {
    let mut t = 0.0;
    for j in 0..3 {
        let mut s = x[j];
        while s < 5.0 { s = s * s + 0.5 * x[j] + 1.0; }
        t += s * x[(j + 1) % 3];
    }
    t
}
fn nested_grad(x: vec3) -> vec3 { grad(nested)(x) }

fn orbit2(x: f64, y: f64) -> f64 {
    let mut s = x;
    while s < 10.0 { s = s * y + x * 0.5; }
    s
}
fn orbit2_grad(x: f64, y: f64) -> (f64, f64) { grad(orbit2)(x, y) }
fn orbit2_hess(x: f64, y: f64) -> matrix { hessian(orbit2)(x, y) }
"#;

const ENGINES: [Engine; 2] = [Engine::Jit, Engine::Interpreter];

fn program() -> Program {
    Program::compile_str("ad_tape.mad", SRC).unwrap_or_else(|e| panic!("compiles: {e}"))
}

fn vector(xs: &[f64]) -> Value {
    Value::Tensor(Tensor::vector(xs.to_vec()))
}

/// Central differences of a scalar function of a flat vector.
fn fd(f: &dyn Fn(&[f64]) -> f64, x: &[f64], h: f64) -> Vec<f64> {
    (0..x.len())
        .map(|i| {
            let (mut a, mut b) = (x.to_vec(), x.to_vec());
            a[i] += h;
            b[i] -= h;
            (f(&a) - f(&b)) / (2.0 * h)
        })
        .collect()
}

fn b3_inputs() -> Vec<f64> {
    (0..100)
        .map(|j| 0.5 * (j as f64 * 0.37).sin() + 0.1 * (j % 7) as f64)
        .collect()
}

/// B3 in Rust: the value, and the gradient by a reverse sweep over the recorded
/// trace of (s, index) per trip.
fn b3_by_hand(x: &[f64]) -> (f64, Vec<f64>, usize) {
    let mut trace = Vec::new();
    let (mut s, mut i) = (0.0f64, 0usize);
    while s < 1000.0 {
        trace.push((s, i % 100));
        s += (x[i % 100] * 0.01).exp() * (1.0 + 0.1 * s.sin());
        i += 1;
    }
    let mut g = vec![0.0; x.len()];
    let mut sb = 1.0;
    for &(sk, k) in trace.iter().rev() {
        let e = (x[k] * 0.01).exp();
        g[k] += sb * (1.0 + 0.1 * sk.sin()) * e * 0.01;
        sb *= 1.0 + e * 0.1 * sk.cos();
    }
    (s, g, trace.len())
}

#[test]
fn b3_gradient_matches_a_hand_written_sweep_and_finite_differences() {
    let p = program();
    let x = b3_inputs();
    let (value, want, trips) = b3_by_hand(&x);
    assert!(trips > 500, "about a thousand trips, found {trips}");
    for e in ENGINES {
        let v = flat(&call(&p, e, "b3", &[vector(&x)]))[0];
        close("b3 value", &[v], &[value], 1e-13);
        let g = flat(&call(&p, e, "b3_grad", &[vector(&x)]));
        close("b3 grad vs hand-written sweep", &g, &want, 1e-10);
        // Forward mode, one direction: the sum of the gradient.
        let ones = vec![1.0; 100];
        let jv = flat(&call(&p, e, "b3_jvp", &[vector(&x), vector(&ones)]));
        close("b3 jvp vs grad", &[jv[1]], &[g.iter().sum()], 1e-11);
    }
    // The trip count is locally constant: central differences of the primal.
    let f = |xs: &[f64]| b3_by_hand(xs).0;
    let h = 1e-5;
    for k in [0, 1, 17, 50, 99] {
        let (mut a, mut b) = (x.clone(), x.clone());
        a[k] += h;
        b[k] -= h;
        assert_eq!(b3_by_hand(&a).2, trips);
        assert_eq!(b3_by_hand(&b).2, trips);
    }
    let g = flat(&call(&p, Engine::Jit, "b3_grad", &[vector(&x)]));
    let num = fd(&f, &x, h);
    close("b3 grad vs central differences", &g, &num, 1e-6);
}

#[test]
fn for_with_break_through_the_tape_agrees_with_forward_mode_and_differences() {
    let p = program();
    for (x, y) in [(0.7, 1.3), (1.1, 1.05), (2.0, 0.9)] {
        let f = |v: &[f64]| {
            flat(&call(
                &p,
                Engine::Interpreter,
                "brk",
                &[Value::F64(v[0]), Value::F64(v[1])],
            ))[0]
        };
        let num = fd(&f, &[x, y], 1e-6);
        for e in ENGINES {
            let g = flat(&call(&p, e, "brk_grad", &[Value::F64(x), Value::F64(y)]));
            close("brk grad vs differences", &g, &num, 1e-6);
            let dx = flat(&call(
                &p,
                e,
                "brk_jvp",
                &[
                    Value::F64(x),
                    Value::F64(y),
                    Value::F64(1.0),
                    Value::F64(0.0),
                ],
            ));
            let dy = flat(&call(
                &p,
                e,
                "brk_jvp",
                &[
                    Value::F64(x),
                    Value::F64(y),
                    Value::F64(0.0),
                    Value::F64(1.0),
                ],
            ));
            close("brk grad vs jvp", &g, &[dx[1], dy[1]], 1e-12);
        }
    }
}

#[test]
fn ad_tape_for_loop_gives_the_source_transformation_gradient() {
    let p = program();
    let x = Value::Tensor(Tensor::vector(vec![0.9, -1.3, 1.7]));
    for e in ENGINES {
        let a = flat(&call(&p, e, "plain_grad", std::slice::from_ref(&x)));
        let b = flat(&call(&p, e, "taped_grad", std::slice::from_ref(&x)));
        close("@ad(tape) vs source transformation", &b, &a, 1e-14);
    }
}

#[test]
fn while_nested_in_a_for_loop() {
    let p = program();
    let xs = [0.3, 1.4, 0.8];
    let f = |v: &[f64]| flat(&call(&p, Engine::Interpreter, "nested", &[vector(v)]))[0];
    let num = fd(&f, &xs, 1e-6);
    for e in ENGINES {
        let g = flat(&call(&p, e, "nested_grad", &[vector(&xs)]));
        close("nested grad vs differences", &g, &num, 1e-6);
    }
}

#[test]
fn hessian_through_a_while_loop() {
    let p = program();
    let (x, y) = (1.2, 1.7);
    let h = 1e-5;
    let grad_at = |a: f64, b: f64| {
        flat(&call(
            &p,
            Engine::Interpreter,
            "orbit2_grad",
            &[Value::F64(a), Value::F64(b)],
        ))
    };
    let (gxp, gxm) = (grad_at(x + h, y), grad_at(x - h, y));
    let (gyp, gym) = (grad_at(x, y + h), grad_at(x, y - h));
    let num = [
        (gxp[0] - gxm[0]) / (2.0 * h),
        (gyp[0] - gym[0]) / (2.0 * h),
        (gxp[1] - gxm[1]) / (2.0 * h),
        (gyp[1] - gym[1]) / (2.0 * h),
    ];
    for e in ENGINES {
        let hm = flat(&call(&p, e, "orbit2_hess", &[Value::F64(x), Value::F64(y)]));
        close(
            "orbit2 hessian vs differences of the gradient",
            &hm,
            &num,
            1e-6,
        );
        assert!(
            (hm[1] - hm[2]).abs() <= 1e-12 * hm[1].abs().max(1.0),
            "symmetric: {hm:?}"
        );
    }
}

/// The tape ops in the IR text form: they round-trip, validate, and pop in LIFO
/// order on both engines (values of several types, small and heap tensors);
/// popping an empty tape is a run-time error, not a crash.
#[test]
fn tape_ops_in_the_ir() {
    use mad::back::cranelift;
    use mad::ir::{parse::parse_module, print::print_module, validate::validate_module};
    let text = "func @f(%x: f64, %k: i64, %v: tensor<f64; 3>, %w: tensor<f64; ?>) -> f64 {
  tape.push %x, %k : ()
  tape.push %v, %w : ()
  %v2, %w2 = tape.pop : (tensor<f64; 3>, tensor<f64; ?>)
  %x2, %k2 = tape.pop : (f64, i64)
  %s = tensor.sum %v2 : f64
  %t = tensor.sum %w2 : f64
  %kf = cast %k2 : f64
  %a = add %s, %t : f64
  %b = mul %x2, %kf : f64
  %r = add %a, %b : f64
  return %r
}
func @under(%x: f64) -> f64 {
  %y = tape.pop : f64
  %r = add %x, %y : f64
  return %r
}
";
    let m = parse_module(text).expect("parses");
    assert_eq!(
        print_module(&parse_module(&print_module(&m)).expect("reparses")),
        print_module(&m)
    );
    validate_module(&m).expect("validates");
    let f = m.find("f").expect("f");
    let args = [
        Value::F64(1.5),
        Value::I64(4),
        vector(&[1.0, 2.0, 3.0]),
        vector(&[10.0, 20.0]),
    ];
    let want = Value::F64(6.0 + 30.0 + 6.0);
    let mut out = Vec::new();
    assert_eq!(
        mad::back::interp::call(&m, f, &args, &mut out).expect("interp"),
        want
    );
    let jit = cranelift::compile(&m, &[]).expect("jit compiles");
    assert_eq!(jit.call(f, &args, &mut out).expect("jit"), want);
    let u = m.find("under").expect("under");
    assert!(mad::back::interp::call(&m, u, &[Value::F64(1.0)], &mut out).is_err());
    assert!(jit.call(u, &[Value::F64(1.0)], &mut out).is_err());
}
