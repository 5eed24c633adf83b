//! Direct calls of small all-`f64` functions pass arguments and results in
//! registers (`RawCaller::call_f64`); they must give the same bits as the
//! slot-buffer call (`RawCaller::call`) and as hand-written Rust, and report
//! errors the same way.

use mad::Program;

fn src() -> String {
    let mut s = String::from(
        "
fn c0() -> f64 { 2.5 }
fn c1(x: f64) -> f64 { x * log(x) }
fn c2(x: f64, y: f64) -> f64 { x * log(y) + log(x * y) * y }
fn c3(x: f64, y: f64, z: f64) -> f64 { x * y - z / y }
fn c4(x: f64, y: f64, z: f64, w: f64) -> f64 { (x - y) * (z + w) }
fn p0() -> (f64, f64) { (1.0, -2.0) }
fn p1(x: f64) -> (f64, f64) { (sqrt(x), x * x) }
fn g2(x: f64, y: f64) -> (f64, f64) { grad(c2)(x, y) }
fn s2(x: f64, y: f64) -> f64 { x * log(y) }
fn gs(x: f64, y: f64) -> (f64, f64) { grad(s2)(x, y) }
fn p3(x: f64, y: f64, z: f64) -> (f64, f64) { (x + y, y * z) }
fn p4(v: vec2, a: f64, b: f64) -> vec2 { v * a + vec2(b, -b) }
fn five(a: f64, b: f64, c: f64, d: f64, e: f64) -> f64 { a + b + c + d + e }
fn three() -> vec3 { vec3(1.0, 2.0, 3.0) }
fn idx(x: f64) -> f64 { let v = vec3(1.0, 2.0, 3.0); v[x as i64] }
fn rec(x: f64) -> f64 { if x <= 0.0 { 0.0 } else { 1.0 + rec(x - 1.0) } }
fn shout(x: f64) -> f64 { print(x); x + 1.0 }
",
    );
    // A function too large to be inlined into its entries.
    s.push_str("fn big(x: f64, y: f64) -> (f64, f64) {\n  let mut s = x;\n  let mut t = y;\n");
    for i in 0..200 {
        s.push_str(&format!("  s = s * 0.5 + t * {}.0;\n  t = t - s * 0.25;\n", i % 7));
    }
    s.push_str("  (s, t)\n}\n");
    s
}

fn big_reference(x: f64, y: f64) -> (f64, f64) {
    let (mut s, mut t) = (x, y);
    for i in 0..200 {
        s = s * 0.5 + t * (i % 7) as f64;
        t -= s * 0.25;
    }
    (s, t)
}

/// Calls `name` both ways and returns the register call's results, checking
/// that it took the register entry and agrees bit for bit with the slot call.
fn both_ways(prog: &Program, name: &str, args: &[f64], n_results: usize) -> Vec<f64> {
    let mut c = prog.jit().raw_caller(prog.func_ref(name).unwrap()).unwrap();
    assert!(c.in_registers(), "`{name}` takes the register entry");
    let mut r = vec![0.0; n_results];
    c.call_f64(args, &mut r).unwrap();
    let slots: Vec<u64> = args.iter().map(|a| a.to_bits()).collect();
    let mut m = vec![0u64; n_results];
    c.call(&slots, &mut m).unwrap();
    let rb: Vec<u64> = r.iter().map(|v| v.to_bits()).collect();
    assert_eq!(rb, m, "`{name}{args:?}`: register and slot calls agree");
    r
}

#[test]
fn register_calls_agree_with_slot_calls_and_rust() {
    let prog = Program::compile_str("regs.mad", &src()).unwrap();
    assert_eq!(both_ways(&prog, "c0", &[], 1), [2.5]);
    assert_eq!(both_ways(&prog, "c1", &[3.0], 1), [3.0 * 3.0f64.ln()]);
    let (x, y) = (2.0f64, 3.0f64);
    assert_eq!(both_ways(&prog, "c2", &[x, y], 1), [x * y.ln() + (x * y).ln() * y]);
    assert_eq!(both_ways(&prog, "c3", &[1.5, 4.0, 2.0], 1), [1.5 * 4.0 - 2.0 / 4.0]);
    assert_eq!(both_ways(&prog, "c4", &[1.0, 2.0, 3.0, 4.0], 1), [-7.0]);
    assert_eq!(both_ways(&prog, "p0", &[], 2), [1.0, -2.0]);
    assert_eq!(both_ways(&prog, "p1", &[2.0], 2), [2.0f64.sqrt(), 4.0]);
    let g = both_ways(&prog, "g2", &[x, y], 2);
    assert!((g[0] - (y.ln() + y / x)).abs() < 1e-14 && (g[1] - (x / y + (x * y).ln() + 1.0)).abs() < 1e-14);
    assert_eq!(both_ways(&prog, "p3", &[1.0, 2.0, 3.0], 2), [3.0, 6.0]);
    assert_eq!(both_ways(&prog, "p4", &[1.0, 2.0, 3.0, 0.5], 2), [3.5, 5.5]);
    for (x, y) in [(0.5, -1.0), (3.0, 2.0), (-1e3, 1e-3)] {
        let want = big_reference(x, y);
        assert_eq!(both_ways(&prog, "big", &[x, y], 2), [want.0, want.1]);
    }
}

#[test]
fn strong_zeros_survive_the_register_entry() {
    let prog = Program::compile_str("regs.mad", &src()).unwrap();
    // d/dy x*log(y) = x * (1/y) with a strong zero: 0 where x is 0, even at y = 0.
    let cases = [
        ((0.0, 0.0), (f64::NEG_INFINITY, 0.0)),
        ((-0.0, 0.0), (f64::NEG_INFINITY, 0.0)),
        ((0.0, 2.0), (2.0f64.ln(), 0.0)),
        ((3.0, 0.0), (f64::NEG_INFINITY, f64::INFINITY)),
        ((3.0, 2.0), (2.0f64.ln(), 1.5)),
    ];
    for ((x, y), want) in cases {
        assert_eq!(both_ways(&prog, "gs", &[x, y], 2), [want.0, want.1], "grad at ({x}, {y})");
    }
    // A NaN adjoint is not zero: the derivative stays NaN.
    for y in [2.0, 0.0] {
        let g = both_ways(&prog, "gs", &[f64::NAN, y], 2);
        assert_eq!(g[0], y.ln(), "d/dx at (NaN, {y})");
        assert!(g[1].is_nan(), "d/dy at (NaN, {y}) is NaN, got {}", g[1]);
    }
    // The adjoint of log(x*y) in c2 is y: at y = 0 its 1/(x*y) = inf must not
    // make d/dx NaN (d/dx = log(y) + 0).
    let g = both_ways(&prog, "g2", &[2.0, 0.0], 2);
    assert_eq!(g[0], f64::NEG_INFINITY);
}

#[test]
fn other_signatures_keep_the_slot_call() {
    let prog = Program::compile_str("regs.mad", &src()).unwrap();
    for name in ["five", "three"] {
        let c = prog.jit().raw_caller(prog.func_ref(name).unwrap()).unwrap();
        assert!(!c.in_registers(), "`{name}` has no register entry");
    }
    let mut five = prog.jit().raw_caller(prog.func_ref("five").unwrap()).unwrap();
    let mut r = [0.0];
    five.call_f64(&[1.0, 2.0, 3.0, 4.0, 5.0], &mut r).unwrap();
    assert_eq!(r, [15.0]);
    let mut three = prog.jit().raw_caller(prog.func_ref("three").unwrap()).unwrap();
    let mut r3 = [0.0; 3];
    three.call_f64(&[], &mut r3).unwrap();
    assert_eq!(r3, [1.0, 2.0, 3.0]);
}

#[test]
fn register_calls_report_errors_and_recover() {
    let prog = Program::compile_str("regs.mad", &src()).unwrap();
    let mut idx = prog.jit().raw_caller(prog.func_ref("idx").unwrap()).unwrap();
    assert!(idx.in_registers());
    let mut r = [0.0];
    assert_eq!(idx.call_f64(&[3.0], &mut r), Err(mad::RtError::IndexOutOfBounds { index: 3, len: 3 }));
    idx.call_f64(&[2.0], &mut r).unwrap();
    assert_eq!(r, [3.0]);
    // Deep recursion past the stack budget is an error, not a crash, and the
    // caller works again afterwards.
    let mut rec = prog.jit().raw_caller(prog.func_ref("rec").unwrap()).unwrap();
    assert!(rec.in_registers());
    assert_eq!(rec.call_f64(&[1e7], &mut r), Err(mad::RtError::RecursionLimit));
    rec.call_f64(&[100.0], &mut r).unwrap();
    assert_eq!(r, [100.0]);
    // Wrong slot counts are errors (through the slot call's check).
    assert!(rec.call_f64(&[1.0, 2.0], &mut r).is_err());
    let mut none: [f64; 0] = [];
    assert!(rec.call_f64(&[1.0], &mut none).is_err());
    // Output is kept for `take_output`.
    let mut shout = prog.jit().raw_caller(prog.func_ref("shout").unwrap()).unwrap();
    shout.call_f64(&[1.5], &mut r).unwrap();
    assert_eq!(r, [2.5]);
    assert_eq!(String::from_utf8(shout.take_output()).unwrap().trim(), "1.5");
}

#[test]
fn longer_result_buffers_take_the_register_entry_and_keep_their_tail() {
    let prog = Program::compile_str("regs.mad", &src()).unwrap();
    let (x, y) = (2.0f64, 3.0f64);
    let mut c2 = prog.jit().raw_caller(prog.func_ref("c2").unwrap()).unwrap();
    let mut r = [7.0; 3];
    c2.call_f64(&[x, y], &mut r).unwrap();
    assert_eq!(r, [x * y.ln() + (x * y).ln() * y, 7.0, 7.0]);
    let mut p3 = prog.jit().raw_caller(prog.func_ref("p3").unwrap()).unwrap();
    let mut r = [7.0; 4];
    p3.call_f64(&[1.0, 2.0, 3.0], &mut r).unwrap();
    assert_eq!(r, [3.0, 6.0, 7.0, 7.0]);
    // Too few arguments or no room for the results: an error, then a good call.
    assert!(p3.call_f64(&[1.0, 2.0], &mut r).is_err());
    assert!(p3.call_f64(&[1.0, 2.0, 3.0], &mut r[..1]).is_err());
    p3.call_f64(&[2.0, 2.0, 2.0], &mut r).unwrap();
    assert_eq!(r[..2], [4.0, 4.0]);
}
