//! The ADBench programs of `benches/adbench/` compile and compute what they claim: the two
//! GMM formulations (scalar loops, `vector` writes) give the same objective, on both
//! engines, and their gradients match central finite differences of the objective.

use mad::{Engine, Program, Value};
use mad_runtime::{Tensor, TensorData};

use crate::program_common::{call, flat};

fn tensor(shape: &[usize], f: impl Fn(usize) -> f64) -> Value {
    let n = shape.iter().product();
    Value::Tensor(Tensor { shape: shape.to_vec(), data: TensorData::F64((0..n).map(f).collect()) })
}

/// A small GMM problem (d = 3, K = 2, n = 4): alphas, means, icf, x, gamma, m.
fn problem(d: usize, k: usize, n: usize) -> Vec<Value> {
    let icf = d + d * (d - 1) / 2;
    vec![
        tensor(&[k], |i| 0.3 * i as f64 - 0.2),
        tensor(&[k, d], |i| (0.7 * i as f64).sin()),
        tensor(&[k, icf], |i| 0.4 * (1.3 * i as f64).cos()),
        tensor(&[n, d], |i| (0.9 * i as f64 + 0.1).cos()),
        Value::F64(1.0),
        Value::I64(0),
    ]
}

#[test]
fn gmm_formulations_agree_and_their_gradients_match_finite_differences() {
    let files = [
        ("gmm.mad", include_str!("../../benches/adbench/gmm.mad")),
        ("gmm_vectors.mad", include_str!("../../benches/adbench/gmm_vectors.mad")),
    ];
    let (d, k, n) = (3, 2, 4);
    let args = problem(d, k, n);
    let mut objectives = Vec::new();
    for (name, src) in files {
        let p = Program::compile_str(name, src).unwrap_or_else(|e| panic!("{name}: {e}"));
        let jit = flat(&call(&p, Engine::Jit, "gmm_objective", &args))[0];
        let interp = flat(&call(&p, Engine::Interpreter, "gmm_objective", &args))[0];
        assert!((jit - interp).abs() <= 1e-12 * jit.abs(), "{name}: JIT {jit} vs interpreter {interp}");
        objectives.push(jit);
        let g = flat(&call(&p, Engine::Jit, "gmm_gradient", &args));
        // The gradient's entries, in order: alphas, means, icf (the parameters 0, 1, 2).
        let mut at = 0;
        for param in 0..3 {
            let Value::Tensor(t) = &args[param] else { unreachable!() };
            let xs = t.as_f64().expect("f64").to_vec();
            for i in 0..xs.len() {
                let h = 1e-6;
                let moved = |delta: f64| {
                    let mut a = args.clone();
                    let mut ys = xs.clone();
                    ys[i] += delta;
                    a[param] = Value::Tensor(Tensor { shape: t.shape.clone(), data: TensorData::F64(ys) });
                    flat(&call(&p, Engine::Jit, "gmm_objective", &a))[0]
                };
                let fd = (moved(h) - moved(-h)) / (2.0 * h);
                assert!((g[at] - fd).abs() <= 1e-6 * (1.0 + fd.abs()), "{name}: parameter {param} entry {i}: {} vs {fd}", g[at]);
                at += 1;
            }
        }
        assert_eq!(at, g.len());
    }
    assert!((objectives[0] - objectives[1]).abs() <= 1e-12 * objectives[0].abs(), "{objectives:?}");
}
