//! Helpers shared by the tests that call compiled `.mad` programs on both engines.

#![allow(dead_code)]

use mad::{Engine, Program, Value};

/// Calls `name` on `engine`, panicking with the function, the engine and the error.
pub fn call(p: &Program, engine: Engine, name: &str, args: &[Value]) -> Value {
    let mut out = Vec::new();
    p.call_with(engine, name, args, &mut out)
        .unwrap_or_else(|e| panic!("{name} on {engine:?}: {e}"))
}

/// Every float in a value, in order (tensors row-major, tuples left to right).
pub fn flat(v: &Value) -> Vec<f64> {
    match v {
        Value::F64(x) => vec![*x],
        Value::Tensor(t) => t.as_f64().expect("f64 tensor").to_vec(),
        Value::Tuple(items) => items.iter().flat_map(flat).collect(),
        _ => Vec::new(),
    }
}

/// Asserts that `got` matches `want` entry by entry within `tol`, relative to the larger of
/// 1 and the wanted entry.
pub fn close(what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        assert!(
            (a - b).abs() <= tol * b.abs().max(1.0),
            "{what}[{i}]: {a} vs {b}"
        );
    }
}
