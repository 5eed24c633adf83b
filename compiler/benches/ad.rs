//! Differentiation speed on the four reference problems B1–B4: median time per
//! gradient of mad's `grad` beside a hand-written Rust gradient in the same run.
//!
//! - B1 `x*log(y) + log(x*y)*y`: mad's `grad(b1)` through a direct call
//!   ([`mad::back::native::RawCaller`]), and as a loop written in mad that calls
//!   `grad(b1)` once per trip, beside the same loop in Rust.
//!
//! Every scalar input changes from trip to trip on both sides, so no part of a
//! gradient is loop-invariant: the code generator inlines `grad(…)` into the
//! calling loop and hoists invariants, which would otherwise move work out of
//! the timed loop.
//! - B2 `sum(X * Y)` for N×N dynamic matrices: a loop written in mad calling
//!   `grad(b2)` (heap tensors cannot take a direct call), beside a hand-written
//!   gradient calling the run time's matrix product [`mad_runtime::jit::kernels::matmul_f64`].
//! - B3 the data-dependent `while` loop: `grad(b3)` if it compiles; the hand-written
//!   side is a reverse sweep over a recorded trace.
//! - B4 regression log-likelihood: a loop written in mad calling `grad(ll, 0)`
//!   (the gradient with respect to `(a, b, sigma)` packed as a `vec3`), beside a
//!   strict-order scalar loop.
//!
//! Run: `cargo bench -p mad --bench ad`. Prints a Markdown table.

use mad::{Program, Tensor, TensorData, Value};
use mad_runtime::jit::kernels::matmul_f64;
use std::hint::black_box;
use std::time::Instant;

const SRC: &str = "
fn b1(x: f64, y: f64) -> f64 { x * log(y) + log(x * y) * y }
fn g1(x: f64, y: f64) -> (f64, f64) { grad(b1)(x, y) }
fn loop1(x: f64, y: f64, n: i64) -> f64 {
    let mut s = 0.0;
    for i in 0..n {
        let (gx, gy) = grad(b1)(x + 1e-9 * (i as f64), y + 1e-9 * (i as f64));
        s += gx + gy;
    }
    s
}

fn b2(x: matrix, y: matrix) -> f64 { sum(x * y) }
fn loop2(x: matrix, y: matrix, n: i64) -> f64 {
    let mut s = 0.0;
    for i in 0..n {
        let (gx, gy) = grad(b2)(x, y);
        s += gx[0, 0] + gy[0, 0];
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
fn loop4(a: f64, b: f64, sigma: f64, x: [f64], y: [f64], n: i64) -> f64 {
    let mut s = 0.0;
    for i in 0..n {
        let g = grad(ll, 0)(vec3(a + 1e-9 * (i as f64), b, sigma + 1e-12 * (i as f64)), x, y);
        s += g.x + g.y + g.z;
    }
    s
}
";

const SRC_B3: &str = "
fn b3(x: [f64]) -> f64 {
    let mut s = 0.0;
    let mut i = 0;
    while s < 1000.0 {
        s += exp(x[i % 100] * 0.01) * (1.0 + 0.1 * sin(s));
        i += 1;
    }
    s
}
fn loop3(x: [f64], n: i64) -> f64 {
    let mut s = 0.0;
    for k in 0..n {
        let g = grad(b3)(x);
        s += g[0];
    }
    s
}
";

/// Median of `reps` timings of `f`, in nanoseconds per unit (`f` does `units` units).
fn median_ns(reps: usize, units: u64, mut f: impl FnMut()) -> f64 {
    f();
    let mut v: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_nanos() as f64 / units as f64
        })
        .collect();
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn fmt_ns(ns: f64) -> String {
    if ns >= 10_000.0 {
        format!("{:.1} µs", ns / 1000.0)
    } else if ns >= 100.0 {
        format!("{ns:.0} ns")
    } else {
        format!("{ns:.1} ns")
    }
}

fn row(name: &str, how: &str, mad: f64, hand: f64) {
    println!(
        "| {name} | {how} | {} | {} | {:.2}× |",
        fmt_ns(mad),
        fmt_ns(hand),
        mad / hand
    );
}

fn f64_of(v: &Value) -> f64 {
    match v {
        Value::F64(x) => *x,
        _ => f64::NAN,
    }
}

fn vector(xs: Vec<f64>) -> Value {
    Value::Tensor(Tensor {
        shape: vec![xs.len()],
        data: TensorData::F64(xs),
    })
}

fn matrix(n: usize, xs: Vec<f64>) -> Value {
    Value::Tensor(Tensor {
        shape: vec![n, n],
        data: TensorData::F64(xs),
    })
}

// ---------------------------------------------------------------- hand-written

#[inline(never)]
fn hand_b1(x: f64, y: f64) -> (f64, f64) {
    let ly = y.ln();
    let lxy = (x * y).ln();
    (ly + y / x, x / y + lxy + 1.0)
}

fn hand_loop1(x: f64, y: f64, n: i64) -> f64 {
    let mut s = 0.0;
    for i in 0..n {
        let (gx, gy) = hand_b1(
            black_box(x + 1e-9 * (i as f64)),
            black_box(y + 1e-9 * (i as f64)),
        );
        s += gx + gy;
    }
    s
}

fn transpose(a: &[f64], n: usize) -> Vec<f64> {
    let mut t = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            t[j * n + i] = a[i * n + j];
        }
    }
    t
}

/// The gradient of `sum(X Y)` as whole matrices: `Z = X Y`, `s = sum(Z)`,
/// `G = 1`, `dX = G Yᵀ`, `dY = Xᵀ G` (three products, as mad's adjoint).
#[inline(never)]
fn hand_b2(x: &[f64], y: &[f64], n: usize) -> (f64, Vec<f64>, Vec<f64>) {
    let mut z = vec![0.0; n * n];
    matmul_f64(x, y, n, n, n, &mut z);
    let s = z.iter().fold(0.0, |a, b| a + b);
    let g = vec![1.0; n * n];
    let xt = transpose(x, n);
    let yt = transpose(y, n);
    let mut dx = vec![0.0; n * n];
    let mut dy = vec![0.0; n * n];
    matmul_f64(&xt, &g, n, n, n, &mut dy);
    matmul_f64(&g, &yt, n, n, n, &mut dx);
    (s, dx, dy)
}

/// B3 forward with a recorded trace, then the reverse sweep over it.
#[inline(never)]
fn hand_b3(x: &[f64], trace_s: &mut Vec<f64>, trace_i: &mut Vec<usize>, gx: &mut [f64]) -> f64 {
    trace_s.clear();
    trace_i.clear();
    let mut s = 0.0;
    let mut i = 0usize;
    while s < 1000.0 {
        trace_s.push(s);
        trace_i.push(i % 100);
        s += (x[i % 100] * 0.01).exp() * (1.0 + 0.1 * s.sin());
        i += 1;
    }
    gx.fill(0.0);
    let mut sb = 1.0;
    for k in (0..trace_s.len()).rev() {
        let (sk, ik) = (trace_s[k], trace_i[k]);
        let e = (x[ik] * 0.01).exp();
        gx[ik] += sb * (1.0 + 0.1 * sk.sin()) * e * 0.01;
        sb *= 1.0 + e * 0.1 * sk.cos();
    }
    s
}

/// B4's gradient with respect to `(a, b, sigma)`: one strict-order scalar loop.
#[inline(never)]
fn hand_b4(a: f64, b: f64, sigma: f64, x: &[f64], y: &[f64]) -> [f64; 3] {
    let (mut ga, mut gb, mut gs) = (0.0, 0.0, 0.0);
    for i in 0..x.len() {
        let r = (y[i] - (a + b * x[i])) / sigma;
        ga += r / sigma;
        gb += r * x[i] / sigma;
        gs += r * r / sigma - 1.0 / sigma;
    }
    [ga, gb, gs]
}

// ---------------------------------------------------------------- main

fn main() {
    let prog = Program::compile_str("ad_bench.mad", SRC).expect("benchmark program compiles");
    println!("| problem | how mad is called | mad `grad` | hand-written Rust | ratio |");
    println!("|---|---|---:|---:|---:|");

    // B1, direct call.
    let mut g1 = prog
        .jit()
        .raw_caller(prog.func_ref("g1").expect("g1"))
        .expect("direct call");
    let mut out = [0.0; 2];
    g1.call_f64(&[2.0, 3.0], &mut out).expect("runs");
    let want = hand_b1(2.0, 3.0);
    assert!(
        (out[0] - want.0).abs() < 1e-12 && (out[1] - want.1).abs() < 1e-12,
        "B1 gradients agree"
    );
    let calls = 1_000_000u64;
    let mad = median_ns(9, calls, || {
        let mut acc = 0.0;
        for i in 0..calls {
            g1.call_f64(
                &[
                    black_box(2.0 + 1e-9 * i as f64),
                    black_box(3.0 + 1e-9 * i as f64),
                ],
                &mut out,
            )
            .expect("runs");
            acc += out[0] + out[1];
        }
        black_box(acc);
    });
    let hand = median_ns(9, calls, || {
        black_box(hand_loop1(2.0, 3.0, calls as i64));
    });
    row(
        "B1",
        "direct call (`RawCaller::call_f64`) per gradient",
        mad,
        hand,
    );

    // B1, loop written in mad.
    let loop1 = prog
        .function::<(f64, f64, i64), f64>("loop1")
        .expect("loop1");
    let n = 5_000_000i64;
    let m = loop1.call((2.0, 3.0, n)).expect("runs");
    let h = hand_loop1(2.0, 3.0, n);
    assert!(
        (m - h).abs() <= 1e-9 * h.abs(),
        "B1 loops agree: {m} vs {h}"
    );
    let mad = median_ns(7, n as u64, || {
        black_box(loop1.call((2.0, 3.0, n)).expect("runs"));
    });
    let hand = median_ns(7, n as u64, || {
        black_box(hand_loop1(2.0, 3.0, n));
    });
    row("B1", "loop in mad, `grad(b1)` per trip", mad, hand);

    // B2.
    for nn in [2usize, 4, 8, 16, 32, 64] {
        let xs: Vec<f64> = (0..nn * nn).map(|k| (0.3 * k as f64).sin()).collect();
        let ys: Vec<f64> = (0..nn * nn).map(|k| (0.7 * k as f64 + 0.2).cos()).collect();
        let trips = ((4_000_000 / (nn * nn * nn)).clamp(20, 20_000)) as i64;
        let args = |t: i64| {
            vec![
                matrix(nn, xs.clone()),
                matrix(nn, ys.clone()),
                Value::I64(t),
            ]
        };
        let m = f64_of(&prog.call("loop2", &args(1)).expect("runs"));
        let (_, dx, dy) = hand_b2(&xs, &ys, nn);
        assert!((m - (dx[0] + dy[0])).abs() < 1e-9, "B2 gradients agree");
        let overhead = median_ns(7, 1, || {
            black_box(prog.call("loop2", &args(0)).expect("runs"));
        });
        let a = args(trips);
        let mad = median_ns(7, 1, || {
            black_box(prog.call("loop2", &a).expect("runs"));
        });
        let mad = ((mad - overhead) / trips as f64).max(0.0);
        let hand = median_ns(7, trips as u64, || {
            let mut s = 0.0;
            for _ in 0..trips {
                let (_, dx, dy) = hand_b2(black_box(&xs), black_box(&ys), nn);
                s += dx[0] + dy[0];
            }
            black_box(s);
        });
        row(
            &format!("B2 N={nn}"),
            "loop in mad, `grad(b2)` per trip",
            mad,
            hand,
        );
    }

    // B3: picked up as soon as reverse mode passes the `while` loop.
    let x3: Vec<f64> = (0..100).map(|k| (0.37 * k as f64).sin()).collect();
    let (mut ts, mut ti, mut gx) = (Vec::new(), Vec::new(), vec![0.0; 100]);
    // Timed as mad's side is: one run of `trips` gradients, median of 7.
    let trips = 200i64;
    let hand = median_ns(7, trips as u64, || {
        for _ in 0..trips {
            black_box(hand_b3(black_box(&x3), &mut ts, &mut ti, &mut gx));
        }
    });
    match Program::compile_str("ad_bench_b3.mad", SRC_B3) {
        Ok(p3) => {
            let args = |t: i64| vec![vector(x3.clone()), Value::I64(t)];
            let m = f64_of(&p3.call("loop3", &args(1)).expect("runs"));
            assert!(
                (m - gx[0]).abs() < 1e-9 * gx[0].abs().max(1.0),
                "B3 gradients agree: {m} vs {}",
                gx[0]
            );
            let overhead = median_ns(7, 1, || {
                black_box(p3.call("loop3", &args(0)).expect("runs"));
            });
            let a = args(trips);
            let mad = median_ns(7, 1, || {
                black_box(p3.call("loop3", &a).expect("runs"));
            });
            row(
                "B3",
                "loop in mad, `grad(b3)` per trip",
                ((mad - overhead) / trips as f64).max(0.0),
                hand,
            );
        }
        Err(_) => println!(
            "| B3 | n/a (needs the tape) | n/a | {} | n/a |",
            fmt_ns(hand)
        ),
    }

    // B4.
    for nn in [10usize, 100, 1000, 10_000] {
        let xs: Vec<f64> = (0..nn).map(|k| k as f64 / nn as f64).collect();
        let ys: Vec<f64> = xs
            .iter()
            .enumerate()
            .map(|(k, x)| 1.0 + 2.0 * x + 0.1 * (1.3 * k as f64).sin())
            .collect();
        let (a, b, sigma) = (0.9, 2.1, 0.3);
        let trips = ((2_000_000 / nn).clamp(20, 200_000)) as i64;
        let args = |t: i64| {
            vec![
                Value::F64(a),
                Value::F64(b),
                Value::F64(sigma),
                vector(xs.clone()),
                vector(ys.clone()),
                Value::I64(t),
            ]
        };
        let m = f64_of(&prog.call("loop4", &args(1)).expect("runs"));
        let h = hand_b4(a, b, sigma, &xs, &ys);
        let hs = h[0] + h[1] + h[2];
        assert!(
            (m - hs).abs() < 1e-9 * hs.abs().max(1.0),
            "B4 gradients agree: {m} vs {hs}"
        );
        let overhead = median_ns(7, 1, || {
            black_box(prog.call("loop4", &args(0)).expect("runs"));
        });
        let aa = args(trips);
        let mad = median_ns(7, 1, || {
            black_box(prog.call("loop4", &aa).expect("runs"));
        });
        let mad = ((mad - overhead) / trips as f64).max(0.0);
        let hand = median_ns(7, trips as u64, || {
            let mut s = 0.0;
            for t in 0..trips {
                let g = hand_b4(
                    black_box(a + 1e-9 * t as f64),
                    b,
                    black_box(sigma + 1e-12 * t as f64),
                    black_box(&xs),
                    black_box(&ys),
                );
                s += g[0] + g[1] + g[2];
            }
            black_box(s);
        });
        row(
            &format!("B4 N={nn}"),
            "loop in mad, `grad(ll, 0)` per trip",
            mad,
            hand,
        );
    }
    println!();
    println!(
        "`loop in mad`: one API call runs n gradients inside compiled code; the time per gradient is (time of the call with n trips − time with 0 trips) / n."
    );
}
