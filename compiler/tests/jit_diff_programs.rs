//! Interpreter vs JIT on whole programs with random arguments: the `.ir`
//! corpus under `tests/ir/`, and programs with nested control flow, loops
//! carrying small and heap tensors, recursion, mutual recursion and run-time
//! errors inside loops and calls.

use crate::common;

use common::diff::{diff_module, diff_text};
use mad::ir::parse::parse_module;

#[test]
fn ir_corpus() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/ir");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("tests/ir")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for path in files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "ir"))
    {
        let text = std::fs::read_to_string(path).expect("read");
        let m = parse_module(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        diff_module(&m, 24, &path.display().to_string(), true);
    }
}

#[test]
fn loops_carrying_tensors_with_errors_and_prints() {
    let text = r#"
// for i in 0..n: v = v * x + v[i % 3]; print(v); with an index that may go out of bounds at the end
func @small_loop(%v0: tensor<f64; 3>, %x: f64, %n: i64, %k: i64) -> tensor<f64; 3> {
  %zero = const 0 : i64
  %cap = const 30 : i64
  %nb = min %n, %cap : i64
  %v = scf.for %zero, %nb, %v0 : tensor<f64; 3> {
  ^(%i: i64, %v1: tensor<f64; 3>):
    %three = const 3 : i64
    %j = rem %i, %three : i64
    %e = tensor.index %v1, %j : f64
    %s = mul %v1, %x : tensor<f64; 3>
    %t = add %s, %e : tensor<f64; 3>
    %p = print %t : ()
    yield %t
  }
  %last = tensor.index %v, %k : f64
  %r = tensor.insert %v, %last, %zero : tensor<f64; 3>
  return %r
}

// heap accumulation with a data-dependent while loop
func @heap_while(%d: tensor<f64; ?>, %limit: i64) -> (tensor<f64; ?>, i64) {
  %zero = const 0 : i64
  %w, %c = scf.while %d, %zero : (tensor<f64; ?>, i64) {
  ^(%a: tensor<f64; ?>, %k: i64):
    %cap = const 40 : i64
    %lb = min %limit, %cap : i64
    %go = lt %k, %lb : bool
    yield %go
  } do {
  ^(%b: tensor<f64; ?>, %j: i64):
    %n = tensor.dim[0] %b : i64
    %idx = rem %j, %n : i64
    %x = tensor.index %b, %idx : f64
    %h = const 0.5 : f64
    %y = mul %x, %h : f64
    %b2 = tensor.insert %b, %y, %idx : tensor<f64; ?>
    %one = const 1 : i64
    %j2 = add %j, %one : i64
    yield %b2, %j2
  }
  %r = tuple %w, %c : (tensor<f64; ?>, i64)
  return %r
}

// nested ifs inside a for, an integer division that may fail, and a small/heap coercion
func @nested(%n: i64, %d: i64, %v: tensor<i64; 4>) -> (i64, tensor<i64; ?>) {
  %zero = const 0 : i64
  %cap = const 50 : i64
  %nb = min %n, %cap : i64
  %acc = scf.for %zero, %nb, %zero : i64 {
  ^(%i: i64, %a: i64):
    %two = const 2 : i64
    %r = rem %i, %two : i64
    %even = eq %r, %zero : bool
    %next = scf.if %even : i64 {
      %q = div %i, %d : i64
      %s = add %a, %q : i64
      yield %s
    } else {
      %big = gt %a, %i : bool
      %w = scf.if %big : i64 {
        %m = sub %a, %i : i64
        yield %m
      } else {
        %four = const 4 : i64
        %k = rem %i, %four : i64
        %e = tensor.index %v, %k : i64
        %m2 = add %a, %e : i64
        yield %m2
      }
      yield %w
    }
    yield %next
  }
  %dyn = scf.if %true_ : tensor<i64; ?> {
    yield %v
  } else {
    yield %v
  }
  %out = tuple %acc, %dyn : (i64, tensor<i64; ?>)
  return %out
}
"#;
    // `%true_` is defined by a helper: prepend it to the nested function.
    let text = text.replace(
        "  %dyn = scf.if %true_",
        "  %true_ = const true : bool\n  %dyn = scf.if %true_",
    );
    diff_text(&text, 64);
}

#[test]
fn recursion_mutual_recursion_and_tensor_calls() {
    let text = r#"
// sum of v[i..] by recursion (index goes out of bounds for negative i)
func @rsum(%v: tensor<f64; ?>, %i: i64) -> f64 {
  %n = tensor.dim[0] %v : i64
  %done = ge %i, %n : bool
  %r = scf.if %done : f64 {
    %z = const 0.0 : f64
    yield %z
  } else {
    %x = tensor.index %v, %i : f64
    %one = const 1 : i64
    %j = add %i, %one : i64
    %rest = call @rsum(%v, %j) : f64
    %s = add %x, %rest : f64
    yield %s
  }
  return %r
}

// ackermann-like mutual recursion bounded by small arguments
func @ping(%n: i64, %acc: tensor<f64; 2>) -> tensor<f64; 2> {
  %zero = const 0 : i64
  %big = const 20 : i64
  %small = le %n, %zero : bool
  %huge = gt %n, %big : bool
  %stop = or %small, %huge : bool
  %r = scf.if %stop : tensor<f64; 2> {
    yield %acc
  } else {
    %one = const 1 : i64
    %m = sub %n, %one : i64
    %two = const 2.0 : f64
    %a2 = mul %acc, %two : tensor<f64; 2>
    %p = print %a2 : ()
    %x = call @pong(%m, %a2) : tensor<f64; 2>
    yield %x
  }
  return %r
}

func @pong(%n: i64, %acc: tensor<f64; 2>) -> tensor<f64; 2> {
  %half = const 0.5 : f64
  %a = add %acc, %half : tensor<f64; 2>
  %three = const 3 : i64
  %m = rem %n, %three : i64
  %r = call @ping(%n, %a) : tensor<f64; 2>
  return %r
}

// a function taking a small tensor where the caller passes a heap one
func @norm2(%v: tensor<f64; ?>) -> f64 {
  %sq = mul %v, %v : tensor<f64; ?>
  %s = tensor.sum %sq : f64
  return %s
}

func @caller(%a: tensor<f64; 3>, %b: tensor<f64; 70>) -> f64 {
  %x = call @norm2(%a) : f64
  %y = call @norm2(%b) : f64
  %r = add %x, %y : f64
  return %r
}
"#;
    diff_text(text, 64);
}

#[test]
fn deep_recursion_hits_the_same_limit() {
    let text = r#"
func @down(%n: i64) -> i64 {
  %zero = const 0 : i64
  %stop = le %n, %zero : bool
  %r = scf.if %stop : i64 {
    yield %zero
  } else {
    %one = const 1 : i64
    %m = sub %n, %one : i64
    %x = call @down(%m) : i64
    %y = add %x, %one : i64
    yield %y
  }
  return %r
}
"#;
    let m = parse_module(text).unwrap();
    let jit = mad::back::cranelift::compile(&m, &[]).unwrap();
    let f = m.find("down").unwrap();
    for n in [0i64, 1, 11_999, 12_000, 12_001, 1 << 40] {
        let args = [mad_runtime::Value::I64(n)];
        common::diff::compare(&m, &jit, f, &args).unwrap_or_else(|e| panic!("n = {n}: {e}"));
    }
}
