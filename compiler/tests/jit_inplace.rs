//! In-place element updates of loop-carried heap tensors in the JIT
//! (`codegen::inplace`): the analysis picks the accumulator pattern and
//! only it, and the compiled code agrees bit for bit with the interpreter,
//! including reads of the accumulator at a loop-invariant index before each
//! write, out-of-bounds indices, several element kinds and ranks.

use crate::common;

use common::diff::diff_module;
use mad::codegen::inplace::analyze;
use mad::ir::parse::parse_module;

/// `acc` starts as fresh zeros of `len x`; each trip reads `acc[0]` (a
/// loop-invariant address), then writes `acc[i % len] = acc[i % len] + x[i % len] * acc0`.
const ACCUM: &str = "
func @accum(%x: tensor<f64; ?>, %n: i64) -> (tensor<f64; ?>, f64) {
  %z = const 0.0 : f64
  %lo = const 0 : i64
  %zero = const 0 : i64
  %extra = const 20 : i64
  %hi = add %n, %extra : i64
  %len = tensor.dim[0] %x : i64
  %acc0 = tensor.full %z, %len : tensor<f64; ?>
  %r, %s = scf.for %lo, %hi, %acc0, %z : (tensor<f64; ?>, f64) {
  ^(%i: i64, %acc: tensor<f64; ?>, %t: f64):
    %k = rem %i, %len : i64
    %first = tensor.index %acc, %zero : f64
    %one = const 1.0 : f64
    %w = add %first, %one : f64
    %xi = tensor.index %x, %k : f64
    %v = mul %xi, %w : f64
    %old = tensor.index %acc, %k : f64
    %new = add %old, %v : f64
    %next = tensor.insert %acc, %new, %k : tensor<f64; ?>
    %t2 = add %t, %first : f64
    yield %next, %t2
  }
  %out = tuple %r, %s : (tensor<f64; ?>, f64)
  return %out
}
func @oob(%x: tensor<i64; ?>, %n: i64) -> tensor<i64; ?> {
  %z = const 0 : i64
  %lo = const 0 : i64
  %len = tensor.dim[0] %x : i64
  %acc0 = tensor.full %z, %len : tensor<i64; ?>
  %r = scf.for %lo, %n, %acc0 : tensor<i64; ?> {
  ^(%i: i64, %acc: tensor<i64; ?>):
    %old = tensor.index %acc, %i : i64
    %xi = tensor.index %x, %i : i64
    %new = add %old, %xi : i64
    %next = tensor.insert %acc, %new, %i : tensor<i64; ?>
    yield %next
  }
  return %r
}
func @flags(%m: tensor<bool; ?, ?>, %n: i64) -> tensor<bool; ?, ?> {
  %f = const false : bool
  %lo = const 0 : i64
  %extra = const 7 : i64
  %hi = add %n, %extra : i64
  %a = tensor.dim[0] %m : i64
  %b = tensor.dim[1] %m : i64
  %acc0 = tensor.full %f, %a, %b : tensor<bool; ?, ?>
  %r = scf.for %lo, %hi, %acc0 : tensor<bool; ?, ?> {
  ^(%i: i64, %acc: tensor<bool; ?, ?>):
    %p = rem %i, %a : i64
    %q = rem %i, %b : i64
    %old = tensor.index %acc, %p, %q : bool
    %mi = tensor.index %m, %p, %q : bool
    %new = ne %old, %mi : bool
    %next = tensor.insert %acc, %new, %p, %q : tensor<bool; ?, ?>
    yield %next
  }
  return %r
}
";

/// The init is used after the loop too (so the loop must start from a copy), or the old
/// value escapes through a yield (so every write copies).
const SHARED: &str = "
func @shared(%x: tensor<f64; ?>, %n: i64) -> (tensor<f64; ?>, tensor<f64; ?>) {
  %z = const 0.0 : f64
  %lo = const 0 : i64
  %len = tensor.dim[0] %x : i64
  %acc0 = tensor.full %z, %len : tensor<f64; ?>
  %r = scf.for %lo, %n, %acc0 : tensor<f64; ?> {
  ^(%i: i64, %acc: tensor<f64; ?>):
    %k = rem %i, %len : i64
    %xi = tensor.index %x, %k : f64
    %next = tensor.insert %acc, %xi, %k : tensor<f64; ?>
    yield %next
  }
  %out = tuple %r, %acc0 : (tensor<f64; ?>, tensor<f64; ?>)
  return %out
}
func @escapes(%x: tensor<f64; ?>, %n: i64) -> tensor<f64; ?> {
  %z = const 0.0 : f64
  %lo = const 0 : i64
  %len = tensor.dim[0] %x : i64
  %acc0 = tensor.full %z, %len : tensor<f64; ?>
  %r, %keep = scf.for %lo, %n, %acc0, %x : (tensor<f64; ?>, tensor<f64; ?>) {
  ^(%i: i64, %acc: tensor<f64; ?>, %old: tensor<f64; ?>):
    %k = rem %i, %len : i64
    %xi = tensor.index %x, %k : f64
    %next = tensor.insert %acc, %xi, %k : tensor<f64; ?>
    yield %next, %acc
  }
  %s = add %r, %keep : tensor<f64; ?>
  return %s
}
";

fn inserts_in_place(text: &str) -> usize {
    let m = parse_module(text).expect("parses");
    m.functions
        .iter()
        .map(|(_, f)| analyze(f).inserts.len())
        .sum()
}

#[test]
fn accumulators_are_updated_in_place_and_agree() {
    assert_eq!(inserts_in_place(ACCUM), 3);
    let m = parse_module(ACCUM).expect("parses");
    diff_module(&m, 300, ACCUM, true);
}

#[test]
fn observable_old_values_are_copied() {
    // `shared` reads its init after the loop: the loop starts from a copy (once) and writes
    // that in place; `escapes` yields the old value itself, so every write copies.
    let m = parse_module(SHARED).expect("parses");
    let shared = analyze(&m.functions[m.find("shared").unwrap()]);
    assert_eq!((shared.inserts.len(), shared.copied_inits.len()), (1, 1));
    let escapes = analyze(&m.functions[m.find("escapes").unwrap()]);
    assert_eq!((escapes.inserts.len(), escapes.copied_inits.len()), (0, 0));
    let m = parse_module(SHARED).expect("parses");
    diff_module(&m, 200, SHARED, true);
}
