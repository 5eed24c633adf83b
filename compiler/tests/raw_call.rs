//! Direct calls on the calling thread agree with the checked API and report
//! errors instead of crashing.

use mad::Program;

const SRC: &str = "
fn b1(x: f64, y: f64) -> f64 { x*log(y) + log(x*y)*y }
fn both(x: f64, y: f64) -> (f64, f64) { grad(b1)(x, y) }
fn rot(v: vec2, a: f64) -> vec2 { mat2(cos(a), -sin(a), sin(a), cos(a)) * v }
fn deep(n: i64) -> i64 { if n == 0 { 0 } else { 1 + deep(n - 1) } }
fn idx(i: i64) -> f64 { let v = vec3(1.0, 2.0, 3.0); v[i] }
fn dynamic(v: vector) -> f64 { v[0] }
fn orbit(x: f64, y: f64) -> f64 { let mut s = x; while s < 10.0 { s = s * y + x * 0.5; } s }
fn dorbit(x: f64, y: f64) -> (f64, f64) { grad(orbit)(x, y) }
";

#[test]
fn direct_calls_match_checked_calls() {
    let prog = Program::compile_str("raw.mad", SRC).unwrap();
    let mut b1 = prog.jit().raw_caller(prog.func_ref("b1").unwrap()).unwrap();
    let checked = prog.function::<(f64, f64), f64>("b1").unwrap();
    for (x, y) in [(2.0, 3.0), (0.5, 7.25), (1e-3, 1e3)] {
        let mut out = [0.0];
        b1.call_f64(&[x, y], &mut out).unwrap();
        assert_eq!(out[0].to_bits(), checked.call((x, y)).unwrap().to_bits());
    }
    let mut both = prog
        .jit()
        .raw_caller(prog.func_ref("both").unwrap())
        .unwrap();
    assert_eq!((both.arg_slots(), both.result_slots()), (2, 2));
    let mut g = [0.0; 2];
    both.call_f64(&[2.0, 3.0], &mut g).unwrap();
    assert!((g[0] - (3.0f64.ln() + 1.5)).abs() < 1e-14);
    let mut rot = prog
        .jit()
        .raw_caller(prog.func_ref("rot").unwrap())
        .unwrap();
    let mut r = [0.0; 2];
    rot.call_f64(&[1.0, 0.0, std::f64::consts::FRAC_PI_2], &mut r)
        .unwrap();
    assert!(r[0].abs() < 1e-15 && (r[1] - 1.0).abs() < 1e-15);
}

#[test]
fn direct_calls_report_errors() {
    let prog = Program::compile_str("raw.mad", SRC).unwrap();
    let mut idx = prog
        .jit()
        .raw_caller(prog.func_ref("idx").unwrap())
        .unwrap();
    let mut out = [0u64];
    assert!(idx.call(&[7], &mut out).is_err());
    idx.call(&[2], &mut out).unwrap();
    assert_eq!(f64::from_bits(out[0]), 3.0);
    // deep recursion past the budget is an error, not a crash
    let mut deep = prog
        .jit()
        .raw_caller(prog.func_ref("deep").unwrap())
        .unwrap();
    assert_eq!(
        deep.call(&[1_000_000], &mut out),
        Err(mad::RtError::RecursionLimit)
    );
    deep.call(&[100], &mut out).unwrap();
    assert_eq!(out[0], 100);
    // wrong slot counts and heap signatures are errors
    assert!(deep.call(&[1, 2], &mut out).is_err());
    assert!(
        prog.jit()
            .raw_caller(prog.func_ref("dynamic").unwrap())
            .is_err()
    );
}

#[test]
fn direct_calls_through_the_tape_repeat_and_recover_from_errors() {
    let prog = Program::compile_str("raw.mad", SRC).unwrap();
    let mut d = prog.jit().raw_caller(prog.func_ref("dorbit").unwrap()).unwrap();
    let checked = prog.function::<(f64, f64), (f64, f64)>("dorbit").unwrap();
    let mut idx = prog.jit().raw_caller(prog.func_ref("idx").unwrap()).unwrap();
    for (x, y) in [(1.5, 1.25), (0.5, 2.0), (2.0, 1.1), (1.5, 1.25)] {
        let want = checked.call((x, y)).unwrap();
        // Central differences of the primal as an independent reference.
        let f = |x: f64, y: f64| {
            let mut s = x;
            while s < 10.0 {
                s = s * y + x * 0.5;
            }
            s
        };
        let h = 1e-6;
        let fx = (f(x + h, y) - f(x - h, y)) / (2.0 * h);
        let fy = (f(x, y + h) - f(x, y - h)) / (2.0 * h);
        for _ in 0..3 {
            let mut g = [0.0; 2];
            d.call_f64(&[x, y], &mut g).unwrap();
            assert_eq!((g[0].to_bits(), g[1].to_bits()), (want.0.to_bits(), want.1.to_bits()));
            assert!((g[0] - fx).abs() < 1e-5 * fx.abs().max(1.0) && (g[1] - fy).abs() < 1e-5 * fy.abs().max(1.0));
            let mut out = [0u64];
            assert_eq!(idx.call(&[3], &mut out), Err(mad::RtError::IndexOutOfBounds { index: 3, len: 3 }));
        }
    }
}
