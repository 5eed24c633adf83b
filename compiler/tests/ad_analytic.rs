//! Hand-written analytic gradients and Hessians, numerics at singular points,
//! recursion, loop-invariant reads, third derivatives, and snapshots of cleaned
//! derivative IR.

use crate::ad_support;
use ad_support::*;
use mad_runtime::{Tensor, Value};

const SUM_XY: &str = r#"func @f(%x: tensor<f64; ?, ?>, %y: tensor<f64; ?, ?>) -> f64 {
  %p = tensor.matmul %x, %y : tensor<f64; ?, ?>
  %s = tensor.sum %p : f64
  return %s
}
"#;

#[test]
fn sum_of_matrix_product() {
    // d/dX sum(X Y) = 1 Yᵀ (row sums of Y), d/dY = Xᵀ 1 (column sums of X).
    let mut m = module(SUM_XY);
    let f = func(&m, "f");
    let x = Tensor::from_f64(vec![2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let y = Tensor::from_f64(vec![3, 2], vec![0.5, -1.0, 2.0, 0.25, -3.0, 1.5]).unwrap();
    let g = mad::ad::grad(&mut m, f).unwrap();
    let out = run(&m, g, &[Value::Tensor(x), Value::Tensor(y)]);
    let row_sums = [-0.5, 2.25, -1.5];
    let col_sums = [5.0, 7.0, 9.0];
    let want: Vec<f64> = [row_sums, row_sums]
        .concat()
        .into_iter()
        .chain(col_sums.iter().flat_map(|&c| [c, c]))
        .collect();
    assert_close_vec("grad", &flat(&out), &want, 1e-14);
    // The adjoint is two whole-matrix products, no per-element code.
    let v = m.find("f$vjp").unwrap();
    let matmuls = m.functions[v]
        .ops
        .iter()
        .filter(|(_, o)| o.kind == mad::ir::OpKind::MatMul)
        .count();
    assert_eq!(
        matmuls, 3,
        "the primal product and the two adjoint products"
    );
}

#[test]
fn analytic_gradients_and_hessians() {
    // (source body over %x, %y; gradient; Hessian row-major), at (x, y) = (0.7, 1.3).
    let (x, y) = (0.7f64, 1.3f64);
    let cases: Vec<(&str, [f64; 2], [f64; 4])> = vec![
        ("%r = mul %x, %y : f64", [y, x], [0.0, 1.0, 1.0, 0.0]),
        (
            "%a = mul %x, %x : f64\n  %r = mul %a, %y : f64",
            [2.0 * x * y, x * x],
            [2.0 * y, 2.0 * x, 2.0 * x, 0.0],
        ),
        (
            "%a = sin %x : f64\n  %b = cos %y : f64\n  %r = mul %a, %b : f64",
            [x.cos() * y.cos(), -x.sin() * y.sin()],
            [
                -x.sin() * y.cos(),
                -x.cos() * y.sin(),
                -x.cos() * y.sin(),
                -x.sin() * y.cos(),
            ],
        ),
        (
            "%a = mul %x, %y : f64\n  %r = exp %a : f64",
            [y * (x * y).exp(), x * (x * y).exp()],
            [
                y * y * (x * y).exp(),
                (1.0 + x * y) * (x * y).exp(),
                (1.0 + x * y) * (x * y).exp(),
                x * x * (x * y).exp(),
            ],
        ),
        (
            "%r = div %x, %y : f64",
            [1.0 / y, -x / (y * y)],
            [0.0, -1.0 / (y * y), -1.0 / (y * y), 2.0 * x / (y * y * y)],
        ),
        (
            "%r = pow %x, %y : f64",
            [y * x.powf(y - 1.0), x.powf(y) * x.ln()],
            [
                y * (y - 1.0) * x.powf(y - 2.0),
                x.powf(y - 1.0) * (1.0 + y * x.ln()),
                x.powf(y - 1.0) * (1.0 + y * x.ln()),
                x.powf(y) * x.ln() * x.ln(),
            ],
        ),
        (
            "%a = mul %x, %x : f64\n  %b = mul %y, %y : f64\n  %c = add %a, %b : f64\n  %r = sqrt %c : f64",
            {
                let n = (x * x + y * y).sqrt();
                [x / n, y / n]
            },
            {
                let n = (x * x + y * y).sqrt();
                let n3 = n * n * n;
                [y * y / n3, -x * y / n3, -x * y / n3, x * x / n3]
            },
        ),
        (
            "%r = atan2 %x, %y : f64",
            {
                let d = x * x + y * y;
                [y / d, -x / d]
            },
            {
                let d = x * x + y * y;
                [
                    -2.0 * x * y / (d * d),
                    (x * x - y * y) / (d * d),
                    (x * x - y * y) / (d * d),
                    2.0 * x * y / (d * d),
                ]
            },
        ),
        (
            "%a = log %x : f64\n  %b = mul %a, %y : f64\n  %r = tanh %b : f64",
            {
                let t = (x.ln() * y).tanh();
                [(1.0 - t * t) * y / x, (1.0 - t * t) * x.ln()]
            },
            {
                let u = x.ln() * y;
                let t = u.tanh();
                let s = 1.0 - t * t; // sech²
                let ux = y / x;
                let uy = x.ln();
                let uxx = -y / (x * x);
                let uxy = 1.0 / x;
                let h = |ua: f64, ub: f64, uab: f64| -2.0 * t * s * ua * ub + s * uab;
                [
                    h(ux, ux, uxx),
                    h(ux, uy, uxy),
                    h(ux, uy, uxy),
                    h(uy, uy, 0.0),
                ]
            },
        ),
        // B1: x log y + log(xy) y.
        (
            "%l = log %y : f64\n  %a = mul %x, %l : f64\n  %xy = mul %x, %y : f64\n  %l2 = log %xy : f64\n  %b = mul %l2, %y : f64\n  %r = add %a, %b : f64",
            [y.ln() + y / x, x / y + (x * y).ln() + 1.0],
            [
                -y / (x * x),
                1.0 / y + 1.0 / x,
                1.0 / y + 1.0 / x,
                -x / (y * y) + 1.0 / y,
            ],
        ),
    ];
    for (body, g, h) in cases {
        let src = format!("func @f(%x: f64, %y: f64) -> f64 {{\n  {body}\n  return %r\n}}\n");
        let mut m = module(&src);
        let f = func(&m, "f");
        let args = [Value::F64(x), Value::F64(y)];
        assert_close_vec(
            &format!("fwd {body}"),
            &forward_grad(&mut m, f, &args),
            &g,
            1e-13,
        );
        assert_close_vec(
            &format!("rev {body}"),
            &reverse_grad(&mut m, f, &args),
            &g,
            1e-13,
        );
        let hf = mad::ad::hessian(&mut m, f).unwrap();
        assert_close_vec(
            &format!("hess {body}"),
            &flat(&run(&m, hf, &args)),
            &h,
            1e-12,
        );
    }
}

#[test]
fn loop_invariant_read_accumulates_once() {
    // f(x, n) = sum_{i<n} x * i  => df/dx = n(n-1)/2.
    let src = r#"func @f(%x: f64, %n: i64) -> f64 {
  %zero = const 0 : i64
  %a0 = const 0.0 : f64
  %s = scf.for %zero, %n, %a0 : f64 {
  ^(%i: i64, %a: f64):
    %fi = cast %i : f64
    %t = mul %x, %fi : f64
    %a2 = add %a, %t : f64
    yield %a2
  }
  return %s
}
"#;
    let mut m = module(src);
    let f = func(&m, "f");
    for n in [0i64, 1, 5, 10] {
        let args = [Value::F64(1.5), Value::I64(n)];
        let want = [(n * (n - 1) / 2) as f64];
        assert_close_vec("rev", &reverse_grad(&mut m, f, &args), &want, 1e-14);
        assert_close_vec("fwd", &forward_grad(&mut m, f, &args), &want, 1e-14);
    }
    // The adjoint loop carries the invariant's adjoint; it is added once after it.
    let v = m.find("f$vjp").unwrap();
    let fors = m.functions[v]
        .ops
        .iter()
        .filter(|(_, o)| o.kind == mad::ir::OpKind::For)
        .count();
    assert_eq!(fors, 2, "one forward loop storing state, one adjoint loop");
}

#[test]
fn recursion_in_forward_and_reverse_mode() {
    // p(x, n) = x^n by recursion: d/dx = n x^(n-1).
    let src = r#"func @p(%x: f64, %n: i64) -> f64 {
  %zero = const 0 : i64
  %done = le %n, %zero : bool
  %r = scf.if %done : f64 {
    %one = const 1.0 : f64
    yield %one
  } else {
    %one_i = const 1 : i64
    %m = sub %n, %one_i : i64
    %q = call @p(%x, %m) : f64
    %r1 = mul %q, %x : f64
    yield %r1
  }
  return %r
}
"#;
    let mut m = module(src);
    let f = func(&m, "p");
    for n in [0i64, 1, 4, 7] {
        let args = [Value::F64(1.1), Value::I64(n)];
        let want = [if n == 0 {
            0.0
        } else {
            n as f64 * 1.1f64.powi(n as i32 - 1)
        }];
        assert_close_vec("fwd", &forward_grad(&mut m, f, &args), &want, 1e-13);
        assert_close_vec("rev", &reverse_grad(&mut m, f, &args), &want, 1e-13);
    }
}

#[test]
fn third_derivative_by_composition() {
    // f(x) = x^2 sin x: f''' = -x^2 cos x - 6x sin x + 6 cos x.
    let src = "func @f(%x: f64) -> f64 {\n  %a = mul %x, %x : f64\n  %s = sin %x : f64\n  %r = mul %a, %s : f64\n  return %r\n}\n";
    let mut m = module(src);
    let f = func(&m, "f");
    let h = mad::ad::hessian(&mut m, f).unwrap();
    let j = mad::ad::jvp(&mut m, h, 1).unwrap();
    assert_valid(&m);
    let x = 0.9f64;
    let out = flat(&run(&m, j, &[Value::F64(x), Value::F64(1.0)]));
    let want = -x * x * x.cos() - 6.0 * x * x.sin() + 6.0 * x.cos();
    assert!(close(out[1], want, 1e-12), "{} vs {want}", out[1]);
}

#[test]
fn numerics_at_singular_points() {
    let grad_at = |body: &str, args: &[Value]| {
        let params = if args.len() == 1 {
            "%x: f64"
        } else {
            "%x: f64, %y: f64"
        };
        let mut m = module(&format!(
            "func @f({params}) -> f64 {{\n  {body}\n  return %r\n}}\n"
        ));
        let f = func(&m, "f");
        (forward_grad(&mut m, f, args), reverse_grad(&mut m, f, args))
    };
    let z = [Value::F64(0.0)];
    // sqrt at 0: 0. abs at 0: 0.
    assert_eq!(grad_at("%r = sqrt %x : f64", &z), (vec![0.0], vec![0.0]));
    assert_eq!(grad_at("%r = abs %x : f64", &z), (vec![0.0], vec![0.0]));
    // min/max at a tie: all to the first operand.
    let t = [Value::F64(1.0), Value::F64(1.0)];
    assert_eq!(
        grad_at("%r = min %x, %y : f64", &t),
        (vec![1.0, 0.0], vec![1.0, 0.0])
    );
    assert_eq!(
        grad_at("%r = max %x, %y : f64", &t),
        (vec![1.0, 0.0], vec![1.0, 0.0])
    );
    // pow(0, y): d/dx = y 0^(y-1), d/dy = 0.
    let p = [Value::F64(0.0), Value::F64(2.0)];
    assert_eq!(
        grad_at("%r = pow %x, %y : f64", &p),
        (vec![0.0, 0.0], vec![0.0, 0.0])
    );
    // atan2(0, 0): 0.
    let o = [Value::F64(0.0), Value::F64(0.0)];
    assert_eq!(
        grad_at("%r = atan2 %x, %y : f64", &o),
        (vec![0.0, 0.0], vec![0.0, 0.0])
    );
    // log(0): +inf.
    assert_eq!(
        grad_at("%r = log %x : f64", &z),
        (vec![f64::INFINITY], vec![f64::INFINITY])
    );
    // A select whose untaken side is infinite does not poison the adjoint.
    let body = "%zero = const 0.0 : f64\n  %pos = gt %x, %zero : bool\n  %l = log %x : f64\n  %r = select %pos, %l, %x : f64";
    assert_eq!(grad_at(body, &z), (vec![1.0], vec![1.0]));
    // sqrt(x*x + y*y) at the origin: gradient 0, not NaN.
    let body = "%a = mul %x, %x : f64\n  %b = mul %y, %y : f64\n  %c = add %a, %b : f64\n  %r = sqrt %c : f64";
    assert_eq!(grad_at(body, &o), (vec![0.0, 0.0], vec![0.0, 0.0]));
}

#[test]
fn while_loops_through_the_tape_in_reverse_mode() {
    let src = r#"func @f(%x: f64) -> f64 {
  %s = scf.while %x : f64 {
  ^(%a: f64):
    %lim = const 10.0 : f64
    %go = lt %a, %lim : bool
    yield %go
  } do {
  ^(%b: f64):
    %b2 = mul %b, %b : f64
    %one = const 1.0 : f64
    %b3 = add %b2, %one : f64
    yield %b3
  }
  return %s
}
"#;
    let mut m = module(src);
    let f = func(&m, "f");
    // x = 0.5: 0.5 -> 1.25 -> 2.5625 -> 7.566... -> 58.25...: f = ((x²+1)²+1)²+1)²+1.
    let x = 0.5f64;
    let a1 = x * x + 1.0;
    let a2 = a1 * a1 + 1.0;
    let a3 = a2 * a2 + 1.0;
    let want = 2.0 * a3 * 2.0 * a2 * 2.0 * a1 * 2.0 * x;
    assert_close_vec(
        "fwd",
        &forward_grad(&mut m, f, &[Value::F64(x)]),
        &[want],
        1e-13,
    );
    assert_close_vec(
        "rev",
        &reverse_grad(&mut m, f, &[Value::F64(x)]),
        &[want],
        1e-13,
    );
    // Reverse over the taped reverse is refused; forward over it (hessian) works.
    let v = mad::ad::vjp(&mut m, f).unwrap();
    match mad::ad::vjp(&mut m, v) {
        Err(mad::ad::AdError::NeedsTape { op, .. }) => assert_eq!(op, "tape.pop"),
        other => panic!("expected NeedsTape, got {other:?}"),
    }
}

#[test]
fn snapshots_of_cleaned_derivatives() {
    let src = "func @b1(%x: f64, %y: f64) -> f64 {\n  %l = log %y : f64\n  %a = mul %x, %l : f64\n  %xy = mul %x, %y : f64\n  %l2 = log %xy : f64\n  %b = mul %l2, %y : f64\n  %r = add %a, %b : f64\n  return %r\n}\n";
    let mut m = module(src);
    let f = func(&m, "b1");
    let v = mad::ad::vjp(&mut m, f).unwrap();
    mad::passes::cleanup(&mut m, v).unwrap();
    insta::assert_snapshot!("b1_vjp", mad::ir::print::print_function(&m, v));
    let j = mad::ad::jvp(&mut m, f, 1).unwrap();
    mad::passes::cleanup(&mut m, j).unwrap();
    insta::assert_snapshot!("b1_jvp1", mad::ir::print::print_function(&m, j));
    let mut m = module(SUM_XY);
    let f = func(&m, "f");
    let v = mad::ad::vjp(&mut m, f).unwrap();
    mad::passes::cleanup(&mut m, v).unwrap();
    insta::assert_snapshot!("sum_xy_vjp", mad::ir::print::print_function(&m, v));
}
