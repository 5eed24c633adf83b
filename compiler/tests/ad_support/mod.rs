//! Shared helpers for the differentiation tests: running IR, flattening values,
//! central finite differences of the primal (the reference, which knows nothing of
//! the rule table), and a small deterministic random source.
#![allow(dead_code)]

use mad::back::interp;
use mad::ir::parse::parse_module;
use mad::ir::{FuncRef, Module};
use mad_runtime::{Tensor, Value};

pub fn module(text: &str) -> Module {
    let m = parse_module(text).unwrap_or_else(|e| panic!("parse: {e:?}\n{text}"));
    mad::ir::validate::validate_module(&m).unwrap_or_else(|e| panic!("invalid test module: {e:?}"));
    m
}

pub fn run(m: &Module, f: FuncRef, args: &[Value]) -> Value {
    interp::call(m, f, args, &mut std::io::sink()).unwrap_or_else(|e| panic!("run: {e}"))
}

pub fn func(m: &Module, name: &str) -> FuncRef {
    m.find(name).unwrap_or_else(|| panic!("no @{name}"))
}

/// Every generated function validates.
pub fn assert_valid(m: &Module) {
    if let Err(e) = mad::ir::validate::validate_module(m) {
        panic!("invalid module: {e:?}\n{}", mad::ir::print::print_module(m));
    }
}

/// The floats of a value, in order (tensors row-major, tuples in order).
pub fn flat(v: &Value) -> Vec<f64> {
    match v {
        Value::F64(x) => vec![*x],
        Value::F32(x) => vec![*x as f64],
        Value::Tensor(t) => t.as_f64().map(<[f64]>::to_vec).unwrap_or_default(),
        Value::Tuple(items) => items.iter().flat_map(flat).collect(),
        Value::I64(_) | Value::Bool(_) => vec![],
    }
}

/// The number of float slots in a value.
pub fn float_len(v: &Value) -> usize {
    flat(v).len()
}

/// `v` with its float slots replaced by `xs` (consumed in order).
pub fn with_floats(v: &Value, xs: &mut impl Iterator<Item = f64>) -> Value {
    match v {
        Value::F64(_) => Value::F64(xs.next().unwrap()),
        Value::Tensor(t) if t.as_f64().is_some() => {
            let n = t.as_f64().unwrap().len();
            Value::Tensor(Tensor::from_f64(t.shape.clone(), xs.take(n).collect()).unwrap())
        }
        Value::Tuple(items) => Value::Tuple(items.iter().map(|i| with_floats(i, xs)).collect()),
        other => other.clone(),
    }
}

/// The arguments as one flat vector of floats, and back.
pub fn flatten_args(args: &[Value]) -> Vec<f64> {
    args.iter().flat_map(flat).collect()
}

pub fn unflatten_args(args: &[Value], xs: &[f64]) -> Vec<Value> {
    let mut it = xs.iter().copied();
    args.iter().map(|a| with_floats(a, &mut it)).collect()
}

/// A scalar function of the flattened float arguments.
pub fn scalar_fn<'a>(m: &'a Module, f: FuncRef, args: &'a [Value]) -> impl Fn(&[f64]) -> f64 + 'a {
    move |xs| {
        let v = run(m, f, &unflatten_args(args, xs));
        flat(&v)[0]
    }
}

/// Central finite-difference gradient.
pub fn fd_grad(g: &dyn Fn(&[f64]) -> f64, x: &[f64], h: f64) -> Vec<f64> {
    (0..x.len())
        .map(|i| {
            let mut p = x.to_vec();
            let mut q = x.to_vec();
            p[i] += h;
            q[i] -= h;
            (g(&p) - g(&q)) / (2.0 * h)
        })
        .collect()
}

/// Central finite-difference Hessian (second differences of the function itself).
pub fn fd_hessian(g: &dyn Fn(&[f64]) -> f64, x: &[f64], h: f64) -> Vec<Vec<f64>> {
    let n = x.len();
    let at = |di: usize, si: f64, dj: usize, sj: f64| {
        let mut p = x.to_vec();
        p[di] += si * h;
        p[dj] += sj * h;
        g(&p)
    };
    (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    (at(i, 1.0, j, 1.0) - at(i, 1.0, j, -1.0) - at(i, -1.0, j, 1.0)
                        + at(i, -1.0, j, -1.0))
                        / (4.0 * h * h)
                })
                .collect()
        })
        .collect()
}

pub fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

pub fn assert_close_vec(what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(
        got.len(),
        want.len(),
        "{what}: lengths differ: {got:?} vs {want:?}"
    );
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        assert!(
            close(*a, *b, tol),
            "{what}[{i}]: got {a}, want {b}\n got  {got:?}\n want {want:?}"
        );
    }
}

/// A small deterministic generator (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// The gradient of scalar `f` at `args` by reverse mode (`f$vjp` with cotangent 1),
/// flattened.
pub fn reverse_grad(m: &mut Module, f: FuncRef, args: &[Value]) -> Vec<f64> {
    let v = mad::ad::vjp(m, f).unwrap_or_else(|e| panic!("vjp: {e}"));
    assert_valid(m);
    let mut a = args.to_vec();
    a.push(Value::F64(1.0));
    let out = run(m, v, &a);
    let Value::Tuple(items) = out else {
        panic!("vjp returns a tuple")
    };
    items[1..].iter().flat_map(flat).collect()
}

/// The gradient of scalar `f` by forward mode: one seed per flattened input, all in
/// one `jvp` pass.
pub fn forward_grad(m: &mut Module, f: FuncRef, args: &[Value]) -> Vec<f64> {
    let float_args: Vec<&Value> = args.iter().filter(|a| float_len(a) > 0).collect();
    let n: usize = float_args.iter().map(|a| float_len(a)).sum();
    let j = mad::ad::jvp(m, f, n).unwrap_or_else(|e| panic!("jvp: {e}"));
    assert_valid(m);
    let mut a = args.to_vec();
    for s in 0..n {
        let mut k = 0;
        for fa in &float_args {
            let len = float_len(fa);
            let seed: Vec<f64> = (0..len)
                .map(|q| if k + q == s { 1.0 } else { 0.0 })
                .collect();
            k += len;
            a.push(with_floats(fa, &mut seed.into_iter()));
        }
    }
    let out = run(m, j, &a);
    let Value::Tuple(items) = out else {
        panic!("jvp returns a tuple")
    };
    items[1..].iter().map(|t| flat(t)[0]).collect()
}
