//! Loops that free their trips' heap temporaries (`codegen::release`):
//! the analysis picks the loops whose bodies allocate and no others (not those
//! that push heap values on the tape), and the compiled code agrees bit for bit
//! with the interpreter when trips allocate temporaries, carry fresh heap
//! tensors, yield tensors from before the loop, nest, and call allocating
//! functions.

use crate::common;

use common::diff::diff_module;
use mad::codegen::release::Summary;
use mad::ir::parse::parse_module;

const PROGRAMS: &str = "
func @make(%x: tensor<f64; ?>, %s: f64) -> tensor<f64; ?> {
  %y = mul %x, %s : tensor<f64; ?>
  return %y
}
func @loops(%x: tensor<f64; ?>, %n: i64) -> (tensor<f64; ?>, tensor<f64; ?>, f64) {
  %lo = const 0 : i64
  %z = const 0.0 : f64
  %extra = const 4 : i64
  %hi = add %n, %extra : i64
  %r, %keep, %s = scf.for %lo, %hi, %x, %x, %z : (tensor<f64; ?>, tensor<f64; ?>, f64) {
  ^(%i: i64, %acc: tensor<f64; ?>, %same: tensor<f64; ?>, %t: f64):
    %f = cast %i : f64
    %tmp = call @make(%acc, %f) : tensor<f64; ?>
    %tmp2 = add %tmp, %x : tensor<f64; ?>
    %inner, %u = scf.for %lo, %n, %tmp2, %t : (tensor<f64; ?>, f64) {
    ^(%j: i64, %a: tensor<f64; ?>, %w: f64):
      %b = add %a, %a : tensor<f64; ?>
      %c = tensor.sum %b : f64
      %w2 = add %w, %c : f64
      yield %b, %w2
    }
    %sum = tensor.sum %inner : f64
    %t2 = add %u, %sum : f64
    %half = const 0.5 : f64
    %next = mul %inner, %half : tensor<f64; ?>
    yield %next, %same, %t2
  }
  %out = tuple %r, %keep, %s : (tensor<f64; ?>, tensor<f64; ?>, f64)
  return %out
}
func @scalars_only(%x: tensor<f64; ?>, %n: i64) -> f64 {
  %lo = const 0 : i64
  %z = const 0.0 : f64
  %s = scf.for %lo, %n, %z : f64 {
  ^(%i: i64, %t: f64):
    %k = const 0 : i64
    %len = tensor.dim[0] %x : i64
    %ok = lt %k, %len : bool
    %v = scf.if %ok : f64 {
      %e = tensor.index %x, %k : f64
      yield %e
    } else {
      yield %z
    }
    %t2 = add %t, %v : f64
    yield %t2
  }
  return %s
}
";

const TAPED: &str = "
func @taped(%x: tensor<f64; ?>, %n: i64) -> f64 {
  %lo = const 0 : i64
  %z = const 0.0 : f64
  %s = scf.for %lo, %n, %z : f64 {
  ^(%i: i64, %t: f64):
    %y = add %x, %x : tensor<f64; ?>
    tape.push %y : ()
    yield %t
  }
  return %s
}
";

fn released(text: &str, name: &str) -> usize {
    let m = parse_module(text).expect("parses");
    let s = Summary::of(&m.functions);
    s.loops_to_release(&m.functions[m.find(name).expect("function")])
        .len()
}

#[test]
fn allocating_loops_are_released_and_agree() {
    assert_eq!(released(PROGRAMS, "loops"), 2);
    assert_eq!(released(PROGRAMS, "scalars_only"), 0);
    let m = parse_module(PROGRAMS).expect("parses");
    diff_module(&m, 300, PROGRAMS, true);
}

#[test]
fn loops_pushing_heap_values_on_the_tape_are_not_released() {
    assert_eq!(released(TAPED, "taped"), 0);
}
