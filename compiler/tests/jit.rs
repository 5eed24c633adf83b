//! The Cranelift JIT on hand-built IR, checked against plain Rust computations.

use mad::back::cranelift::{self, clif_text};
use mad::ir::{
    BinaryOp, Builder, FuncRef, Function, Literal, Module, OpKind, ScalarKind, Type, UnaryOp,
};
use mad_runtime::{RtError, Tensor, TensorData, Value};

fn run(m: &Module, f: FuncRef, args: &[Value]) -> (Result<Value, RtError>, String) {
    let jit = cranelift::compile(m, &[]).expect("compiles");
    let mut out = Vec::new();
    let r = jit.call(f, args, &mut out);
    (r, String::from_utf8(out).unwrap())
}

fn binary_fn(op: BinaryOp, ty: Type, ret: Type) -> (Module, FuncRef) {
    let mut f = Function::new("bin", &[ty.clone(), ty], ret.clone());
    let (a, b) = (f.params()[0], f.params()[1]);
    let mut bld = Builder::new(&mut f);
    let r = bld.push1(OpKind::Binary(op), vec![a, b], ret);
    bld.finish(vec![r]);
    let mut m = Module::new();
    let h = m.add_function(f);
    (m, h)
}

#[test]
fn scalar_arithmetic_matches_rust() {
    let (m, f) = binary_fn(BinaryOp::Add, Type::F64, Type::F64);
    assert_eq!(
        run(&m, f, &[Value::F64(1.5), Value::F64(2.25)]).0,
        Ok(Value::F64(3.75))
    );
    let (m, f) = binary_fn(BinaryOp::Pow, Type::F64, Type::F64);
    assert_eq!(
        run(&m, f, &[Value::F64(1.7), Value::F64(2.3)]).0,
        Ok(Value::F64(1.7f64.powf(2.3)))
    );
    let (m, f) = binary_fn(BinaryOp::Min, Type::F64, Type::F64);
    assert_eq!(
        run(&m, f, &[Value::F64(f64::NAN), Value::F64(2.0)]).0,
        Ok(Value::F64(2.0))
    );
    let (m, f) = binary_fn(BinaryOp::Rem, Type::F32, Type::F32);
    assert_eq!(
        run(&m, f, &[Value::F32(7.5), Value::F32(2.0)]).0,
        Ok(Value::F32(1.5))
    );
    let (m, f) = binary_fn(BinaryOp::Lt, Type::I64, Type::BOOL);
    assert_eq!(
        run(&m, f, &[Value::I64(-3), Value::I64(2)]).0,
        Ok(Value::Bool(true))
    );
    let (m, f) = binary_fn(BinaryOp::Or, Type::BOOL, Type::BOOL);
    assert_eq!(
        run(&m, f, &[Value::Bool(false), Value::Bool(true)]).0,
        Ok(Value::Bool(true))
    );
}

#[test]
fn integer_division_never_traps() {
    let (m, f) = binary_fn(BinaryOp::Div, Type::I64, Type::I64);
    assert_eq!(
        run(&m, f, &[Value::I64(7), Value::I64(-2)]).0,
        Ok(Value::I64(-3))
    );
    assert_eq!(
        run(&m, f, &[Value::I64(i64::MIN), Value::I64(-1)]).0,
        Ok(Value::I64(i64::MIN))
    );
    assert_eq!(
        run(&m, f, &[Value::I64(1), Value::I64(0)]).0,
        Err(RtError::DivByZero)
    );
    let (m, f) = binary_fn(BinaryOp::Rem, Type::I64, Type::I64);
    assert_eq!(
        run(&m, f, &[Value::I64(i64::MIN), Value::I64(-1)]).0,
        Ok(Value::I64(0))
    );
    assert_eq!(
        run(&m, f, &[Value::I64(-7), Value::I64(3)]).0,
        Ok(Value::I64(-1))
    );
    let (m, f) = binary_fn(BinaryOp::Pow, Type::I64, Type::I64);
    assert_eq!(
        run(&m, f, &[Value::I64(3), Value::I64(4)]).0,
        Ok(Value::I64(81))
    );
    assert_eq!(
        run(&m, f, &[Value::I64(3), Value::I64(-1)]).0,
        Err(RtError::NegativeExponent)
    );
}

#[test]
fn unary_ops_and_casts() {
    for (op, x) in [
        (UnaryOp::Sin, 0.7),
        (UnaryOp::Sqrt, 2.0),
        (UnaryOp::Floor, -1.5),
        (UnaryOp::Log, 3.0),
    ] {
        let mut f = Function::new("u", &[Type::F32], Type::F32);
        let a = f.params()[0];
        let mut b = Builder::new(&mut f);
        let r = b.push1(OpKind::Unary(op), vec![a], Type::F32);
        b.finish(vec![r]);
        let mut m = Module::new();
        let h = m.add_function(f);
        assert_eq!(
            run(&m, h, &[Value::F32(x as f32)]).0,
            Ok(Value::F32(op.f32(x as f32))),
            "{op:?}"
        );
    }
    let mut f = Function::new("c", &[Type::F64], Type::I64);
    let a = f.params()[0];
    let mut b = Builder::new(&mut f);
    let r = b.push1(OpKind::Cast(ScalarKind::I64), vec![a], Type::I64);
    b.finish(vec![r]);
    let mut m = Module::new();
    let h = m.add_function(f);
    assert_eq!(run(&m, h, &[Value::F64(-2.9)]).0, Ok(Value::I64(-2)));
    assert_eq!(run(&m, h, &[Value::F64(f64::NAN)]).0, Ok(Value::I64(0)));
}

/// `fact(n) = if n <= 1 { 1 } else { n * fact(n - 1) }`
fn factorial() -> (Module, FuncRef) {
    let mut m = Module::new();
    let me = FuncRef::from_index(0);
    let mut f = Function::new("fact", &[Type::I64], Type::I64);
    let n = f.params()[0];
    let mut b = Builder::new(&mut f);
    let one = b.constant(Literal::I64(1));
    let c = b.push1(OpKind::Binary(BinaryOp::Le), vec![n, one], Type::BOOL);
    b.begin_region(&[]);
    let t = b.end_region(vec![one]);
    b.begin_region(&[]);
    let n1 = b.push1(OpKind::Binary(BinaryOp::Sub), vec![n, one], Type::I64);
    let r = b.push1(OpKind::Call(me), vec![n1], Type::I64);
    let p = b.push1(OpKind::Binary(BinaryOp::Mul), vec![n, r], Type::I64);
    let e = b.end_region(vec![p]);
    let iff = b.push_with_regions(OpKind::If, vec![c], vec![Type::I64], vec![t, e]);
    let res = b.func.ops[iff].results[0];
    b.finish(vec![res]);
    let h = m.add_function(f);
    (m, h)
}

#[test]
fn recursion_and_if() {
    let (m, f) = factorial();
    assert_eq!(run(&m, f, &[Value::I64(10)]).0, Ok(Value::I64(3_628_800)));
    assert_eq!(
        run(&m, f, &[Value::I64(1_000_000)]).0,
        Err(RtError::RecursionLimit)
    );
}

#[test]
fn for_loop_sum_and_print() {
    // s = 0; for i in lo..hi { s += i; print(s) }; s
    let mut f = Function::new("sum", &[Type::I64, Type::I64], Type::I64);
    let (lo, hi) = (f.params()[0], f.params()[1]);
    let mut b = Builder::new(&mut f);
    let zero = b.constant(Literal::I64(0));
    let args = b.begin_region(&[Type::I64, Type::I64]);
    let s = b.push1(
        OpKind::Binary(BinaryOp::Add),
        vec![args[1], args[0]],
        Type::I64,
    );
    b.push(OpKind::Print, vec![s], vec![Type::unit()]);
    let body = b.end_region(vec![s]);
    let fo = b.push_with_regions(OpKind::For, vec![lo, hi, zero], vec![Type::I64], vec![body]);
    let r = b.func.ops[fo].results[0];
    b.finish(vec![r]);
    let mut m = Module::new();
    let h = m.add_function(f);
    let (r, out) = run(&m, h, &[Value::I64(1), Value::I64(5)]);
    assert_eq!(r, Ok(Value::I64(10)));
    assert_eq!(out, "1\n3\n6\n10\n");
    assert_eq!(
        run(&m, h, &[Value::I64(5), Value::I64(1)]).0,
        Ok(Value::I64(0))
    );
}

#[test]
fn while_loop_collatz_steps() {
    // (n, k) = (x, 0); while n != 1 { n = if n % 2 == 0 { n / 2 } else { 3n + 1 }; k += 1 }; k
    let mut f = Function::new("collatz", &[Type::I64], Type::I64);
    let x = f.params()[0];
    let mut b = Builder::new(&mut f);
    let zero = b.constant(Literal::I64(0));
    let c = b.begin_region(&[Type::I64, Type::I64]);
    let one = b.constant(Literal::I64(1));
    let ne = b.push1(OpKind::Binary(BinaryOp::Ne), vec![c[0], one], Type::BOOL);
    let cond = b.end_region(vec![ne]);
    let a = b.begin_region(&[Type::I64, Type::I64]);
    let two = b.constant(Literal::I64(2));
    let three = b.constant(Literal::I64(3));
    let one = b.constant(Literal::I64(1));
    let rem = b.push1(OpKind::Binary(BinaryOp::Rem), vec![a[0], two], Type::I64);
    let even = b.push1(OpKind::Binary(BinaryOp::Eq), vec![rem, zero], Type::BOOL);
    let half = b.push1(OpKind::Binary(BinaryOp::Div), vec![a[0], two], Type::I64);
    let t3 = b.push1(OpKind::Binary(BinaryOp::Mul), vec![a[0], three], Type::I64);
    let up = b.push1(OpKind::Binary(BinaryOp::Add), vec![t3, one], Type::I64);
    let n = b.push1(OpKind::Select, vec![even, half, up], Type::I64);
    let k = b.push1(OpKind::Binary(BinaryOp::Add), vec![a[1], one], Type::I64);
    let body = b.end_region(vec![n, k]);
    let w = b.push_with_regions(
        OpKind::While,
        vec![x, zero],
        vec![Type::I64, Type::I64],
        vec![cond, body],
    );
    let k = b.func.ops[w].results[1];
    b.finish(vec![k]);
    let mut m = Module::new();
    let h = m.add_function(f);
    assert_eq!(run(&m, h, &[Value::I64(27)]).0, Ok(Value::I64(111)));
}

#[test]
fn small_and_heap_tensors() {
    for n in [3u64, 300] {
        // sum(x * 2.0) + x[1]
        let ty = Type::tensor(ScalarKind::F64, &[n]);
        let mut f = Function::new("t", &[ty.clone(), Type::I64], Type::F64);
        let (x, i) = (f.params()[0], f.params()[1]);
        let mut b = Builder::new(&mut f);
        let two = b.constant(Literal::F64(2.0));
        let y = b.push1(OpKind::Binary(BinaryOp::Mul), vec![x, two], ty.clone());
        let s = b.push1(OpKind::Sum, vec![y], Type::F64);
        let xi = b.push1(OpKind::Index, vec![x, i], Type::F64);
        let r = b.push1(OpKind::Binary(BinaryOp::Add), vec![s, xi], Type::F64);
        b.push(OpKind::Print, vec![y], vec![Type::unit()]);
        b.finish(vec![r]);
        let mut m = Module::new();
        let h = m.add_function(f);
        let data: Vec<f64> = (0..n).map(|k| k as f64 * 0.5).collect();
        let arg = Value::Tensor(Tensor::vector(data.clone()));
        let want: f64 = data.iter().map(|v| v * 2.0).sum::<f64>() + data[1];
        let (r, out) = run(&m, h, &[arg.clone(), Value::I64(1)]);
        assert_eq!(r, Ok(Value::F64(want)));
        let doubled = Value::Tensor(Tensor::vector(data.iter().map(|v| v * 2.0).collect()));
        assert_eq!(out, format!("{doubled}\n"));
        let (r, _) = run(&m, h, &[arg, Value::I64(n as i64)]);
        assert_eq!(
            r,
            Err(RtError::IndexOutOfBounds {
                index: n as i64,
                len: n as i64
            })
        );
    }
}

#[test]
fn matmul_transpose_insert_on_small_matrices() {
    let m2 = Type::tensor(ScalarKind::F64, &[2, 2]);
    let mut f = Function::new(
        "mm",
        &[m2.clone(), m2.clone()],
        Type::Tuple(vec![m2.clone(), m2.clone()]),
    );
    let (a, c) = (f.params()[0], f.params()[1]);
    let mut b = Builder::new(&mut f);
    let p = b.push1(OpKind::MatMul, vec![a, c], m2.clone());
    let t = b.push1(OpKind::Transpose, vec![p], m2.clone());
    let zero = b.constant(Literal::I64(0));
    let one = b.constant(Literal::I64(1));
    let nine = b.constant(Literal::F64(9.0));
    let ins = b.push1(OpKind::Insert, vec![t, nine, zero, one], m2.clone());
    let tup = b.push1(
        OpKind::Tuple,
        vec![p, ins],
        Type::Tuple(vec![m2.clone(), m2.clone()]),
    );
    b.finish(vec![tup]);
    let mut m = Module::new();
    let h = m.add_function(f);
    let mat = |v: Vec<f64>| Value::Tensor(Tensor::from_f64(vec![2, 2], v).unwrap());
    let r = run(
        &m,
        h,
        &[mat(vec![1.0, 2.0, 3.0, 4.0]), mat(vec![5.0, 6.0, 7.0, 8.0])],
    )
    .0;
    assert_eq!(
        r,
        Ok(Value::Tuple(vec![
            mat(vec![19.0, 22.0, 43.0, 50.0]),
            mat(vec![19.0, 9.0, 22.0, 50.0])
        ]))
    );
}

#[test]
fn bad_arguments_are_errors() {
    let (m, f) = binary_fn(BinaryOp::Add, Type::F64, Type::F64);
    let jit = cranelift::compile(&m, &[]).unwrap();
    let mut out = Vec::new();
    assert!(jit.call(f, &[Value::F64(1.0)], &mut out).is_err());
    assert!(
        jit.call(f, &[Value::F64(1.0), Value::I64(2)], &mut out)
            .is_err()
    );
    assert!(jit.call(FuncRef::from_index(7), &[], &mut out).is_err());
    let v = Value::Tensor(Tensor {
        shape: vec![1],
        data: TensorData::F64(vec![1.0]),
    });
    assert!(jit.call(f, &[v, Value::F64(1.0)], &mut out).is_err());
}

#[test]
fn clif_text_names_every_function() {
    let (m, _) = factorial();
    let text = clif_text(&m).unwrap();
    assert!(text.contains("; fn fact"), "{text}");
    assert!(text.contains("function u0:0"), "{text}");
}

#[test]
fn malformed_ir_is_an_error_not_a_panic() {
    let mut f = Function::new("bad", &[], Type::F64);
    let dangling = f.new_value(Type::F64);
    let b = Builder::new(&mut f);
    b.finish(vec![dangling]);
    let mut m = Module::new();
    m.add_function(f);
    assert!(matches!(
        cranelift::compile(&m, &[]),
        Err(mad::back::cranelift::JitError::Unsupported(_))
    ));

    let mut f = Function::new("bad_op", &[Type::BOOL], Type::BOOL);
    let x = f.params()[0];
    let mut b = Builder::new(&mut f);
    let r = b.push1(OpKind::Unary(UnaryOp::Sqrt), vec![x], Type::BOOL);
    b.finish(vec![r]);
    let mut m = Module::new();
    m.add_function(f);
    let e = cranelift::compile(&m, &[])
        .err()
        .expect("sqrt of bool is rejected");
    assert!(e.to_string().contains("sqrt"), "{e}");
}
