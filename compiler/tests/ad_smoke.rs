use crate::ad_support;
use ad_support::*;
use mad_runtime::Value;

#[test]
fn b1_all_modes() {
    let src = "func @f(%x: f64, %y: f64) -> f64 {\n  %l = log %y : f64\n  %a = mul %x, %l : f64\n  %xy = mul %x, %y : f64\n  %l2 = log %xy : f64\n  %b = mul %l2, %y : f64\n  %r = add %a, %b : f64\n  return %r\n}\n";
    let mut m = module(src);
    let f = func(&m, "f");
    let args = [Value::F64(2.0), Value::F64(3.0)];
    let want = [3.0f64.ln() + 3.0 / 2.0, 2.0 / 3.0 + 6.0f64.ln() + 1.0];
    assert_close_vec("fwd", &forward_grad(&mut m, f, &args), &want, 1e-13);
    assert_close_vec("rev", &reverse_grad(&mut m, f, &args), &want, 1e-13);
    let h = mad::ad::hessian(&mut m, f).unwrap();
    let hv = run(&m, h, &args);
    // f_xx = -y/x², f_xy = 1/y + 1/x, f_yy = -x/y² + 1/y
    let want_h = [
        -0.75,
        1.0 / 3.0 + 0.5,
        1.0 / 3.0 + 0.5,
        -2.0 / 9.0 + 1.0 / 3.0,
    ];
    assert_close_vec("hess", &flat(&hv), &want_h, 1e-13);
}

#[test]
fn for_loop_regression() {
    let src = r#"
func @ll(%a: f64, %b: f64, %sigma: f64, %x: tensor<f64; ?>, %y: tensor<f64; ?>) -> f64 {
  %zero = const 0 : i64
  %n = tensor.dim[0] %x : i64
  %acc0 = const 0.0 : f64
  %s = scf.for %zero, %n, %acc0 : f64 {
  ^(%i: i64, %acc: f64):
    %xi = tensor.index %x, %i : f64
    %yi = tensor.index %y, %i : f64
    %bx = mul %b, %xi : f64
    %mu = add %a, %bx : f64
    %r = sub %yi, %mu : f64
    %z = div %r, %sigma : f64
    %z2 = mul %z, %z : f64
    %h = const -0.5 : f64
    %t = mul %h, %z2 : f64
    %ls = log %sigma : f64
    %t2 = sub %t, %ls : f64
    %acc2 = add %acc, %t2 : f64
    yield %acc2
  }
  return %s
}
"#;
    let mut m = module(src);
    let f = func(&m, "ll");
    let xs = vec![0.5, 1.0, 1.5, 2.0];
    let ys = vec![1.1, 1.9, 3.2, 3.9];
    let args = [
        Value::F64(0.3),
        Value::F64(1.7),
        Value::F64(0.8),
        Value::Tensor(mad_runtime::Tensor::vector(xs.clone())),
        Value::Tensor(mad_runtime::Tensor::vector(ys.clone())),
    ];
    let (a, b, s) = (0.3, 1.7, 0.8);
    let mut g = [0.0; 3];
    for (x, y) in xs.iter().zip(&ys) {
        let r = y - (a + b * x);
        g[0] += r / (s * s);
        g[1] += r * x / (s * s);
        g[2] += r * r / (s * s * s) - 1.0 / s;
    }
    let rg = reverse_grad(&mut m, f, &args);
    assert_close_vec("rev", &rg[..3], &g, 1e-12);
    let fg = forward_grad(&mut m, f, &args);
    assert_close_vec("fwd", &fg[..3], &g, 1e-12);
}
