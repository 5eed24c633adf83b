//! The ADBench programs of `benches/adbench/` compile and compute what they claim: the two
//! GMM formulations (scalar loops, `vector` writes) give the same objective, on both
//! engines, and their gradients match central finite differences of the objective; the BA
//! Jacobian's blocks (by `jacobian` and by `vjp`) match central finite differences of the
//! residual vector, entry by entry, with zeros where an observation does not depend on a
//! parameter; the two LSTM formulations give the same objective and their gradients match
//! central finite differences.

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

/// `entry`'s value on the JIT, checked against the interpreter's.
fn objective_on_both_engines(p: &Program, file: &str, entry: &str, args: &[Value]) -> f64 {
    let jit = flat(&call(p, Engine::Jit, entry, args))[0];
    let interp = flat(&call(p, Engine::Interpreter, entry, args))[0];
    assert!((jit - interp).abs() <= 1e-12 * jit.abs(), "{file}: JIT {jit} vs interpreter {interp}");
    jit
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
        objectives.push(objective_on_both_engines(&p, name, "gmm_objective", &args));
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

/// A small bundle-adjustment problem (n cameras, m points, p observations, observation i
/// seeing point i % m from camera i % n): cams, x, w, obs, feats. Camera 0 has a zero
/// rotation (the first-order branch of the Rodrigues rotation); the cameras look along +z at
/// points near the origin.
fn ba_problem(n: usize, m: usize, p: usize) -> Vec<Value> {
    let cams = tensor(&[n, 11], |i| {
        let (c, a) = (i / 11, i % 11);
        let s = (1.7 * i as f64 + 0.3).sin();
        match a {
            0..=2 if c == 0 => 0.0,
            0..=2 => 0.4 * s,
            3 | 4 => 0.3 * s,
            5 => -5.0 + 0.2 * s,
            6 => 2.0 + 0.3 * s,
            7 | 8 => 0.1 * s,
            9 => 0.05 + 0.02 * s,
            _ => 0.01 + 0.005 * s,
        }
    });
    let obs = Value::Tensor(Tensor {
        shape: vec![p, 2],
        data: TensorData::I64((0..p).flat_map(|i| [(i % n) as i64, (i % m) as i64]).collect()),
    });
    vec![
        cams,
        tensor(&[m, 3], |i| (0.9 * i as f64 + 0.2).cos()),
        tensor(&[p], |i| 0.5 + 0.3 * (1.1 * i as f64).sin()),
        obs,
        tensor(&[p, 2], |i| 0.4 * (0.7 * i as f64 + 0.5).cos()),
    ]
}

fn moved(args: &[Value], param: usize, i: usize, delta: f64) -> Vec<Value> {
    let Value::Tensor(t) = &args[param] else { unreachable!() };
    let mut ys = t.as_f64().expect("f64").to_vec();
    ys[i] += delta;
    let mut a = args.to_vec();
    a[param] = Value::Tensor(Tensor { shape: t.shape.clone(), data: TensorData::F64(ys) });
    a
}

#[test]
fn ba_jacobian_blocks_match_finite_differences_of_the_residuals() {
    let src = include_str!("../../benches/adbench/ba.mad");
    let p = Program::compile_str("ba.mad", src).unwrap_or_else(|e| panic!("ba.mad: {e}"));
    let (n, m, nobs) = (3, 4, 7);
    let args = ba_problem(n, m, nobs);
    let r = flat(&call(&p, Engine::Jit, "ba_objective", &args));
    let ri = flat(&call(&p, Engine::Interpreter, "ba_objective", &args));
    assert_eq!(r.len(), 3 * nobs);
    for (a, b) in r.iter().zip(&ri) {
        assert!((a - b).abs() <= 1e-12 * (1.0 + a.abs()), "JIT {a} vs interpreter {b}");
    }
    let sumsq = flat(&call(&p, Engine::Jit, "ba_objective_sumsq", &args))[0];
    let direct: f64 = r.iter().map(|e| e * e).sum();
    assert!((sumsq - direct).abs() <= 1e-12 * direct, "{sumsq} vs {direct}");

    // The two formulations of the Jacobian, on both engines, agree.
    let jac = flat(&call(&p, Engine::Jit, "ba_jacobian", &args));
    assert_eq!(jac.len(), nobs * 31);
    for (engine, name) in [(Engine::Interpreter, "ba_jacobian"), (Engine::Jit, "ba_jacobian_vjp"), (Engine::Interpreter, "ba_jacobian_vjp")] {
        let other = flat(&call(&p, engine, name, &args));
        for (k, (a, b)) in jac.iter().zip(&other).enumerate() {
            assert!((a - b).abs() <= 1e-12 * (1.0 + a.abs()), "{name} on {engine:?}, entry {k}: {b} vs {a}");
        }
    }
    let l1 = flat(&call(&p, Engine::Jit, "ba_jacobian_l1", &args))[0];
    let l1_direct: f64 = jac.iter().map(|v| v.abs()).sum();
    assert!((l1 - l1_direct).abs() <= 1e-12 * l1_direct, "{l1} vs {l1_direct}");

    // Every parameter moved in turn: each residual's change is the Jacobian's entry where the
    // residual depends on the parameter, and zero elsewhere.
    let h = 1e-6;
    let cams_of = |i: usize| i % n;
    let point_of = |i: usize| i % m;
    for (param, count) in [(0, n * 11), (1, m * 3), (2, nobs)] {
        for q in 0..count {
            let up = flat(&call(&p, Engine::Jit, "ba_objective", &moved(&args, param, q, h)));
            let down = flat(&call(&p, Engine::Jit, "ba_objective", &moved(&args, param, q, -h)));
            for row in 0..3 * nobs {
                let fd = (up[row] - down[row]) / (2.0 * h);
                let expected = if row < 2 * nobs {
                    let (i, rr) = (row / 2, row % 2);
                    let column = match param {
                        0 if cams_of(i) == q / 11 => Some(q % 11),
                        1 if point_of(i) == q / 3 => Some(11 + q % 3),
                        2 if i == q => Some(14),
                        _ => None,
                    };
                    column.map_or(0.0, |a| jac[i * 31 + 15 * rr + a])
                } else if param == 2 && row - 2 * nobs == q {
                    jac[q * 31 + 30]
                } else {
                    0.0
                };
                assert!(
                    (expected - fd).abs() <= 1e-6 * (1.0 + fd.abs()),
                    "parameter {param} entry {q}, residual {row}: Jacobian {expected} vs finite difference {fd}"
                );
            }
        }
    }
}

/// A small LSTM problem (l layers, c characters of b bits): main, extra, state, seq.
fn lstm_problem(l: usize, c: usize, b: usize) -> Vec<Value> {
    vec![
        tensor(&[2 * l, 4 * b], |i| 0.5 + 0.5 * (1.3 * i as f64 + 0.1).sin()),
        tensor(&[3, b], |i| 0.5 + 0.5 * (0.7 * i as f64 + 0.4).cos()),
        tensor(&[2 * l, b], |i| 0.5 + 0.4 * (2.1 * i as f64).sin()),
        tensor(&[c, b], |i| ((i * 7 + i / 3) % 2) as f64),
    ]
}

#[test]
fn lstm_formulations_agree_and_their_gradients_match_finite_differences() {
    let files = [
        ("lstm.mad", include_str!("../../benches/adbench/lstm.mad")),
        ("lstm_vectors.mad", include_str!("../../benches/adbench/lstm_vectors.mad")),
    ];
    let (l, c, b) = (2, 5, 3);
    let args = lstm_problem(l, c, b);
    let mut objectives = Vec::new();
    for (name, src) in files {
        let p = Program::compile_str(name, src).unwrap_or_else(|e| panic!("{name}: {e}"));
        objectives.push(objective_on_both_engines(&p, name, "lstm_objective", &args));
        let g = flat(&call(&p, Engine::Jit, "lstm_gradient", &args));
        let gi = flat(&call(&p, Engine::Interpreter, "lstm_gradient", &args));
        assert_eq!(g.len(), 2 * l * 4 * b + 3 * b, "{name}: the gradient has the main and extra parameters' entries");
        for (k, (a, e)) in g.iter().zip(&gi).enumerate() {
            assert!((a - e).abs() <= 1e-12 * (1.0 + a.abs()), "{name}: gradient entry {k}: JIT {a} vs interpreter {e}");
        }
        let l1 = flat(&call(&p, Engine::Jit, "lstm_gradient_l1", &args))[0];
        let l1_direct: f64 = g.iter().map(|v| v.abs()).sum();
        assert!((l1 - l1_direct).abs() <= 1e-12 * l1_direct, "{name}: {l1} vs {l1_direct}");
        // The gradient's entries, in order: main, extra (the parameters 0, 1).
        let mut at = 0;
        for param in 0..2 {
            let count = args[param].as_tensor().expect("tensor").data.len();
            for i in 0..count {
                let h = 1e-6;
                let up = flat(&call(&p, Engine::Jit, "lstm_objective", &moved(&args, param, i, h)))[0];
                let down = flat(&call(&p, Engine::Jit, "lstm_objective", &moved(&args, param, i, -h)))[0];
                let fd = (up - down) / (2.0 * h);
                assert!((g[at] - fd).abs() <= 1e-7 * (1.0 + fd.abs()), "{name}: parameter {param} entry {i}: {} vs {fd}", g[at]);
                at += 1;
            }
        }
    }
    assert!((objectives[0] - objectives[1]).abs() <= 1e-12 * objectives[0].abs(), "{objectives:?}");
}
