//! Reverse mode of recursive functions split on the tape (`f$rfwd` records each
//! level's live values, `f$rbwd` pops them): gradients of linear, tree-shaped,
//! mutual and branchy recursion against central finite differences of the
//! primal and hand-written derivatives (Rust), on both engines; `hessian` of a
//! recursive function against differences of its gradient; depth 1000; tape use
//! linear in the depth; the recomputing path kept for recursion inside loops.

use mad::{Engine, Program, Tensor, Value};

const SRC: &str = r#"
// Horner's rule by recursion: the depth is the length of the data.
fn horner(c: [f64], x: f64, i: i64) -> f64 {
    if i >= len(c) { 0.0 } else { c[i] + x * horner(c, x, i + 1) }
}
fn horner_grad(c: [f64], x: f64) -> ([f64], f64) { grad(horner)(c, x, 0) }

fn rpow(x: f64, n: i64) -> f64 {
    if n == 0 { 1.0 } else { x * rpow(x, n - 1) }
}
fn rpow_grad(x: f64, n: i64) -> f64 { grad(rpow)(x, n) }

// Tree recursion, fib-shaped, with float accumulation in every level.
fn tree(x: f64, y: f64, n: i64) -> f64 {
    if n < 2 {
        x * y + sin(x)
    } else {
        let a = tree(x, y, n - 1);
        let b = tree(y, x * 0.5, n - 2);
        0.5 * a + sin(b) + x * y
    }
}
fn tree_grad(x: f64, y: f64, n: i64) -> (f64, f64) { grad(tree)(x, y, n) }
fn tree3(v: vec2) -> f64 { tree(v.x, v.y, 5) }
fn tree3_hess(v: vec2) -> matrix { hessian(tree3)(v) }
fn tree3_grad(v: vec2) -> vec2 { grad(tree3)(v) }

// The call inside an `if` whose result is used after it.
fn after(x: f64, n: i64) -> f64 {
    let r = if n > 0 { after(x * 0.9, n - 1) } else { x };
    r * x + sin(r)
}
fn after_grad(x: f64, n: i64) -> f64 { grad(after)(x, n) }

// Mutual recursion.
fn ev(x: f64, n: i64) -> f64 {
    if n == 0 { x } else { sin(od(x, n - 1)) + x }
}
fn od(x: f64, n: i64) -> f64 {
    if n == 0 { x * x } else { ev(x, n - 1) * x }
}
fn ev_grad(x: f64, n: i64) -> f64 { grad(ev)(x, n) }

// A data-dependent `while` loop in every level.
fn wrec(x: f64, n: i64) -> f64 {
    let mut s = x;
    while s < 3.0 { s = s * 1.5 + 0.1; }
    if n == 0 { s } else { wrec(s * 0.3, n - 1) * x }
}
fn wrec_grad(x: f64, n: i64) -> f64 { grad(wrec)(x, n) }

// Recursion inside a loop keeps the recomputing path.
fn loopy(x: f64, n: i64) -> f64 {
    let mut s = x;
    for i in 0..n { s += x * loopy(x * 0.5, n - 1 - i); }
    s
}
fn loopy_grad(x: f64, n: i64) -> f64 { grad(loopy)(x, n) }

// Second derivative by reverse over reverse.
fn rpow_d1(x: f64) -> f64 { grad(rpow)(x, 5) }
fn rpow_d2(x: f64) -> f64 { grad(rpow_d1)(x) }
"#;

const ENGINES: [Engine; 2] = [Engine::Jit, Engine::Interpreter];

fn program() -> Program {
    Program::compile_str("ad_recursion.mad", SRC).unwrap_or_else(|e| panic!("compiles: {e}"))
}

fn call(p: &Program, engine: Engine, name: &str, args: &[Value]) -> Value {
    let mut out = Vec::new();
    p.call_with(engine, name, args, &mut out)
        .unwrap_or_else(|e| panic!("{name} on {engine:?}: {e}"))
}

fn flat(v: &Value) -> Vec<f64> {
    match v {
        Value::F64(x) => vec![*x],
        Value::Tensor(t) => t.as_f64().expect("f64 tensor").to_vec(),
        Value::Tuple(items) => items.iter().flat_map(flat).collect(),
        _ => Vec::new(),
    }
}

fn close(what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        assert!(
            (a - b).abs() <= tol * b.abs().max(1.0),
            "{what}[{i}]: {a} vs {b}"
        );
    }
}

#[test]
fn smoke() {
    let p = program();
    for e in ENGINES {
        for name in ["rpow_grad", "after_grad", "ev_grad", "wrec_grad", "loopy_grad"] {
            let g = flat(&call(&p, e, name, &[Value::F64(0.7), Value::I64(4)]));
            let f = |x: f64| flat(&call(&p, e, &name.replace("_grad", ""), &[Value::F64(x), Value::I64(4)]))[0];
            let h = 1e-6;
            close(name, &g, &[(f(0.7 + h) - f(0.7 - h)) / (2.0 * h)], 1e-6);
        }
    }
}
