//! Every op of the IR ([`OpKind::catalog`]) has a sample here that runs on every back end
//! (the interpreter and Cranelift, through the back-end contract, with the same bits) and
//! whose derivative (forward and reverse mode) is checked against central finite
//! differences of the primal, or against its documented value where the op has none to
//! difference (`detach`: zero; the tape ops: no derivative of their own). A new op fails
//! `every_op_has_a_sample` until it gets one, which names what it lacks.

use crate::ad_support::*;
use mad::back::cranelift::Cranelift;
use mad::back::interp::Interpreter;
use mad::back::{CompiledModule, Executable};
use mad::ir::OpKind;
use mad_runtime::{Tensor, Value};

/// What the derivative of a sample is checked against.
enum Derivative {
    /// Central finite differences of the primal.
    Differences,
    /// These exact partials (the op's derivative is defined, not differenced).
    Exactly(&'static [f64]),
    /// None: the op is bookkeeping of reverse mode itself (why in the text).
    None(&'static str),
}

struct Sample {
    /// The op's name in the text form.
    op: String,
    /// A module with `@f`, whose result is an `f64` that depends on the op.
    ir: String,
    args: Vec<Value>,
    derivative: Derivative,
}

fn scalar_sample(op: &str, body: &str, x: &[f64], derivative: Derivative) -> Sample {
    let params: Vec<String> = (0..x.len()).map(|i| format!("%x{i}: f64")).collect();
    Sample {
        op: op.to_string(),
        ir: format!("func @f({}) -> f64 {{\n{body}}}\n", params.join(", ")),
        args: x.iter().map(|&v| Value::F64(v)).collect(),
        derivative,
    }
}

fn vec3(xs: [f64; 3]) -> Value {
    Value::Tensor(Tensor::vector(xs.to_vec()))
}

fn samples() -> Vec<Sample> {
    use Derivative::*;
    let mut out = Vec::new();
    // Unary ops on f64, times x (so the derivative sees the op's own), at a point inside
    // every domain and away from kinks.
    for op in mad_runtime::ops::UnaryOp::ALL {
        let name = op.name();
        let sample = match name {
            "not" => scalar_sample(
                name,
                "  %c = const 0.5 : f64\n  %b = lt %x0, %c : bool\n  %n = not %b : bool\n  %r = select %n, %x0, %c : f64\n  return %r\n",
                &[0.7],
                Differences,
            ),
            "detach" => scalar_sample(
                name,
                "  %d = detach %x0 : f64\n  %r = mul %d, %x0 : f64\n  return %r\n",
                &[0.7],
                // d/dx (detach(x)·x) = detach(x): the detached factor is a constant.
                Exactly(&[0.7]),
            ),
            _ => scalar_sample(
                name,
                &format!("  %y = {name} %x0 : f64\n  %r = mul %y, %x0 : f64\n  return %r\n"),
                &[0.45],
                Differences,
            ),
        };
        out.push(sample);
    }
    // Binary ops: arithmetic directly, comparisons and logic through a `select`.
    for op in mad_runtime::ops::BinaryOp::ALL {
        let name = op.name();
        let body = match name {
            "eq" | "ne" | "lt" | "le" | "gt" | "ge" => {
                format!("  %c = {name} %x0, %x1 : bool\n  %r = select %c, %x0, %x1 : f64\n  return %r\n")
            }
            // The order is an integer constant (other orders are NaN); the derivative is in x.
            "polygamma" => "  %n = const 2.0 : f64\n  %y = polygamma %n, %x1 : f64\n  %r = mul %y, %x0 : f64\n  return %r\n".to_string(),
            "and" | "or" => format!(
                "  %p = lt %x0, %x1 : bool\n  %z = const 0.0 : f64\n  %q = gt %x0, %z : bool\n  %c = {name} %p, %q : bool\n  %r = select %c, %x0, %x1 : f64\n  return %r\n"
            ),
            _ => format!("  %y = {name} %x0, %x1 : f64\n  %r = mul %y, %x0 : f64\n  return %r\n"),
        };
        out.push(scalar_sample(name, &body, &[0.7, 1.3], Differences));
    }
    out.push(scalar_sample(
        "const",
        "  %c = const 2.5 : f64\n  %r = mul %x0, %c : f64\n  return %r\n",
        &[0.7],
        Differences,
    ));
    // Through `f32` and back (the tangent passes the cast: d/dx (f64(f32(x))·x) = 2x at an x
    // that `f32` holds exactly; differences would see `f32`'s rounding).
    out.push(scalar_sample(
        "cast",
        "  %y = cast %x0 : f32\n  %z = cast %y : f64\n  %r = mul %z, %x0 : f64\n  return %r\n",
        &[0.5],
        Exactly(&[1.0]),
    ));
    out.push(scalar_sample(
        "select",
        "  %c = lt %x0, %x1 : bool\n  %a = mul %x0, %x1 : f64\n  %b = sin %x1 : f64\n  %r = select %c, %a, %b : f64\n  return %r\n",
        &[0.7, 1.3],
        Differences,
    ));
    let tensor = |op: &str, params: &str, body: &str, args: Vec<Value>| Sample {
        op: op.to_string(),
        ir: format!("func @f({params}) -> f64 {{\n{body}}}\n"),
        args,
        derivative: Differences,
    };
    let v = || vec3([0.3, -1.2, 2.1]);
    out.push(tensor(
        "tensor.pack",
        "%x0: f64, %x1: f64",
        "  %t = tensor.pack %x0, %x1, %x0 : tensor<f64; 3>\n  %u = mul %t, %t : tensor<f64; 3>\n  %r = tensor.sum %u : f64\n  return %r\n",
        vec![Value::F64(0.4), Value::F64(-0.9)],
    ));
    out.push(tensor(
        "tensor.full",
        "%x0: f64, %n: i64",
        "  %t = tensor.full %x0, %n : tensor<f64; ?>\n  %u = mul %t, %t : tensor<f64; ?>\n  %r = tensor.sum %u : f64\n  return %r\n",
        vec![Value::F64(0.4), Value::I64(5)],
    ));
    out.push(tensor(
        "tensor.extract",
        "%v: tensor<f64; 3>",
        "  %a = tensor.extract[1] %v : f64\n  %b = tensor.extract[2] %v : f64\n  %r = mul %a, %b : f64\n  return %r\n",
        vec![v()],
    ));
    out.push(tensor(
        "tensor.index",
        "%v: tensor<f64; ?>, %i: i64",
        "  %a = tensor.index %v, %i : f64\n  %r = mul %a, %a : f64\n  return %r\n",
        vec![Value::Tensor(Tensor::vector(vec![0.3, -1.2, 2.1, 0.8])), Value::I64(2)],
    ));
    out.push(tensor(
        "tensor.insert",
        "%v: tensor<f64; 3>, %x0: f64",
        "  %i = const 1 : i64\n  %w = tensor.insert %v, %x0, %i : tensor<f64; 3>\n  %u = mul %w, %v : tensor<f64; 3>\n  %r = tensor.sum %u : f64\n  return %r\n",
        vec![v(), Value::F64(0.6)],
    ));
    out.push(tensor(
        "tensor.dim",
        "%v: tensor<f64; ?>",
        "  %n = tensor.dim[0] %v : i64\n  %nf = cast %n : f64\n  %s = tensor.sum %v : f64\n  %r = mul %s, %nf : f64\n  return %r\n",
        vec![Value::Tensor(Tensor::vector(vec![0.3, -1.2, 2.1, 0.8]))],
    ));
    out.push(tensor(
        "tensor.matmul",
        "%a: tensor<f64; 2, 2>, %b: tensor<f64; 2, 2>",
        "  %c = tensor.matmul %a, %b : tensor<f64; 2, 2>\n  %d = mul %c, %c : tensor<f64; 2, 2>\n  %r = tensor.sum %d : f64\n  return %r\n",
        vec![
            Value::Tensor(Tensor::from_f64(vec![2, 2], vec![0.3, -1.2, 2.1, 0.8]).unwrap()),
            Value::Tensor(Tensor::from_f64(vec![2, 2], vec![1.1, 0.4, -0.7, 0.9]).unwrap()),
        ],
    ));
    // Batch axes, broadcast: small (scalarized) operands, then heap ones.
    let seq = |shape: Vec<usize>, a: f64, d: f64| {
        let n: usize = shape.iter().product();
        Value::Tensor(Tensor::from_f64(shape, (0..n).map(|i| a + d * i as f64).collect()).unwrap())
    };
    out.push(tensor(
        "tensor.matmul",
        "%a: tensor<f64; 2, 2, 3>, %b: tensor<f64; 3, 2>, %v: tensor<f64; 3>, %c: tensor<f64; 2, 3, 2>",
        "  %p = tensor.matmul %a, %b : tensor<f64; 2, 2, 2>\n  %q = tensor.matmul %a, %v : tensor<f64; 2, 2>\n  %r2 = tensor.matmul %b, %p : tensor<f64; 2, 3, 2>\n  %w = mul %r2, %c : tensor<f64; 2, 3, 2>\n  %s1 = tensor.sum %w : f64\n  %u = sin %q : tensor<f64; 2, 2>\n  %s2 = tensor.sum %u : f64\n  %r = add %s1, %s2 : f64\n  return %r\n",
        vec![seq(vec![2, 2, 3], -0.5, 0.1), seq(vec![3, 2], 0.3, -0.1), seq(vec![3], 0.2, 0.25), seq(vec![2, 3, 2], 0.7, -0.05)],
    ));
    out.push(tensor(
        "tensor.matmul",
        "%a: tensor<f64; ?, ?, ?>, %b: tensor<f64; ?, ?>, %v: tensor<f64; ?>",
        "  %p = tensor.matmul %a, %b : tensor<f64; ?, ?, ?>\n  %q = tensor.matmul %a, %v : tensor<f64; ?, ?>\n  %r2 = tensor.matmul %b, %p : tensor<f64; ?, ?, ?>\n  %e = exp %r2 : tensor<f64; ?, ?, ?>\n  %s1 = tensor.sum %e : f64\n  %u = sin %q : tensor<f64; ?, ?>\n  %s2 = tensor.sum %u : f64\n  %r = add %s1, %s2 : f64\n  return %r\n",
        vec![seq(vec![2, 2, 3], -0.5, 0.1), seq(vec![3, 2], 0.3, -0.1), seq(vec![3], 0.2, 0.25)],
    ));
    out.push(tensor(
        "tensor.transpose",
        "%a: tensor<f64; 2, 2>",
        "  %t = tensor.transpose %a : tensor<f64; 2, 2>\n  %c = tensor.matmul %a, %t : tensor<f64; 2, 2>\n  %d = mul %c, %a : tensor<f64; 2, 2>\n  %r = tensor.sum %d : f64\n  return %r\n",
        vec![Value::Tensor(Tensor::from_f64(vec![2, 2], vec![0.3, -1.2, 2.1, 0.8]).unwrap())],
    ));
    out.push(tensor(
        "tensor.sum",
        "%v: tensor<f64; 3>",
        "  %u = exp %v : tensor<f64; 3>\n  %r = tensor.sum %u : f64\n  return %r\n",
        vec![v()],
    ));
    let m32 = || Value::Tensor(Tensor::from_f64(vec![3, 2], vec![0.3, -1.2, 2.1, 0.8, -0.5, 1.7]).unwrap());
    out.push(tensor(
        "tensor.slice",
        "%a: tensor<f64; ?, ?>, %lo: i64, %hi: i64",
        "  %s = tensor.slice %a, %lo, %hi : tensor<f64; ?, ?>\n  %u = exp %s : tensor<f64; ?, ?>\n  %w = mul %u, %s : tensor<f64; ?, ?>\n  %r = tensor.sum %w : f64\n  return %r\n",
        vec![m32(), Value::I64(1), Value::I64(3)],
    ));
    out.push(tensor(
        "tensor.concat",
        "%a: tensor<f64; ?, ?>, %b: tensor<f64; 2, 2>",
        "  %c = tensor.concat %b, %a, %b : tensor<f64; ?, 2>\n  %u = sin %c : tensor<f64; ?, 2>\n  %i = const 1 : i64\n  %row = tensor.index %u, %i : tensor<f64; 2>\n  %w = mul %c, %c : tensor<f64; ?, 2>\n  %s = tensor.sum %w : f64\n  %t = tensor.sum %row : f64\n  %r = mul %s, %t : f64\n  return %r\n",
        vec![m32(), Value::Tensor(Tensor::from_f64(vec![2, 2], vec![1.1, 0.4, -0.7, 0.9]).unwrap())],
    ));
    out.push(tensor(
        "tensor.reshape",
        "%a: tensor<f64; ?, ?>",
        "  %n = const 6 : i64\n  %two = const 2 : i64\n  %three = const 3 : i64\n  %v = tensor.reshape %a, %n : tensor<f64; ?>\n  %m = tensor.reshape %v, %two, %three : tensor<f64; ?, ?>\n  %i = const 1 : i64\n  %j = const 0 : i64\n  %x = tensor.index %m, %i, %j : f64\n  %e = exp %v : tensor<f64; ?>\n  %s = tensor.sum %e : f64\n  %r = mul %s, %x : f64\n  return %r\n",
        vec![m32()],
    ));
    out.push(tensor(
        "tensor.permute",
        "%a: tensor<f64; 2, 3, 2>, %b: tensor<f64; ?, ?, ?>",
        "  %p = tensor.permute[2, 0, 1] %a : tensor<f64; 2, 2, 3>\n  %q = tensor.permute[1, 2, 0] %b : tensor<f64; ?, ?, ?>\n  %u = sin %p : tensor<f64; 2, 2, 3>\n  %w = mul %u, %q : tensor<f64; 2, 2, 3>\n  %r = tensor.sum %w : f64\n  return %r\n",
        vec![
            Value::Tensor(Tensor::from_f64(vec![2, 3, 2], (0..12).map(|i| 0.1 * i as f64 - 0.4).collect()).unwrap()),
            Value::Tensor(Tensor::from_f64(vec![3, 2, 2], (0..12).map(|i| 0.3 - 0.05 * i as f64).collect()).unwrap()),
        ],
    ));
    out.push(tensor(
        "select",
        "%a: tensor<f64; 2, 2>, %b: tensor<f64; ?, ?>",
        "  %c = lt %a, %b : tensor<bool; 2, 2>\n  %u = sin %a : tensor<f64; 2, 2>\n  %s = select %c, %u, %b : tensor<f64; 2, 2>\n  %t = select %c, %b, %a : tensor<f64; 2, 2>\n  %w = mul %s, %t : tensor<f64; 2, 2>\n  %r = tensor.sum %w : f64\n  return %r\n",
        vec![
            Value::Tensor(Tensor::from_f64(vec![2, 2], vec![0.3, -1.2, 2.1, 0.8]).unwrap()),
            Value::Tensor(Tensor::from_f64(vec![2, 2], vec![1.1, -2.4, 1.7, 0.9]).unwrap()),
        ],
    ));
    out.push(tensor(
        "tensor.broadcast",
        "%v: tensor<f64; 3>, %c: tensor<f64; 2, 1>",
        "  %two = const 2 : i64\n  %three = const 3 : i64\n  %b = tensor.broadcast %v, %two, %three : tensor<f64; 2, 3>\n  %d = tensor.broadcast %c, %two, %three : tensor<f64; 2, 3>\n  %p = mul %b, %d : tensor<f64; 2, 3>\n  %u = sin %p : tensor<f64; 2, 3>\n  %w = mul %u, %b : tensor<f64; 2, 3>\n  %r = tensor.sum %w : f64\n  return %r\n",
        vec![v(), Value::Tensor(Tensor::from_f64(vec![2, 1], vec![1.1, -0.4]).unwrap())],
    ));
    out.push(tensor(
        "tensor.sum_to",
        "%a: tensor<f64; ?, ?>",
        "  %one = const 1 : i64\n  %two = const 2 : i64\n  %u = exp %a : tensor<f64; ?, ?>\n  %s = tensor.sum_to %u, %two : tensor<f64; ?>\n  %c = tensor.sum_to %a, %one, %two : tensor<f64; ?, ?>\n  %p = mul %s, %s : tensor<f64; ?>\n  %q = tensor.sum %p : f64\n  %t = tensor.sum %c : f64\n  %r = mul %q, %t : f64\n  return %r\n",
        vec![m32()],
    ));
    out.push(tensor(
        "tensor.max_to",
        "%a: tensor<f64; ?, ?>",
        "  %one = const 1 : i64\n  %two = const 2 : i64\n  %u = sin %a : tensor<f64; ?, ?>\n  %m = tensor.max_to %u, %two : tensor<f64; ?>\n  %c = tensor.max_to %a, %one, %two : tensor<f64; ?, ?>\n  %p = mul %m, %m : tensor<f64; ?>\n  %q = tensor.sum %p : f64\n  %t = tensor.sum %c : f64\n  %r = mul %q, %t : f64\n  return %r\n",
        vec![m32()],
    ));
    out.push(tensor(
        "tensor.min_to",
        "%a: tensor<f64; 3, 2>",
        "  %one = const 1 : i64\n  %three = const 3 : i64\n  %u = exp %a : tensor<f64; 3, 2>\n  %m = tensor.min_to %u, %three, %one : tensor<f64; 3, 1>\n  %p = mul %m, %m : tensor<f64; 3, 1>\n  %r = tensor.sum %p : f64\n  return %r\n",
        vec![m32()],
    ));
    out.push(scalar_sample(
        "tuple",
        "  %t = tuple %x0, %x1 : (f64, f64)\n  %a = tuple.get[1] %t : f64\n  %r = mul %a, %x0 : f64\n  return %r\n",
        &[0.7, 1.3],
        Differences,
    ));
    out.push(scalar_sample(
        "tuple.get",
        "  %t = tuple %x1, %x0 : (f64, f64)\n  %a = tuple.get[0] %t : f64\n  %b = tuple.get[1] %t : f64\n  %r = div %a, %b : f64\n  return %r\n",
        &[0.7, 1.3],
        Differences,
    ));
    out.push(Sample {
        op: "call".into(),
        ir: "func @sq(%x: f64) -> f64 {\n  %y = mul %x, %x : f64\n  %z = sin %y : f64\n  return %z\n}\n\nfunc @f(%x0: f64) -> f64 {\n  %y = call @sq(%x0) : f64\n  %r = mul %y, %x0 : f64\n  return %r\n}\n".into(),
        args: vec![Value::F64(0.8)],
        derivative: Differences,
    });
    out.push(scalar_sample(
        "print",
        "  %p = print %x0 : ()\n  %r = mul %x0, %x0 : f64\n  return %r\n",
        &[0.8],
        Differences,
    ));
    out.push(scalar_sample(
        "print.str",
        "  %p = print.str @\"x\" : ()\n  %r = mul %x0, %x0 : f64\n  return %r\n",
        &[0.8],
        Differences,
    ));
    out.push(scalar_sample(
        "scf.if",
        "  %z = const 0.0 : f64\n  %c = gt %x0, %z : bool\n  %r = scf.if %c : f64 {\n    %a = mul %x0, %x0 : f64\n    yield %a\n  } else {\n    %b = neg %x0 : f64\n    yield %b\n  }\n  return %r\n",
        &[0.8],
        Differences,
    ));
    out.push(scalar_sample(
        "scf.for",
        "  %lo = const 0 : i64\n  %hi = const 4 : i64\n  %r = scf.for %lo, %hi, %x0 : f64 {\n  ^(%i: i64, %s: f64):\n    %t = mul %s, %x0 : f64\n    %u = sin %t : f64\n    yield %u\n  }\n  return %r\n",
        &[0.8],
        Differences,
    ));
    out.push(scalar_sample(
        "scf.while",
        "  %r = scf.while %x0 : f64 {\n  ^(%s: f64):\n    %lim = const 10.0 : f64\n    %c = lt %s, %lim : bool\n    yield %c\n  } do {\n  ^(%s2: f64):\n    %t = mul %s2, %x0 : f64\n    %u = add %t, %x0 : f64\n    yield %u\n  }\n  return %r\n",
        &[1.7],
        Differences,
    ));
    out.push(scalar_sample(
        "tape.push",
        "  tape.push %x0 : ()\n  %y = tape.pop : f64\n  %r = mul %y, %x0 : f64\n  return %r\n",
        &[0.8],
        None("the tape carries reverse mode's own values; a function that uses it is already a derivative"),
    ));
    out.push(scalar_sample(
        "tape.pop",
        "  %a = mul %x0, %x0 : f64\n  tape.push %a, %x0 : ()\n  %b, %c = tape.pop : (f64, f64)\n  %r = add %b, %c : f64\n  return %r\n",
        &[0.8],
        None("the tape carries reverse mode's own values; a function that uses it is already a derivative"),
    ));
    out
}

#[test]
fn every_op_has_a_sample() {
    let have: Vec<String> = samples().into_iter().map(|s| s.op).collect();
    let missing: Vec<&str> = OpKind::catalog()
        .iter()
        .map(OpKind::name)
        .filter(|name| !have.iter().any(|h| h == name))
        .collect();
    assert!(
        missing.is_empty(),
        "ops without a sample (a run on every back end and a derivative test): {missing:?}"
    );
}

/// The value's exact text (floats as their shortest round-trip form).
fn exact(v: &Value) -> String {
    format!("{v:?}")
}

#[test]
fn every_sample_runs_alike_on_every_back_end_and_differentiates() {
    let mut failures = Vec::new();
    for s in samples() {
        let mut m = module(&s.ir);
        // The sample uses the op it stands for.
        let uses = m.functions.iter().any(|(_, f)| f.ops.iter().any(|(_, op)| op.kind.name() == s.op));
        if !uses {
            failures.push(format!("{}: the sample does not use the op", s.op));
            continue;
        }
        let f = func(&m, "f");
        let interp = Interpreter::compile(&m, &[], &Interpreter::default()).unwrap_or_else(|e| match e {});
        let jit = match Cranelift::compile(&m, &[], &Default::default()) {
            Ok(j) => j,
            Err(e) => {
                failures.push(format!("{}: Cranelift cannot compile it: {e}", s.op));
                continue;
            }
        };
        let on = |module: &dyn CompiledModule| module.call_traced(f, &s.args, &mut std::io::sink());
        let (a, b) = (on(&interp), on(&jit));
        match (&a, &b) {
            (Ok(x), Ok(y)) if exact(x) == exact(y) => {}
            _ => {
                failures.push(format!("{}: interpreter {a:?}, Cranelift {b:?}", s.op));
                continue;
            }
        }
        let want = match s.derivative {
            Derivative::None(why) => {
                // No rule: differentiation refuses it with an error, not a wrong number.
                if mad::ad::vjp(&mut m, f).is_ok() {
                    failures.push(format!("{}: reverse mode accepted it, though {why}", s.op));
                }
                continue;
            }
            Derivative::Exactly(d) => d.to_vec(),
            Derivative::Differences => fd_grad(&scalar_fn(&m, f, &s.args), &flatten_args(&s.args), 1e-6),
        };
        for (mode, got) in [("forward", forward_grad(&mut m, f, &s.args)), ("reverse", reverse_grad(&mut m, f, &s.args))] {
            let ok = got.len() == want.len() && got.iter().zip(&want).all(|(g, w)| close(*g, *w, 1e-6));
            if !ok {
                failures.push(format!("{}: {mode} mode gives {got:?}, expected {want:?}", s.op));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
