//! Sparse accumulation into loop-carried tensors (`passes::accum`): the rewrite
//! fires on `acc + insert(zeros, v, k)` with `acc` starting at `+0.0` zeros,
//! leaves other inits alone, and the rewritten program's results are the ones
//! a plain Rust loop computes, bit for bit.

use mad::back::interp;
use mad::ir::parse::parse_module;
use mad::ir::validate::validate_module;
use mad::ir::{Module, OpKind};
use mad::passes::accum::sparse_accumulate;
use mad_runtime::{Tensor, TensorData, Value};

/// `acc = full(ZERO, len x); for i in 0..n { acc = acc + insert(acc0, x[i % len] * 3, i % len) }`.
fn program(zero: &str, acc_left: bool) -> Module {
    let add = if acc_left {
        "add %acc, %ins"
    } else {
        "add %ins, %acc"
    };
    let text = format!(
        "func @f(%x: tensor<f64; ?>, %n: i64) -> tensor<f64; ?> {{
  %z = const {zero} : f64
  %lo = const 0 : i64
  %len = tensor.dim[0] %x : i64
  %acc0 = tensor.full %z, %len : tensor<f64; ?>
  %r = scf.for %lo, %n, %acc0 : tensor<f64; ?> {{
  ^(%i: i64, %acc: tensor<f64; ?>):
    %k = rem %i, %len : i64
    %xi = tensor.index %x, %k : f64
    %three = const 3.0 : f64
    %v = mul %xi, %three : f64
    %ins = tensor.insert %acc0, %v, %k : tensor<f64; ?>
    %next = {add} : tensor<f64; ?>
    yield %next
  }}
  return %r
}}"
    );
    let m = parse_module(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    validate_module(&m).expect("valid");
    m
}

fn run(m: &Module, x: &[f64], n: i64) -> Vec<f64> {
    let arg = Value::Tensor(Tensor {
        shape: vec![x.len()],
        data: TensorData::F64(x.to_vec()),
    });
    match interp::call(
        m,
        m.find("f").expect("f"),
        &[arg, Value::I64(n)],
        &mut std::io::sink(),
    ) {
        Ok(Value::Tensor(Tensor {
            data: TensorData::F64(v),
            ..
        })) => v,
        other => panic!("unexpected result {other:?}"),
    }
}

/// Whole-tensor adds reachable from the function's body.
fn tensor_adds(m: &Module) -> usize {
    fn count(f: &mad::ir::Function, r: &mad::ir::Region) -> usize {
        r.ops
            .iter()
            .map(|&id| {
                let op = &f.ops[id];
                let own = op.kind == OpKind::Binary(mad::ir::BinaryOp::Add)
                    && matches!(f.ty(op.results[0]), mad::ir::Type::Tensor { .. });
                usize::from(own) + op.regions.iter().map(|nr| count(f, nr)).sum::<usize>()
            })
            .sum()
    }
    let f = &m.functions[m.find("f").expect("f")];
    count(f, &f.body)
}

#[test]
fn rewrites_and_keeps_every_bit() {
    let x = [0.5, -0.0, f64::INFINITY, 1e-300, -2.25, 7.0];
    for acc_left in [true, false] {
        let mut m = program("0.0", acc_left);
        let before = run(&m, &x, 20);
        let fref = m.find("f").expect("f");
        assert!(sparse_accumulate(&mut m.functions[fref]));
        validate_module(&m).expect("valid after the rewrite");
        mad::passes::dce::dce(&mut m, fref);
        assert_eq!(tensor_adds(&m), 0, "the whole-tensor add is gone");
        let after = run(&m, &x, 20);
        // Plain Rust reference.
        let mut want = vec![0.0f64; x.len()];
        for i in 0..20 {
            let k = i % x.len();
            // Either operand order: the inputs hold no NaN, so the sum does not depend on it.
            want[k] += x[k] * 3.0;
        }
        let bits = |v: &[f64]| v.iter().map(|a| a.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&after), bits(&want));
        assert_eq!(bits(&before), bits(&want));
    }
}

#[test]
fn other_inits_are_left_alone() {
    for zero in ["-0.0", "1.0"] {
        let mut m = program(zero, true);
        let fref = m.find("f").expect("f");
        assert!(!sparse_accumulate(&mut m.functions[fref]), "init {zero}");
        assert_eq!(tensor_adds(&m), 1);
    }
}

#[test]
fn out_of_bounds_is_still_an_error() {
    // An index past the end fails before and after the rewrite.
    let text = "func @f(%x: tensor<f64; ?>, %n: i64) -> tensor<f64; ?> {
  %z = const 0.0 : f64
  %lo = const 0 : i64
  %len = tensor.dim[0] %x : i64
  %acc0 = tensor.full %z, %len : tensor<f64; ?>
  %r = scf.for %lo, %n, %acc0 : tensor<f64; ?> {
  ^(%i: i64, %acc: tensor<f64; ?>):
    %v = const 1.0 : f64
    %ins = tensor.insert %acc0, %v, %i : tensor<f64; ?>
    %next = add %acc, %ins : tensor<f64; ?>
    yield %next
  }
  return %r
}";
    let mut m = parse_module(text).expect("parses");
    let arg = || {
        Value::Tensor(Tensor {
            shape: vec![2],
            data: TensorData::F64(vec![1.0, 2.0]),
        })
    };
    let call = |m: &Module| {
        interp::call(
            m,
            m.find("f").expect("f"),
            &[arg(), Value::I64(3)],
            &mut std::io::sink(),
        )
    };
    let before = call(&m).expect_err("out of bounds");
    let fref = m.find("f").expect("f");
    assert!(sparse_accumulate(&mut m.functions[fref]));
    let after = call(&m).expect_err("out of bounds");
    assert_eq!(before.to_string(), after.to_string());
}

#[test]
fn a_chain_of_inserts_is_rewritten_element_by_element() {
    // Two reads in one iteration give a chain on the zeros: elements k and k + 1 (distinct),
    // then k again (a later insert at an element overwrites it), as reverse mode leaves for
    // `x[k] * x[k + 1]`-like bodies; the bits are those of the whole-tensor adds.
    let text = "func @f(%x: tensor<f64; ?>, %n: i64) -> tensor<f64; ?> {
  %z = const 0.0 : f64
  %lo = const 0 : i64
  %one = const 1 : i64
  %len = tensor.dim[0] %x : i64
  %m = sub %len, %one : i64
  %acc0 = tensor.full %z, %len : tensor<f64; ?>
  %r = scf.for %lo, %n, %acc0 : tensor<f64; ?> {
  ^(%i: i64, %acc: tensor<f64; ?>):
    %k = rem %i, %m : i64
    %k1 = add %k, %one : i64
    %a = tensor.index %x, %k : f64
    %b = tensor.index %x, %k1 : f64
    %ins1 = tensor.insert %acc0, %b, %k : tensor<f64; ?>
    %ins2 = tensor.insert %ins1, %a, %k1 : tensor<f64; ?>
    %old = tensor.index %ins2, %k : f64
    %tw = add %old, %a : f64
    %ins3 = tensor.insert %ins2, %tw, %k : tensor<f64; ?>
    %next = add %acc, %ins3 : tensor<f64; ?>
    yield %next
  }
  return %r
}";
    let mut m = parse_module(text).expect("parses");
    validate_module(&m).expect("valid");
    let x = [0.5, -1.25, 3.0, 1e-300, -2.25, 7.0];
    let before = run(&m, &x, 23);
    let fref = m.find("f").expect("f");
    assert!(sparse_accumulate(&mut m.functions[fref]));
    validate_module(&m).expect("valid after the rewrite");
    mad::passes::dce::dce(&mut m, fref);
    assert_eq!(tensor_adds(&m), 0, "the whole-tensor add is gone");
    let after = run(&m, &x, 23);
    let mut want = vec![0.0f64; x.len()];
    for i in 0..23 {
        let k = i % (x.len() - 1);
        want[k] += x[k + 1] + x[k];
        want[k + 1] += x[k];
    }
    let bits = |v: &[f64]| v.iter().map(|a| a.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&before), bits(&want));
    assert_eq!(bits(&after), bits(&want));
}
