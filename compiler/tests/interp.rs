//! The reference interpreter, checked against values computed by plain Rust in
//! the tests (never by the interpreter's own helpers).

use std::path::PathBuf;

use mad::back::interp::{self, DEFAULT_MAX_CALL_DEPTH, Interpreter};
use mad::ir::parse::parse_module;
use mad::ir::validate::validate_module;
use mad::ir::{BinaryOp, Builder, Function, Literal, Module, OpKind, Type};
use mad_runtime::{RtError, Tensor, TensorData, Value};

fn module(text: &str) -> Module {
    let m = parse_module(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    if let Err(errs) = validate_module(&m) {
        panic!(
            "{}",
            errs.iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    m
}

fn corpus(name: &str) -> Module {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/ir")
        .join(name);
    module(&std::fs::read_to_string(path).expect("corpus file"))
}

fn run(m: &Module, name: &str, args: &[Value]) -> Result<Value, RtError> {
    interp::call(
        m,
        m.find(name).expect("function exists"),
        args,
        &mut std::io::sink(),
    )
}

fn run_ok(m: &Module, name: &str, args: &[Value]) -> Value {
    run(m, name, args).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn f64s(shape: &[usize], data: Vec<f64>) -> Value {
    Value::Tensor(Tensor::from_f64(shape.to_vec(), data).expect("shape matches"))
}

#[test]
fn scalar_arithmetic_matches_rust() {
    let m = corpus("scalars.ir");
    for (x, y) in [(0.3, 0.7), (1.5, -2.25), (-0.1, 3.0)] {
        let two = 2.0f64;
        let a = x + y;
        let b = a - two;
        let c = b * x;
        let d = c / y;
        let e = d % two;
        let f = e.powf(two);
        let g = f.atan2(x);
        let h = g.min(y);
        let i = h.max(x);
        let j = -i;
        let k = j.abs();
        let l = k.sqrt();
        let mm = l.exp();
        let n = mm.ln();
        let o = n.sin();
        let p = o.cos();
        let q = p.tan();
        let r = q.asin();
        let s = r.acos();
        let t = s.atan();
        let u = t.sinh();
        let v = u.cosh();
        let w = v.tanh();
        let expected = w.floor().ceil();
        let got = run_ok(&m, "arith", &[Value::F64(x), Value::F64(y)]);
        match got {
            Value::F64(g) => assert_eq!(g.to_bits(), expected.to_bits(), "arith({x}, {y})"),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn comparisons_and_logic_match_rust() {
    let m = corpus("scalars.ir");
    for x in -2i64..=2 {
        for y in -2i64..=2 {
            let (lt, le, gt, ge, eq, ne) = (x < y, x <= y, x > y, x >= y, x == y, x != y);
            let n = !((lt && le) || gt);
            let s = if ge { n } else { eq };
            let expected = s != ne;
            assert_eq!(
                run_ok(&m, "logic", &[Value::I64(x), Value::I64(y)]),
                Value::Bool(expected),
                "logic({x}, {y})"
            );
        }
    }
}

#[test]
fn literals_and_casts() {
    let m = corpus("scalars.ir");
    let Value::Tuple(items) = run_ok(&m, "literals", &[]) else {
        panic!("tuple")
    };
    assert_eq!(items[0], Value::F64(0.1));
    assert_eq!(items[1], Value::F32(1.5));
    assert_eq!(items[2], Value::I64(-42));
    assert_eq!(items[3], Value::Bool(true));
    assert_eq!(items[4], Value::F64(f64::INFINITY));
    assert_eq!(items[5], Value::F64(f64::NEG_INFINITY));
    assert!(matches!(items[6], Value::F64(x) if x.is_nan()));
    assert_eq!(items[7], Value::F32(1e-7));
    for (x, b) in [
        (2.9, true),
        (-2.9, false),
        (f64::NAN, true),
        (1e300, false),
        (-1e300, true),
        (0.1, false),
    ] {
        let expected = Value::Tuple(vec![
            Value::I64(x as i64),
            Value::F32(x as f32),
            Value::F64((x as f32) as f64),
            Value::I64(b as i64),
        ]);
        let got = run_ok(&m, "casts", &[Value::F64(x), Value::Bool(b)]);
        if x.is_nan() {
            let Value::Tuple(g) = got else {
                panic!("tuple")
            };
            assert_eq!(g[0], Value::I64(0));
            assert_eq!(g[3], Value::I64(1));
        } else {
            assert_eq!(got, expected, "casts({x})");
        }
    }
}

#[test]
fn tuples_and_print() {
    let m = corpus("scalars.ir");
    let mut out = Vec::new();
    let v = interp::call(
        &m,
        m.find("tuples").expect("tuples"),
        &[Value::F64(1.0), Value::I64(7)],
        &mut out,
    );
    assert_eq!(v, Ok(Value::I64(7)));
    assert_eq!(String::from_utf8(out).expect("utf8"), "()\n");
}

#[test]
fn built_function_runs() {
    // f(x) = x * 2 + 1 built with the builder.
    let mut f = Function::new("f", &[Type::F64], Type::F64);
    let x = f.params()[0];
    let mut b = Builder::new(&mut f);
    let two = b.constant(Literal::F64(2.0));
    let one = b.constant(Literal::F64(1.0));
    let y = b.push1(OpKind::Binary(BinaryOp::Mul), vec![x, two], Type::F64);
    let z = b.push1(OpKind::Binary(BinaryOp::Add), vec![y, one], Type::F64);
    b.finish(vec![z]);
    let mut m = Module::new();
    let h = m.add_function(f);
    for x in [0.0, 1.25, -3.5] {
        assert_eq!(
            interp::call(&m, h, &[Value::F64(x)], &mut std::io::sink()),
            Ok(Value::F64(x * 2.0 + 1.0))
        );
    }
}

#[test]
fn wrong_arguments_are_errors() {
    let m = corpus("scalars.ir");
    assert!(matches!(
        run(&m, "arith", &[Value::F64(1.0)]),
        Err(RtError::Other(_))
    ));
    assert!(matches!(
        run(&m, "arith", &[Value::F64(1.0), Value::I64(2)]),
        Err(RtError::Other(_))
    ));
    assert!(matches!(
        run(
            &m,
            "arith",
            &[Value::F64(1.0), Value::F64(2.0), Value::F64(3.0)]
        ),
        Err(RtError::Other(_))
    ));
    let t = corpus("tensors.ir");
    // Fixed extent 2 x 2 but a 3 x 2 tensor given.
    let bad = Value::Tensor(Tensor::new(vec![3, 2], TensorData::F32(vec![0.0; 6])).expect("shape"));
    let v = Value::Tensor(Tensor::new(vec![2], TensorData::F32(vec![0.0; 2])).expect("shape"));
    assert!(matches!(run(&t, "f32s", &[bad, v]), Err(RtError::Other(_))));
    // Symbolic N must be one extent across the signature.
    let a = f64s(&[2, 2], vec![1.0; 4]);
    let b3 = f64s(&[3, 3], vec![1.0; 9]);
    let v2 = f64s(&[2], vec![1.0; 2]);
    assert!(matches!(
        run(&t, "mats", &[a, b3, v2]),
        Err(RtError::Other(_))
    ));
}

#[test]
fn for_loop_sums_a_series() {
    let m = corpus("control.ir");
    for n in [0i64, 1, 5, 100, -3] {
        let mut s = 0.0f64;
        let mut c = 0i64;
        for i in 0..n {
            s += i as f64;
            c += 1;
        }
        assert_eq!(
            run_ok(&m, "sum_to", &[Value::I64(n)]),
            Value::Tuple(vec![Value::F64(s), Value::I64(c)])
        );
    }
}

#[test]
fn while_with_data_dependent_trip_count() {
    let m = corpus("control.ir");
    for x in [1i64, 2, 3, 7, 27, 97] {
        let (mut a, mut steps) = (x, 0i64);
        while a > 1 {
            a = if a % 2 == 0 { a / 2 } else { 3 * a + 1 };
            steps += 1;
        }
        assert_eq!(
            run_ok(&m, "collatz", &[Value::I64(x)]),
            Value::I64(steps),
            "collatz({x})"
        );
    }
}

#[test]
fn loop_without_carried_values_prints() {
    let m = corpus("control.ir");
    let mut out = Vec::new();
    let r = interp::call(
        &m,
        m.find("no_results").expect("fn"),
        &[Value::I64(3)],
        &mut out,
    );
    assert_eq!(r, Ok(Value::UNIT));
    assert_eq!(String::from_utf8(out).expect("utf8"), "0\n1\n2\n");
    assert_eq!(
        run_ok(&m, "branch", &[Value::Bool(true), Value::F64(2.5)]),
        Value::F64(2.5)
    );
    assert_eq!(
        run_ok(&m, "branch", &[Value::Bool(false), Value::F64(2.5)]),
        Value::F64(-2.5)
    );
}

#[test]
fn recursion_and_mutual_recursion() {
    fn fib(n: i64) -> i64 {
        if n < 2 { n } else { fib(n - 1) + fib(n - 2) }
    }
    let m = corpus("calls.ir");
    for n in [0i64, 1, 2, 10, 15] {
        assert_eq!(run_ok(&m, "fib", &[Value::I64(n)]), Value::I64(fib(n)));
        let expected = fib(n) + (n % 2 == 0) as i64 + n * n;
        assert_eq!(run_ok(&m, "main", &[Value::I64(n)]), Value::I64(expected));
    }
    assert_eq!(
        run_ok(&m, "std::vec::dot$1", &[Value::I64(-4)]),
        Value::I64(16)
    );
}

const FACT: &str = "
func @fact(%n: i64) -> f64 {
  %zero = const 0 : i64
  %done = le %n, %zero : bool
  %r = scf.if %done : f64 {
    %one = const 1.0 : f64
    yield %one
  } else {
    %onei = const 1 : i64
    %m = sub %n, %onei : i64
    %rest = call @fact(%m) : f64
    %nf = cast %n : f64
    %p = mul %nf, %rest : f64
    yield %p
  }
  return %r
}
";

#[test]
fn factorial_matches_rust() {
    let m = module(FACT);
    for n in [0i64, 1, 5, 20, 30] {
        let expected = (1..=n).fold(1.0f64, |acc, k| k as f64 * acc);
        assert_eq!(run_ok(&m, "fact", &[Value::I64(n)]), Value::F64(expected));
    }
}

#[test]
fn deep_recursion_works_on_a_large_stack_and_is_bounded() {
    let m = module(FACT);
    let f = m.find("fact").expect("fact");
    let handle = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            // `fact(n)` nests n + 1 calls.
            let depth_10k = interp::call(&m, f, &[Value::I64(10_000)], &mut std::io::sink());
            let at_limit = interp::call(
                &m,
                f,
                &[Value::I64(DEFAULT_MAX_CALL_DEPTH as i64 - 1)],
                &mut std::io::sink(),
            );
            let past_limit = interp::call(
                &m,
                f,
                &[Value::I64(DEFAULT_MAX_CALL_DEPTH as i64)],
                &mut std::io::sink(),
            );
            (depth_10k, at_limit, past_limit)
        })
        .expect("spawn");
    let (depth_10k, at_limit, past_limit) = handle.join().expect("no stack overflow");
    assert_eq!(depth_10k, Ok(Value::F64(f64::INFINITY)));
    assert_eq!(at_limit, Ok(Value::F64(f64::INFINITY)));
    assert_eq!(past_limit, Err(RtError::RecursionLimit));
    let m = module(FACT);
    let small = Interpreter::new().with_max_call_depth(50);
    let f = m.find("fact").expect("fact");
    assert_eq!(
        small.call(&m, f, &[Value::I64(49)], &mut std::io::sink()),
        Ok(Value::F64((1..=49).fold(1.0, |a, k| k as f64 * a)))
    );
    assert_eq!(
        small.call(&m, f, &[Value::I64(50)], &mut std::io::sink()),
        Err(RtError::RecursionLimit)
    );
}

fn naive_matmul(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut s = 0.0;
            for l in 0..k {
                s += a[i * k + l] * b[l * n + j];
            }
            c[i * n + j] = s;
        }
    }
    c
}

/// Deterministic pseudo-random numbers in [-1, 1).
fn numbers(seed: u64, n: usize) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

#[test]
fn symbolic_matmul_transpose_matvec() {
    let m = corpus("tensors.ir");
    for n in [1usize, 3, 5] {
        let (a, b, v) = (numbers(1, n * n), numbers(2, n * n), numbers(3, n));
        let c = naive_matmul(&a, &b, n, n, n);
        let mut ct = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                ct[j * n + i] = c[i * n + j];
            }
        }
        let w = naive_matmul(&ct, &v, n, n, 1);
        let got = run_ok(
            &m,
            "mats",
            &[f64s(&[n, n], a), f64s(&[n, n], b), f64s(&[n], v)],
        );
        assert_eq!(got, f64s(&[n], w));
    }
}

#[test]
fn dynamic_matmul_sum_and_dims() {
    let m = corpus("tensors.ir");
    let (p, q, r) = (2, 3, 4);
    let (a, b) = (numbers(4, p * q), numbers(5, q * r));
    let c = naive_matmul(&a, &b, p, q, r);
    let expected = c.iter().fold(0.0, |acc, x| acc + x) + p as f64;
    assert_eq!(
        run_ok(&m, "dyn", &[f64s(&[p, q], a.clone()), f64s(&[q, r], b)]),
        Value::F64(expected)
    );
    let mismatch = run(&m, "dyn", &[f64s(&[p, q], a.clone()), f64s(&[p, q], a)]);
    assert!(
        matches!(mismatch, Err(RtError::ShapeMismatch(_))),
        "{mismatch:?}"
    );
}

#[test]
fn pack_full_extract_index_insert() {
    let m = corpus("tensors.ir");
    let x = 1.5f64;
    let (y, z) = (x * x, -x);
    let mat = [[x, y, z], [z, y, x]];
    let mut diff = [[0.0; 3]; 2];
    for i in 0..2 {
        for j in 0..3 {
            diff[i][j] = x * (mat[i][j] * x) - mat[i][j];
        }
    }
    let e0 = diff[1][2];
    let i = diff[1][0];
    let row = diff[0];
    let mut ins = diff;
    ins[0][1] = e0 + i;
    ins[1] = row;
    let expected: Vec<f64> = ins.iter().flatten().map(|v: &f64| v.abs()).collect();
    assert_eq!(
        run_ok(&m, "build", &[Value::F64(x), Value::I64(4)]),
        f64s(&[2, 3], expected)
    );
    let negative = run(&m, "build", &[Value::F64(x), Value::I64(-1)]);
    assert!(matches!(negative, Err(RtError::Other(_))), "{negative:?}");
}

#[test]
fn f32_matvec() {
    let m = corpus("tensors.ir");
    let a = [1.0f32, 2.0, 3.0, 4.0];
    let b = [0.5f32, -1.0];
    let c = [a[0] * b[0] + a[1] * b[1], a[2] * b[0] + a[3] * b[1]];
    let s = 0.0f32 + c[0] + c[1];
    let expected = Value::Tensor(
        Tensor::new(vec![2], TensorData::F32(vec![c[0] / s, c[1] / s])).expect("shape"),
    );
    let av = Value::Tensor(Tensor::new(vec![2, 2], TensorData::F32(a.to_vec())).expect("shape"));
    let bv = Value::Tensor(Tensor::new(vec![2], TensorData::F32(b.to_vec())).expect("shape"));
    assert_eq!(run_ok(&m, "f32s", &[av, bv]), expected);
}

const ELEMENTWISE: &str = "
func @ops(%a: tensor<f64; ?>, %b: tensor<f64; ?>, %s: f64) -> (tensor<f64; ?>, tensor<bool; ?>, tensor<f64; ?>, f64) {
  %sum = add %a, %b : tensor<f64; ?>
  %scaled = mul %s, %sum : tensor<f64; ?>
  %lt = lt %a, %b : tensor<bool; ?>
  %sq = sqrt %scaled : tensor<f64; ?>
  %tot = tensor.sum %sq : f64
  %r = tuple %scaled, %lt, %sq, %tot : (tensor<f64; ?>, tensor<bool; ?>, tensor<f64; ?>, f64)
  return %r
}

func @get(%t: tensor<i64; ?, 2>, %i: i64, %j: i64) -> i64 {
  %x = tensor.index %t, %i, %j : i64
  return %x
}

func @put(%t: tensor<i64; ?, 2>, %i: i64, %v: i64) -> tensor<i64; ?, 2> {
  %one = const 1 : i64
  %r = tensor.insert %t, %v, %i, %one : tensor<i64; ?, 2>
  return %r
}

func @idiv(%a: i64, %b: i64) -> i64 {
  %q = div %a, %b : i64
  %r = rem %a, %b : i64
  %s = add %q, %r : i64
  return %s
}

func @ipow(%a: i64, %b: i64) -> i64 {
  %p = pow %a, %b : i64
  return %p
}

func @first(%t: tensor<f64; ?>) -> f64 {
  %x = tensor.extract[0] %t : f64
  return %x
}

func @show(%x: f64) -> () {
  %t = call @nest(%x) : tensor<f64; 2, 2, 2>
  %u = print %t : ()
  return %u
}

func @nest(%x: f64) -> tensor<f64; 2, 2, 2> {
  %y = neg %x : f64
  %r0 = tensor.pack %x, %y : tensor<f64; 2>
  %r1 = tensor.pack %y, %x : tensor<f64; 2>
  %m0 = tensor.pack %r0, %r1 : tensor<f64; 2, 2>
  %m1 = tensor.pack %r1, %r0 : tensor<f64; 2, 2>
  %c = tensor.pack %m0, %m1 : tensor<f64; 2, 2, 2>
  return %c
}
";

#[test]
fn elementwise_on_tensors_with_scalar_broadcast() {
    let m = module(ELEMENTWISE);
    let (a, b, s) = (vec![1.0, 4.0, 0.5], vec![3.0, 0.0, 0.25], 2.0);
    let scaled: Vec<f64> = a.iter().zip(&b).map(|(x, y)| s * (x + y)).collect();
    let lt: Vec<bool> = a.iter().zip(&b).map(|(x, y)| x < y).collect();
    let sq: Vec<f64> = scaled.iter().map(|x| x.sqrt()).collect();
    let tot = sq.iter().fold(0.0, |acc, x| acc + x);
    let expected = Value::Tuple(vec![
        f64s(&[3], scaled),
        Value::Tensor(Tensor::new(vec![3], TensorData::Bool(lt)).expect("shape")),
        f64s(&[3], sq),
        Value::F64(tot),
    ]);
    assert_eq!(
        run_ok(
            &m,
            "ops",
            &[f64s(&[3], a.clone()), f64s(&[3], b), Value::F64(s)]
        ),
        expected
    );
    let short = run(
        &m,
        "ops",
        &[f64s(&[3], a), f64s(&[2], vec![1.0, 2.0]), Value::F64(s)],
    );
    assert!(matches!(short, Err(RtError::ShapeMismatch(_))), "{short:?}");
}

#[test]
fn index_and_insert_with_bounds_checks() {
    let m = module(ELEMENTWISE);
    let t = Value::Tensor(
        Tensor::new(vec![3, 2], TensorData::I64(vec![10, 11, 20, 21, 30, 31])).expect("shape"),
    );
    assert_eq!(
        run_ok(&m, "get", &[t.clone(), Value::I64(2), Value::I64(1)]),
        Value::I64(31)
    );
    assert_eq!(
        run_ok(&m, "get", &[t.clone(), Value::I64(1), Value::I64(0)]),
        Value::I64(20)
    );
    assert_eq!(
        run(&m, "get", &[t.clone(), Value::I64(3), Value::I64(0)]),
        Err(RtError::IndexOutOfBounds { index: 3, len: 3 })
    );
    assert_eq!(
        run(&m, "get", &[t.clone(), Value::I64(0), Value::I64(-1)]),
        Err(RtError::IndexOutOfBounds { index: -1, len: 2 })
    );
    let put = run_ok(&m, "put", &[t.clone(), Value::I64(1), Value::I64(-5)]);
    assert_eq!(
        put,
        Value::Tensor(
            Tensor::new(vec![3, 2], TensorData::I64(vec![10, 11, 20, -5, 30, 31])).expect("shape")
        )
    );
    assert_eq!(
        run(&m, "put", &[t, Value::I64(-2), Value::I64(0)]),
        Err(RtError::IndexOutOfBounds { index: -2, len: 3 })
    );
    assert_eq!(
        run_ok(&m, "first", &[f64s(&[2], vec![7.0, 8.0])]),
        Value::F64(7.0)
    );
    assert_eq!(
        run(&m, "first", &[f64s(&[0], vec![])]),
        Err(RtError::IndexOutOfBounds { index: 0, len: 0 })
    );
}

#[test]
fn integer_errors_are_errors() {
    let m = module(ELEMENTWISE);
    assert_eq!(
        run_ok(&m, "idiv", &[Value::I64(-7), Value::I64(2)]),
        Value::I64(-7 / 2 + -7 % 2)
    );
    assert_eq!(
        run(&m, "idiv", &[Value::I64(7), Value::I64(0)]),
        Err(RtError::DivByZero)
    );
    assert_eq!(
        run_ok(&m, "idiv", &[Value::I64(i64::MIN), Value::I64(-1)]),
        Value::I64(i64::MIN)
    );
    assert_eq!(
        run_ok(&m, "ipow", &[Value::I64(3), Value::I64(4)]),
        Value::I64(81)
    );
    assert_eq!(
        run(&m, "ipow", &[Value::I64(3), Value::I64(-1)]),
        Err(RtError::NegativeExponent)
    );
}

#[test]
fn pack_of_packs() {
    let m = module(ELEMENTWISE);
    let x = 2.0;
    let expected = f64s(&[2, 2, 2], vec![x, -x, -x, x, -x, x, x, -x]);
    assert_eq!(run_ok(&m, "nest", &[Value::F64(x)]), expected);
    let mut out = Vec::new();
    let r = interp::call(
        &m,
        m.find("show").expect("show"),
        &[Value::F64(x)],
        &mut out,
    );
    assert_eq!(r, Ok(Value::UNIT));
    assert_eq!(
        String::from_utf8(out).expect("utf8"),
        "[[[2.0, -2.0], [-2.0, 2.0]], [[-2.0, 2.0], [2.0, -2.0]]]\n"
    );
}

#[test]
fn malformed_host_values_and_huge_tensors_are_errors() {
    let m = corpus("tensors.ir");
    // The shape says 2 x 2 but the data has 3 elements.
    let bad = Value::Tensor(Tensor {
        shape: vec![2, 2],
        data: TensorData::F32(vec![1.0; 3]),
    });
    let v = Value::Tensor(Tensor::new(vec![2], TensorData::F32(vec![0.0; 2])).expect("shape"));
    assert!(matches!(run(&m, "f32s", &[bad, v]), Err(RtError::Other(_))));
    let big = module(
        "func @big(%n: i64) -> tensor<f64; ?, ?> {\n  %x = const 1.0 : f64\n  %t = tensor.full %x, %n, %n : tensor<f64; ?, ?>\n  return %t\n}\n",
    );
    assert!(matches!(
        run(&big, "big", &[Value::I64(1 << 20)]),
        Err(RtError::Other(_))
    ));
    assert_eq!(
        run_ok(&big, "big", &[Value::I64(2)]),
        f64s(&[2, 2], vec![1.0; 4])
    );
}
