//! Every differentiable op, first and second order, forward and reverse, against
//! central finite differences of the primal on random inputs away from kinks.
//! Every derivative is also checked after `passes::cleanup`.

use crate::ad_support;
use ad_support::*;
use mad::ir::Module;
use mad_runtime::{Tensor, Value};

/// Checks gradient (forward, reverse, `grad`) and Hessian of `@f` at random points.
fn check(src: &str, make_args: &dyn Fn(&mut Rng) -> Vec<Value>, hessian: bool) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ src.len() as u64);
    for _ in 0..3 {
        let args = make_args(&mut rng);
        let mut m = module(src);
        let f = func(&m, "f");
        let x = flatten_args(&args);
        let want = {
            let g = scalar_fn(&m, f, &args);
            fd_grad(&g, &x, 1e-6)
        };
        let fg = forward_grad(&mut m, f, &args);
        assert_close_vec(&format!("forward {src}"), &fg, &want, 1e-6);
        let rg = reverse_grad(&mut m, f, &args);
        assert_close_vec(&format!("reverse {src}"), &rg, &want, 1e-6);
        let gr = mad::ad::grad(&mut m, f).unwrap();
        assert_close_vec("grad", &flat(&run(&m, gr, &args)), &want, 1e-6);
        if hessian {
            let h = mad::ad::hessian(&mut m, f).unwrap_or_else(|e| panic!("hessian: {e}"));
            assert_valid(&m);
            let hv = flat(&run(&m, h, &args));
            let want_h: Vec<f64> = {
                let g = scalar_fn(&m, f, &args);
                fd_hessian(&g, &x, 1e-4).concat()
            };
            assert_close_vec(&format!("hessian {src}"), &hv, &want_h, 2e-4);
            check_cleanup(&mut m, h, &args);
        }
        check_cleanup(&mut m, gr, &args);
    }
}

/// `cleanup` keeps the function valid and its results unchanged.
fn check_cleanup(m: &mut Module, f: mad::ir::FuncRef, args: &[Value]) {
    let before = run(m, f, args);
    let mut c = m.clone();
    for (h, _) in m.functions.iter() {
        mad::passes::cleanup(&mut c, h).unwrap_or_else(|e| panic!("cleanup: {e:?}"));
    }
    let after = run(&c, f, args);
    assert_close_vec("cleanup", &flat(&after), &flat(&before), 1e-15);
}

fn scalars(ranges: &'static [(f64, f64)]) -> impl Fn(&mut Rng) -> Vec<Value> {
    move |r| {
        ranges
            .iter()
            .map(|&(lo, hi)| Value::F64(r.uniform(lo, hi)))
            .collect()
    }
}

#[test]
fn unary_ops() {
    // (op, domain): away from kinks and singularities.
    let ops: &[(&str, (f64, f64))] = &[
        ("neg", (-2.0, 2.0)),
        ("sqrt", (0.2, 3.0)),
        ("exp", (-1.0, 1.5)),
        ("log", (0.2, 3.0)),
        ("sin", (-3.0, 3.0)),
        ("cos", (-3.0, 3.0)),
        ("tan", (-1.2, 1.2)),
        ("asin", (-0.8, 0.8)),
        ("acos", (-0.8, 0.8)),
        ("atan", (-3.0, 3.0)),
        ("sinh", (-2.0, 2.0)),
        ("cosh", (-2.0, 2.0)),
        ("tanh", (-2.0, 2.0)),
        ("abs", (0.3, 2.0)),
        ("abs", (-2.0, -0.3)),
    ];
    for &(op, (lo, hi)) in ops {
        // f(x) = op(x) * x, so that the Hessian also sees the first derivative.
        let src = format!(
            "func @f(%x: f64) -> f64 {{\n  %y = {op} %x : f64\n  %r = mul %y, %x : f64\n  return %r\n}}\n"
        );
        let ranges: &'static [(f64, f64)] = Box::leak(Box::new([(lo, hi)]));
        check(&src, &scalars(ranges), true);
        // On a tensor, summed.
        let src = format!(
            "func @f(%x: tensor<f64; 3>) -> f64 {{\n  %y = {op} %x : tensor<f64; 3>\n  %z = mul %y, %x : tensor<f64; 3>\n  %r = tensor.sum %z : f64\n  return %r\n}}\n"
        );
        check(
            &src,
            &move |r: &mut Rng| {
                vec![Value::Tensor(Tensor::vector(
                    (0..3).map(|_| r.uniform(lo, hi)).collect(),
                ))]
            },
            true,
        );
    }
}

#[test]
fn piecewise_constant_ops_have_zero_derivative() {
    for op in ["floor", "ceil"] {
        let src = format!(
            "func @f(%x: f64) -> f64 {{\n  %y = {op} %x : f64\n  %r = add %y, %x : f64\n  return %r\n}}\n"
        );
        check(&src, &scalars(&[(0.2, 0.8)]), true);
    }
}

/// An interval of arguments.
type Range = (f64, f64);

#[test]
fn binary_ops() {
    let ops: &[(&str, Range, Range)] = &[
        ("add", (-2.0, 2.0), (-2.0, 2.0)),
        ("sub", (-2.0, 2.0), (-2.0, 2.0)),
        ("mul", (-2.0, 2.0), (-2.0, 2.0)),
        ("div", (-2.0, 2.0), (0.5, 2.0)),
        ("pow", (0.3, 2.0), (-1.5, 2.5)),
        ("atan2", (-2.0, 2.0), (0.3, 2.0)),
        ("atan2", (-2.0, 2.0), (-2.0, -0.3)),
        ("min", (-2.0, -0.5), (0.5, 2.0)),
        ("min", (0.5, 2.0), (-2.0, -0.5)),
        ("max", (-2.0, -0.5), (0.5, 2.0)),
        ("max", (0.5, 2.0), (-2.0, -0.5)),
        ("rem", (2.2, 2.8), (0.9, 1.0)),
    ];
    for &(op, ra, rb) in ops {
        let src = format!(
            "func @f(%a: f64, %b: f64) -> f64 {{\n  %y = {op} %a, %b : f64\n  %t = mul %y, %a : f64\n  %r = add %t, %y : f64\n  return %r\n}}\n"
        );
        let ranges: &'static [(f64, f64)] = Box::leak(Box::new([ra, rb]));
        check(&src, &scalars(ranges), true);
        // tensor op tensor, tensor op scalar, scalar op tensor (broadcast both ways).
        for (ta, tb) in [
            ("tensor<f64; 2>", "tensor<f64; 2>"),
            ("tensor<f64; 2>", "f64"),
            ("f64", "tensor<f64; 2>"),
        ] {
            let src = format!(
                "func @f(%a: {ta}, %b: {tb}) -> f64 {{\n  %y = {op} %a, %b : tensor<f64; 2>\n  %z = mul %y, %y : tensor<f64; 2>\n  %r = tensor.sum %z : f64\n  return %r\n}}\n"
            );
            let mk = move |r: &mut Rng, t: &str, (lo, hi): (f64, f64)| {
                if t == "f64" {
                    Value::F64(r.uniform(lo, hi))
                } else {
                    Value::Tensor(Tensor::vector(vec![r.uniform(lo, hi), r.uniform(lo, hi)]))
                }
            };
            let (ta2, tb2) = (ta.to_string(), tb.to_string());
            check(
                &src,
                &move |r: &mut Rng| vec![mk(r, &ta2, ra), mk(r, &tb2, rb)],
                true,
            );
        }
    }
}

#[test]
fn select_cast_and_comparisons() {
    let src = "func @f(%a: f64, %b: f64) -> f64 {\n  %c = lt %a, %b : bool\n  %p = mul %a, %b : f64\n  %q = sin %a : f64\n  %s = select %c, %p, %q : f64\n  %h2 = mul %s, %s : f64\n  %r = add %h2, %s : f64\n  return %r\n}\n";
    check(src, &scalars(&[(-2.0, -1.0), (1.0, 2.0)]), false);
    check(src, &scalars(&[(1.0, 2.0), (-2.0, -1.0)]), false);
}

#[test]
fn tensor_construction_and_access() {
    let src = r#"func @f(%x: f64, %v: tensor<f64; 3>) -> f64 {
  %y = mul %x, %x : f64
  %row = tensor.pack %x, %y, %x : tensor<f64; 3>
  %m = tensor.pack %row, %v : tensor<f64; 2, 3>
  %n = const 2 : i64
  %full = tensor.full %y, %n : tensor<f64; 2>
  %e = tensor.extract[1] %m : tensor<f64; 3>
  %e1 = tensor.extract[2] %e : f64
  %zero = const 0 : i64
  %one = const 1 : i64
  %i = tensor.index %m, %zero, %one : f64
  %w = mul %e1, %i : f64
  %ins = tensor.insert %m, %w, %one, %zero : tensor<f64; 2, 3>
  %ins2 = tensor.insert %ins, %row, %zero : tensor<f64; 2, 3>
  %t = tensor.transpose %ins2 : tensor<f64; 3, 2>
  %tt = mul %t, %t : tensor<f64; 3, 2>
  %s = tensor.sum %tt : f64
  %fs = tensor.sum %full : f64
  %d = tensor.dim[0] %v : i64
  %df = cast %d : f64
  %r0 = add %s, %fs : f64
  %r = mul %r0, %df : f64
  return %r
}
"#;
    check(
        src,
        &|r: &mut Rng| {
            vec![
                Value::F64(r.uniform(-1.0, 1.0)),
                Value::Tensor(Tensor::vector(
                    (0..3).map(|_| r.uniform(-1.0, 1.0)).collect(),
                )),
            ]
        },
        true,
    );
}

#[test]
fn matmul_matrix_and_vector() {
    let src = r#"func @f(%a: tensor<f64; 2, 3>, %b: tensor<f64; 3, 2>, %v: tensor<f64; 3>) -> f64 {
  %c = tensor.matmul %a, %b : tensor<f64; 2, 2>
  %w = tensor.matmul %a, %v : tensor<f64; 2>
  %c2 = mul %c, %c : tensor<f64; 2, 2>
  %w2 = mul %w, %w : tensor<f64; 2>
  %s1 = tensor.sum %c2 : f64
  %s2 = tensor.sum %w2 : f64
  %r = add %s1, %s2 : f64
  return %r
}
"#;
    let mat = |r: &mut Rng, n, k| {
        Value::Tensor(
            Tensor::from_f64(
                vec![n, k],
                (0..n * k).map(|_| r.uniform(-1.0, 1.0)).collect(),
            )
            .unwrap(),
        )
    };
    check(
        src,
        &move |r: &mut Rng| {
            vec![
                mat(r, 2, 3),
                mat(r, 3, 2),
                Value::Tensor(Tensor::vector(
                    (0..3).map(|_| r.uniform(-1.0, 1.0)).collect(),
                )),
            ]
        },
        true,
    );
}

#[test]
fn tuples_if_for_while_and_calls() {
    let src = r#"func @g(%p: (f64, i64), %y: f64) -> (f64, f64) {
  %a = tuple.get[0] %p : f64
  %b = mul %a, %y : f64
  %c = sin %b : f64
  %t = tuple %c, %b : (f64, f64)
  return %t
}

func @f(%x: f64, %y: f64) -> f64 {
  %k = const 3 : i64
  %p = tuple %x, %k : (f64, i64)
  %t = call @g(%p, %y) : (f64, f64)
  %u = tuple.get[0] %t : f64
  %v = tuple.get[1] %t : f64
  %zero = const 0.0 : f64
  %pos = gt %u, %zero : bool
  %w = scf.if %pos : f64 {
    %w1 = mul %u, %v : f64
    yield %w1
  } else {
    %w2 = add %u, %x : f64
    yield %w2
  }
  %lo = const 0 : i64
  %hi = const 4 : i64
  %acc, %cnt = scf.for %lo, %hi, %w, %lo : (f64, i64) {
  ^(%i: i64, %a: f64, %c: i64):
    %fi = cast %i : f64
    %s = mul %a, %y : f64
    %s2 = add %s, %fi : f64
    %s3 = mul %s2, 0.25 : f64
    %one = const 1 : i64
    %c2 = add %c, %one : i64
    yield %s3, %c2
  }
  return %acc
}
"#;
    let src = src.replace("mul %s2, 0.25", "mul %s2, %y");
    check(&src, &scalars(&[(0.5, 1.0), (0.5, 1.0)]), true);
}

#[test]
fn float_casts_carry_the_derivative() {
    // f(x) = f64(f32(x)^2): the derivative 2x, rounded to f32.
    let src = "func @f(%x: f64) -> f64 {\n  %h = cast %x : f32\n  %h2 = mul %h, %h : f32\n  %r = cast %h2 : f64\n  return %r\n}\n";
    let mut m = module(src);
    let f = func(&m, "f");
    for x in [0.3, -1.7, 2.5] {
        let want = [2.0 * x];
        assert_close_vec(
            "fwd",
            &forward_grad(&mut m, f, &[Value::F64(x)]),
            &want,
            1e-6,
        );
        assert_close_vec(
            "rev",
            &reverse_grad(&mut m, f, &[Value::F64(x)]),
            &want,
            1e-6,
        );
    }
}
