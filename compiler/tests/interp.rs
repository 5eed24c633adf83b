//! The reference interpreter, checked against values computed by plain Rust in
//! the tests (never by the interpreter's own helpers).

use std::path::PathBuf;

use mad::back::interp::{self, Interpreter};
use mad::ir::parse::parse_module;
use mad::ir::validate::validate_module;
use mad::ir::{BinaryOp, Builder, Function, Literal, Module, OpKind, Type};
use mad_runtime::{RtError, Tensor, TensorData, Value};

fn module(text: &str) -> Module {
    let m = parse_module(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    if let Err(errs) = validate_module(&m) {
        panic!("{}", errs.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"));
    }
    m
}

fn corpus(name: &str) -> Module {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/ir").join(name);
    module(&std::fs::read_to_string(path).expect("corpus file"))
}

fn run(m: &Module, name: &str, args: &[Value]) -> Result<Value, RtError> {
    interp::call(m, m.find(name).expect("function exists"), args, &mut std::io::sink())
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
            assert_eq!(run_ok(&m, "logic", &[Value::I64(x), Value::I64(y)]), Value::Bool(expected), "logic({x}, {y})");
        }
    }
}

#[test]
fn literals_and_casts() {
    let m = corpus("scalars.ir");
    let Value::Tuple(items) = run_ok(&m, "literals", &[]) else { panic!("tuple") };
    assert_eq!(items[0], Value::F64(0.1));
    assert_eq!(items[1], Value::F32(1.5));
    assert_eq!(items[2], Value::I64(-42));
    assert_eq!(items[3], Value::Bool(true));
    assert_eq!(items[4], Value::F64(f64::INFINITY));
    assert_eq!(items[5], Value::F64(f64::NEG_INFINITY));
    assert!(matches!(items[6], Value::F64(x) if x.is_nan()));
    assert_eq!(items[7], Value::F32(1e-7));
    for (x, b) in [(2.9, true), (-2.9, false), (f64::NAN, true), (1e300, false), (-1e300, true), (0.1, false)] {
        let expected = Value::Tuple(vec![
            Value::I64(x as i64),
            Value::F32(x as f32),
            Value::F64((x as f32) as f64),
            Value::I64(b as i64),
        ]);
        let got = run_ok(&m, "casts", &[Value::F64(x), Value::Bool(b)]);
        if x.is_nan() {
            let Value::Tuple(g) = got else { panic!("tuple") };
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
    let v = interp::call(&m, m.find("tuples").expect("tuples"), &[Value::F64(1.0), Value::I64(7)], &mut out);
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
    let y = b.op1(OpKind::Binary(BinaryOp::Mul), vec![x, two], Type::F64);
    let z = b.op1(OpKind::Binary(BinaryOp::Add), vec![y, one], Type::F64);
    b.finish(vec![z]);
    let mut m = Module::new();
    let h = m.add_function(f);
    for x in [0.0, 1.25, -3.5] {
        assert_eq!(interp::call(&m, h, &[Value::F64(x)], &mut std::io::sink()), Ok(Value::F64(x * 2.0 + 1.0)));
    }
}

#[test]
fn wrong_arguments_are_errors() {
    let m = corpus("scalars.ir");
    assert!(matches!(run(&m, "arith", &[Value::F64(1.0)]), Err(RtError::Other(_))));
    assert!(matches!(run(&m, "arith", &[Value::F64(1.0), Value::I64(2)]), Err(RtError::Other(_))));
    assert!(matches!(run(&m, "arith", &[Value::F64(1.0), Value::F64(2.0), Value::F64(3.0)]), Err(RtError::Other(_))));
    let t = corpus("tensors.ir");
    // Fixed extent 2 x 2 but a 3 x 2 tensor given.
    let bad = Value::Tensor(Tensor::new(vec![3, 2], TensorData::F32(vec![0.0; 6])).expect("shape"));
    let v = Value::Tensor(Tensor::new(vec![2], TensorData::F32(vec![0.0; 2])).expect("shape"));
    assert!(matches!(run(&t, "f32s", &[bad, v]), Err(RtError::Other(_))));
    // Symbolic N must be one extent across the signature.
    let a = f64s(&[2, 2], vec![1.0; 4]);
    let b3 = f64s(&[3, 3], vec![1.0; 9]);
    let v2 = f64s(&[2], vec![1.0; 2]);
    assert!(matches!(run(&t, "mats", &[a, b3, v2]), Err(RtError::Other(_))));
}
