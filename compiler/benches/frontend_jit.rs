//! Front-end + JIT speed: compile time of a generated 5,000-line program, and a
//! numeric loop (`sum of exp(sin(x[i]))` over 10^7 elements) JIT-compiled versus
//! the same loop in Rust built with `--release`.
//!
//! Run: `cargo bench -p mad --bench frontend_jit`. Prints a Markdown table.

use mad::Program;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// A program of about `lines` lines: many small functions with loops, branches
/// and vector math, each calling the previous one.
fn generated_source(lines: usize) -> String {
    let mut s = String::new();
    let per_fn = 10;
    let count = lines / per_fn;
    s.push_str("fn f0(x: f64) -> f64 { x }\n");
    for i in 1..count {
        s.push_str(&format!(
            "fn f{i}(x: f64) -> f64 {{\n    let v = vec3(x, x * 2.0, x + {i}.0);\n    let mut acc = dot(v, v);\n    for k in 0..3 {{\n        acc += sin(x * (k as f64)) * {i}.5;\n    }}\n    if acc > 10.0 {{ acc = sqrt(acc); }} else {{ acc = acc * 0.5; }}\n    let w = normalize(v) * acc;\n    f{p}(w.x + w.y - w.z)\n}}\n",
            p = i - 1
        ));
    }
    s.push_str(&format!("fn main() {{ print(f{}(0.5)); }}\n", count - 1));
    s
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time<F: FnMut()>(runs: usize, mut f: F) -> Duration {
    f();
    median(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

/// Passes over the array per call, so that passing the argument in is amortized.
const REPS: i64 = 5;

const LOOP_SRC: &str = "
fn sum_exp_sin(x: [f64], reps: i64) -> f64 {
    let mut s = 0.0;
    for r in 0..reps {
        for i in 0..len(x) {
            s += exp(sin(x[i]));
        }
    }
    s
}
";

#[inline(never)]
fn rust_sum_exp_sin(x: &[f64], reps: i64) -> f64 {
    let mut s = 0.0;
    for _ in 0..reps {
        for &v in x {
            s += v.sin().exp();
        }
    }
    s
}

fn main() {
    let src = generated_source(5000);
    let lines = src.lines().count();
    let compile = time(5, || {
        black_box(Program::compile_str("gen.mad", &src).expect("generated program compiles"));
    });

    let n = 10_000_000;
    let x: Vec<f64> = (0..n).map(|i| (i as f64) * 1e-6).collect();
    let prog = Program::compile_str("loop.mad", LOOP_SRC).expect("loop program compiles");
    let f = prog
        .function::<(Vec<f64>, i64), f64>("sum_exp_sin")
        .expect("signature");
    let mut jit_result = 0.0;
    let jit = time(5, || {
        jit_result = f.call((black_box(x.clone()), REPS)).expect("runs")
    });
    let mut rust_result = 0.0;
    let rust = time(5, || rust_result = rust_sum_exp_sin(black_box(&x), REPS));
    assert!(
        (jit_result - rust_result).abs() <= 1e-9 * rust_result.abs(),
        "{jit_result} vs {rust_result}"
    );

    let per_pass = |d: Duration| d.as_secs_f64() * 1e3 / REPS as f64;
    println!("| benchmark | value |");
    println!("|---|---:|");
    println!(
        "| front end + JIT compile, generated {lines}-line file | {:.1} ms |",
        compile.as_secs_f64() * 1e3
    );
    println!(
        "| sum exp(sin(x[i])) over 10^7 elements, JIT, per pass (call of {REPS} passes incl. argument passing) | {:.1} ms |",
        per_pass(jit)
    );
    println!(
        "| same loop, Rust --release, per pass | {:.1} ms |",
        per_pass(rust)
    );
    println!(
        "| ratio JIT / Rust | {:.2}x |",
        jit.as_secs_f64() / rust.as_secs_f64()
    );
}
