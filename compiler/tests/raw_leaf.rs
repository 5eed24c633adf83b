//! Functions that call no compiled function (leaves) have entries without the
//! call depth, and their register entries are called without a stack limit.
//! Errors inside a leaf must still be reported as before (same error, same
//! source location, a clean next call), and recursion past the limits must
//! still be caught in the functions that do call, also when they call leaves.

use mad::{Engine, Error, Program, RtError, Value};

const SRC: &str = "
fn pick(x: f64) -> f64 {
    let v = vec3(1.0, 2.0, 4.0);
    let mut s = 0.0;
    for i in 0..(x as i64) {
        s += v[i];
    }
    s
}
fn walk(x: f64) -> f64 {
    let v = vec2(0.5, 0.25);
    let mut i = 0;
    let mut s = 0.0;
    while s < x {
        s += v[i];
        i += 1;
    }
    s
}
fn quot(x: f64, y: f64) -> (f64, f64) {
    let n = x as i64;
    let d = y as i64;
    ((n / d) as f64, x * log(y))
}
fn leaf(x: f64) -> f64 { x * log(x + 2.0) - sqrt(x * x + 1.0) }
fn heapy(x: f64, k: f64) -> f64 {
    let m = ones(2, 3) * x;
    let v = vec2(1.0, 2.0);
    m[1, 2] + v[k as i64]
}
fn grow(x: f64) -> f64 {
    let mut s = x;
    while s < 100.0 {
        s = s * 1.5 + 1.0;
    }
    s
}
fn ggrow(x: f64) -> f64 { grad(grow)(x) }
fn rec(x: f64, n: f64) -> f64 {
    if n <= 0.0 { leaf(x) } else { leaf(x + n) + rec(x, n - 1.0) }
}
";

fn leaf_ref(x: f64) -> f64 {
    x * (x + 2.0).ln() - (x * x + 1.0).sqrt()
}

fn rec_ref(x: f64, n: f64) -> f64 {
    if n <= 0.0 { leaf_ref(x) } else { leaf_ref(x + n) + rec_ref(x, n - 1.0) }
}

fn prog() -> Program {
    Program::compile_str("leaf.mad", SRC).expect("compiles")
}

/// Calls `name` through its register entry and through the slot buffers,
/// checking that both give the same outcome, and returns it.
fn both_ways(p: &Program, name: &str, args: &[f64], n_results: usize) -> Result<Vec<f64>, RtError> {
    let mut c = p.jit().raw_caller(p.func_ref(name).unwrap()).unwrap();
    assert!(c.in_registers(), "`{name}` takes the register entry");
    let mut r = vec![0.0; n_results];
    let reg = c.call_f64(args, &mut r).map(|()| r.clone());
    let slots: Vec<u64> = args.iter().map(|a| a.to_bits()).collect();
    let mut m = vec![0u64; n_results];
    let slot = c.call(&slots, &mut m).map(|()| m.iter().map(|b| f64::from_bits(*b)).collect::<Vec<_>>());
    assert_eq!(reg, slot, "`{name}{args:?}`: register and slot calls agree");
    reg
}

#[test]
fn index_errors_in_a_leaf_are_reported_and_the_next_call_is_clean() {
    let p = prog();
    let mut c = p.jit().raw_caller(p.func_ref("pick").unwrap()).unwrap();
    let mut r = [0.0];
    for _ in 0..3 {
        assert_eq!(c.call_f64(&[5.0], &mut r), Err(RtError::IndexOutOfBounds { index: 3, len: 3 }));
        c.call_f64(&[3.0], &mut r).unwrap();
        assert_eq!(r, [7.0]);
        c.call_f64(&[2.0], &mut r).unwrap();
        assert_eq!(r, [3.0]);
    }
    assert_eq!(both_ways(&p, "pick", &[4.0], 1), Err(RtError::IndexOutOfBounds { index: 3, len: 3 }));
    // A `while` loop in a leaf stops at the error.
    assert_eq!(both_ways(&p, "walk", &[0.7], 1), Ok(vec![0.75]));
    assert_eq!(both_ways(&p, "walk", &[1.0], 1), Err(RtError::IndexOutOfBounds { index: 2, len: 2 }));
    assert_eq!(both_ways(&p, "walk", &[0.5], 1), Ok(vec![0.5]));
}

#[test]
fn routine_errors_in_a_leaf_are_reported_and_the_next_call_is_clean() {
    let p = prog();
    assert_eq!(both_ways(&p, "quot", &[7.0, 0.0], 2), Err(RtError::DivByZero));
    assert_eq!(both_ways(&p, "quot", &[7.0, 2.0], 2), Ok(vec![3.0, 7.0 * 2.0f64.ln()]));
    let mut c = p.jit().raw_caller(p.func_ref("quot").unwrap()).unwrap();
    let mut r = [0.0; 2];
    for _ in 0..3 {
        assert_eq!(c.call_f64(&[1.0, 0.5], &mut r), Err(RtError::DivByZero));
        c.call_f64(&[-9.0, 4.0], &mut r).unwrap();
        assert_eq!(r, [-2.0, -9.0 * 4.0f64.ln()]);
    }
}

#[test]
fn errors_in_a_leaf_keep_their_source_location() {
    let p = prog();
    let cases: [(&str, Vec<Value>); 3] = [
        ("pick", vec![Value::F64(4.0)]),
        ("walk", vec![Value::F64(2.0)]),
        ("quot", vec![Value::F64(1.0), Value::F64(0.0)]),
    ];
    for (name, args) in cases {
        let mut sink = Vec::new();
        let jit = p.call_with(Engine::Jit, name, &args, &mut sink);
        let int = p.call_with(Engine::Interpreter, name, &args, &mut sink);
        match (jit, int) {
            (Err(Error::Runtime { error: ej, at: Some(aj) }), Err(Error::Runtime { error: ei, at: Some(ai) })) => {
                assert_eq!(ej, ei, "{name}");
                assert_eq!((aj.line, aj.column), (ai.line, ai.column), "{name}");
            }
            other => panic!("{name}: expected run-time errors with locations, got {other:?}"),
        }
    }
}

#[test]
fn leaves_called_from_recursion_and_recursion_limits() {
    let p = prog();
    for x in [0.0, 0.5, 3.0] {
        let got = both_ways(&p, "leaf", &[x], 1).unwrap();
        assert_eq!(got, [leaf_ref(x)], "leaf({x})");
        let got = both_ways(&p, "rec", &[x, 40.0], 1).unwrap();
        assert!((got[0] - rec_ref(x, 40.0)).abs() < 1e-9 * rec_ref(x, 40.0).abs(), "rec({x}, 40)");
    }
    // Recursion past the direct call's stack budget is still caught, and a
    // leaf and the recursive function work afterwards.
    let mut rec = p.jit().raw_caller(p.func_ref("rec").unwrap()).unwrap();
    let mut leaf = p.jit().raw_caller(p.func_ref("leaf").unwrap()).unwrap();
    let mut r = [0.0];
    for _ in 0..2 {
        assert_eq!(rec.call_f64(&[1.0, 1e7], &mut r), Err(RtError::RecursionLimit));
        leaf.call_f64(&[1.0], &mut r).unwrap();
        assert_eq!(r, [leaf_ref(1.0)]);
        rec.call_f64(&[1.0, 10.0], &mut r).unwrap();
        assert!((r[0] - rec_ref(1.0, 10.0)).abs() < 1e-9 * rec_ref(1.0, 10.0).abs());
    }
    // On the JIT thread's large stack the depth limit is what stops it.
    let mut sink = Vec::new();
    let deep = p.call_with(Engine::Jit, "rec", &[Value::F64(1.0), Value::F64(20_000.0)], &mut sink);
    assert!(matches!(deep, Err(Error::Runtime { error: RtError::RecursionLimit, .. })), "{deep:?}");
    let fine = p.call_with(Engine::Jit, "rec", &[Value::F64(1.0), Value::F64(5_000.0)], &mut sink).unwrap();
    let Value::F64(v) = fine else { panic!("rec returns f64, got {fine:?}") };
    assert!((v - rec_ref(1.0, 5_000.0)).abs() < 1e-9 * v.abs());
}

fn ggrow_ref(x: f64) -> f64 {
    let (mut s, mut d) = (x, 1.0);
    while s < 100.0 {
        s = s * 1.5 + 1.0;
        d *= 1.5;
    }
    d
}

#[test]
fn leaves_with_heap_tensors_or_the_tape_repeat_and_recover() {
    let p = prog();
    let mut h = p.jit().raw_caller(p.func_ref("heapy").unwrap()).unwrap();
    let mut g = p.jit().raw_caller(p.func_ref("ggrow").unwrap()).unwrap();
    let mut r = [0.0];
    for i in 0..2000 {
        let x = 0.5 + i as f64 * 0.01;
        h.call_f64(&[x, (i % 2) as f64], &mut r).unwrap();
        assert_eq!(r, [x + (1 + i % 2) as f64]);
        g.call_f64(&[x], &mut r).unwrap();
        assert_eq!(r, [ggrow_ref(x)], "grad(grow)({x})");
        if i % 500 == 0 {
            assert_eq!(h.call_f64(&[x, 2.0], &mut r), Err(RtError::IndexOutOfBounds { index: 2, len: 2 }));
        }
    }
    assert_eq!(both_ways(&p, "heapy", &[2.0, 1.0], 1), Ok(vec![4.0]));
    assert_eq!(both_ways(&p, "ggrow", &[3.0], 1), Ok(vec![ggrow_ref(3.0)]));
}
