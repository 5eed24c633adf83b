//! Interpreter vs JIT, op by op, on random inputs: every unary and binary op
//! over every kind the validator accepts, on scalars, scalarized tensors, heap
//! tensors (static and dynamic), with scalar broadcast; casts; every tensor op.

use crate::common;

use common::diff::diff_text;
use mad::ir::{BinaryOp, UnaryOp};

const CASES: u32 = 48;

/// Tensor shapes: scalar, small vector, small matrix, large (heap) vector, dynamic vector.
const SHAPES: [&str; 5] = ["", "3", "2, 3", "70", "?"];

fn ty(kind: &str, shape: &str) -> String {
    if shape.is_empty() {
        kind.to_string()
    } else {
        format!("tensor<{kind}; {shape}>")
    }
}

fn unary_kinds(op: UnaryOp) -> &'static [&'static str] {
    match op {
        UnaryOp::Not => &["bool"],
        UnaryOp::Neg | UnaryOp::Abs => &["f64", "f32", "i64"],
        _ => &["f64", "f32"],
    }
}

fn binary_kinds(op: BinaryOp) -> &'static [&'static str] {
    if op.is_logical() {
        &["bool"]
    } else if matches!(op, BinaryOp::Eq | BinaryOp::Ne) {
        &["f64", "f32", "i64", "bool"]
    } else if op.float_only() {
        &["f64", "f32"]
    } else {
        &["f64", "f32", "i64"]
    }
}

#[test]
fn unary_ops() {
    for op in UnaryOp::ALL {
        for k in unary_kinds(op) {
            let mut text = String::new();
            for (i, s) in SHAPES.iter().enumerate() {
                let t = ty(k, s);
                text += &format!(
                    "func @u{i}(%x: {t}) -> {t} {{\n  %r = {} %x : {t}\n  return %r\n}}\n",
                    op.name()
                );
            }
            diff_text(&text, CASES);
        }
    }
}

#[test]
fn binary_ops() {
    for op in BinaryOp::ALL {
        for k in binary_kinds(op) {
            let rk = if op.is_comparison() { "bool" } else { k };
            let mut text = String::new();
            let pairs: [(&str, &str); 9] = [
                ("", ""),
                ("3", "3"),
                ("2, 2", "2, 2"),
                ("70", "70"),
                ("?", "?"),
                ("", "3"),
                ("3", ""),
                ("", "70"),
                ("?", ""),
            ];
            for (i, (sa, sb)) in pairs.iter().enumerate() {
                let (ta, tb) = (ty(k, sa), ty(k, sb));
                let rs = if sa.is_empty() { sb } else { sa };
                let tr = ty(rk, rs);
                text += &format!(
                    "func @b{i}(%a: {ta}, %b: {tb}) -> {tr} {{\n  %r = {} %a, %b : {tr}\n  return %r\n}}\n",
                    op.name()
                );
            }
            diff_text(&text, CASES);
        }
    }
}

#[test]
fn casts() {
    let pairs = [
        ("f64", "f32"),
        ("f64", "i64"),
        ("f32", "f64"),
        ("f32", "i64"),
        ("i64", "f64"),
        ("i64", "f32"),
        ("bool", "i64"),
        ("f64", "f64"),
    ];
    let mut text = String::new();
    for (i, (from, to)) in pairs.iter().enumerate() {
        for (j, s) in SHAPES.iter().enumerate() {
            let (tf, tt) = (ty(from, s), ty(to, s));
            text += &format!(
                "func @c{i}_{j}(%x: {tf}) -> {tt} {{\n  %r = cast %x : {tt}\n  return %r\n}}\n"
            );
        }
    }
    diff_text(&text, CASES);
}

#[test]
fn select_tuple_and_tuple_get() {
    let text = r#"
func @sel(%c: bool, %a: f64, %b: f64) -> f64 {
  %r = select %c, %a, %b : f64
  return %r
}
func @selv(%c: bool, %a: tensor<i64; 3>, %b: tensor<i64; 3>) -> tensor<i64; 3> {
  %r = select %c, %a, %b : tensor<i64; 3>
  return %r
}
func @selh(%c: bool, %a: tensor<f32; 70>, %b: tensor<f32; 70>) -> tensor<f32; 70> {
  %r = select %c, %a, %b : tensor<f32; 70>
  return %r
}
func @tup(%a: f64, %v: tensor<f64; 2>, %d: tensor<i64; ?>, %b: bool) -> (bool, tensor<i64; ?>, f64, tensor<f64; 2>) {
  %t = tuple %a, %v, %d, %b : (f64, tensor<f64; 2>, tensor<i64; ?>, bool)
  %x0 = tuple.get[0] %t : f64
  %x1 = tuple.get[1] %t : tensor<f64; 2>
  %x2 = tuple.get[2] %t : tensor<i64; ?>
  %x3 = tuple.get[3] %t : bool
  %r = tuple %x3, %x2, %x0, %x1 : (bool, tensor<i64; ?>, f64, tensor<f64; 2>)
  return %r
}
"#;
    diff_text(text, CASES);
}

#[test]
fn pack_and_full() {
    let text = r#"
func @pack_scalars(%a: f64, %b: f64, %c: f64) -> tensor<f64; 3> {
  %r = tensor.pack %a, %b, %c : tensor<f64; 3>
  return %r
}
func @pack_rows(%a: tensor<i64; 3>, %b: tensor<i64; 3>) -> tensor<i64; 2, 3> {
  %r = tensor.pack %a, %b : tensor<i64; 2, 3>
  return %r
}
func @pack_heap(%a: tensor<f64; 40>, %b: tensor<f64; 40>) -> tensor<f64; 2, 40> {
  %r = tensor.pack %a, %b : tensor<f64; 2, 40>
  return %r
}
func @pack_dyn(%a: tensor<f32; ?>, %b: tensor<f32; ?>) -> tensor<f32; 2, ?> {
  %r = tensor.pack %a, %b : tensor<f32; 2, ?>
  return %r
}
func @full_dyn(%x: f64, %n: i64) -> tensor<f64; ?> {
  %r = tensor.full %x, %n : tensor<f64; ?>
  return %r
}
func @full_small(%x: i64) -> tensor<i64; 2, 3> {
  %two = const 2 : i64
  %three = const 3 : i64
  %r = tensor.full %x, %two, %three : tensor<i64; 2, 3>
  return %r
}
func @full_rank0(%x: bool) -> tensor<bool;> {
  %r = tensor.full %x : tensor<bool;>
  return %r
}
"#;
    diff_text(text, CASES);
}

#[test]
fn extract_index_insert_dim() {
    let text = r#"
func @extract(%v: tensor<f64; 4>, %m: tensor<i64; 3, 2>, %h: tensor<f64; 70>, %d: tensor<f64; ?>) -> (f64, tensor<i64; 2>, f64, f64) {
  %a = tensor.extract[3] %v : f64
  %b = tensor.extract[1] %m : tensor<i64; 2>
  %c = tensor.extract[69] %h : f64
  %e = tensor.extract[2] %d : f64
  %r = tuple %a, %b, %c, %e : (f64, tensor<i64; 2>, f64, f64)
  return %r
}
func @index_small(%m: tensor<f64; 3, 2>, %i: i64, %j: i64) -> (f64, tensor<f64; 2>) {
  %a = tensor.index %m, %i, %j : f64
  %b = tensor.index %m, %j : tensor<f64; 2>
  %r = tuple %a, %b : (f64, tensor<f64; 2>)
  return %r
}
func @index_heap(%h: tensor<i64; 70>, %d: tensor<f64; ?, 3>, %i: i64) -> (i64, tensor<f64; 3>, f64) {
  %a = tensor.index %h, %i : i64
  %b = tensor.index %d, %i : tensor<f64; 3>
  %z = const 0 : i64
  %c = tensor.index %d, %z, %i : f64
  %r = tuple %a, %b, %c : (i64, tensor<f64; 3>, f64)
  return %r
}
func @insert_small(%m: tensor<f64; 3, 2>, %x: f64, %row: tensor<f64; 2>, %i: i64, %j: i64) -> (tensor<f64; 3, 2>, tensor<f64; 3, 2>) {
  %a = tensor.insert %m, %x, %i, %j : tensor<f64; 3, 2>
  %b = tensor.insert %a, %row, %j : tensor<f64; 3, 2>
  %r = tuple %a, %b : (tensor<f64; 3, 2>, tensor<f64; 3, 2>)
  return %r
}
func @insert_heap(%h: tensor<bool; 70>, %d: tensor<f32; ?, 2>, %x: bool, %row: tensor<f32; 2>, %i: i64) -> (tensor<bool; 70>, tensor<f32; ?, 2>) {
  %a = tensor.insert %h, %x, %i : tensor<bool; 70>
  %b = tensor.insert %d, %row, %i : tensor<f32; ?, 2>
  %r = tuple %a, %b : (tensor<bool; 70>, tensor<f32; ?, 2>)
  return %r
}
func @const_small(%m: tensor<f64; 3, 2>, %x: f64, %row: tensor<f64; 2>) -> (f64, tensor<f64; 2>, tensor<f64; 3, 2>, tensor<f64; 3, 2>) {
  %one = const 1 : i64
  %two = const 2 : i64
  %a = tensor.index %m, %two, %one : f64
  %b = tensor.index %m, %one : tensor<f64; 2>
  %c = tensor.insert %m, %x, %one, %one : tensor<f64; 3, 2>
  %e = tensor.insert %c, %row, %two : tensor<f64; 3, 2>
  %r = tuple %a, %b, %c, %e : (f64, tensor<f64; 2>, tensor<f64; 3, 2>, tensor<f64; 3, 2>)
  return %r
}
func @const_small_oob(%m: tensor<f64; 3, 2>, %x: f64) -> (f64, tensor<f64; 3, 2>) {
  %one = const 1 : i64
  %three = const 3 : i64
  %neg = const -1 : i64
  %a = tensor.index %m, %one, %three : f64
  %c = tensor.insert %m, %x, %neg, %one : tensor<f64; 3, 2>
  %r = tuple %a, %c : (f64, tensor<f64; 3, 2>)
  return %r
}
func @dims(%d: tensor<f64; ?, 3>, %m: tensor<i64; 2, 5>) -> (i64, i64, i64, i64) {
  %a = tensor.dim[0] %d : i64
  %b = tensor.dim[1] %d : i64
  %c = tensor.dim[0] %m : i64
  %e = tensor.dim[1] %m : i64
  %r = tuple %a, %b, %c, %e : (i64, i64, i64, i64)
  return %r
}
"#;
    diff_text(text, CASES * 2);
}

#[test]
fn matmul_transpose_sum() {
    let mut text = String::new();
    for k in ["f64", "f32"] {
        text += &format!(
            r#"
func @mm_{k}(%a: tensor<{k}; 2, 3>, %b: tensor<{k}; 3, 4>, %v: tensor<{k}; 3>) -> (tensor<{k}; 2, 4>, tensor<{k}; 2>) {{
  %c = tensor.matmul %a, %b : tensor<{k}; 2, 4>
  %w = tensor.matmul %a, %v : tensor<{k}; 2>
  %r = tuple %c, %w : (tensor<{k}; 2, 4>, tensor<{k}; 2>)
  return %r
}}
func @mm8_{k}(%a: tensor<{k}; 8, 8>, %b: tensor<{k}; 8, 8>) -> tensor<{k}; 8, 8> {{
  %c = tensor.matmul %a, %b : tensor<{k}; 8, 8>
  return %c
}}
func @mmh_{k}(%a: tensor<{k}; 10, 10>, %v: tensor<{k}; 10>) -> tensor<{k}; 10> {{
  %c = tensor.matmul %a, %v : tensor<{k}; 10>
  return %c
}}
func @mmd_{k}(%a: tensor<{k}; ?, ?>, %b: tensor<{k}; ?, ?>) -> tensor<{k}; ?, ?> {{
  %c = tensor.matmul %a, %b : tensor<{k}; ?, ?>
  return %c
}}
func @tr_{k}(%a: tensor<{k}; 2, 3>, %h: tensor<{k}; 10, 9>, %d: tensor<{k}; ?, ?>) -> (tensor<{k}; 3, 2>, tensor<{k}; 9, 10>, tensor<{k}; ?, ?>) {{
  %x = tensor.transpose %a : tensor<{k}; 3, 2>
  %y = tensor.transpose %h : tensor<{k}; 9, 10>
  %z = tensor.transpose %d : tensor<{k}; ?, ?>
  %r = tuple %x, %y, %z : (tensor<{k}; 3, 2>, tensor<{k}; 9, 10>, tensor<{k}; ?, ?>)
  return %r
}}
"#
        );
    }
    for k in ["f64", "f32", "i64"] {
        text += &format!(
            r#"
func @sum_{k}(%a: tensor<{k}; 3>, %h: tensor<{k}; 70>, %d: tensor<{k}; ?, ?>) -> ({k}, {k}, {k}) {{
  %x = tensor.sum %a : {k}
  %y = tensor.sum %h : {k}
  %z = tensor.sum %d : {k}
  %r = tuple %x, %y, %z : ({k}, {k}, {k})
  return %r
}}
"#
        );
    }
    diff_text(&text, CASES);
}

#[test]
fn print_every_kind_of_value() {
    let text = r#"
func @p(%a: f64, %b: f32, %c: i64, %d: bool, %v: tensor<f64; 3>, %m: tensor<i64; 2, 2>, %h: tensor<f32; 70>, %y: tensor<bool; ?>) -> () {
  %p0 = print %a : ()
  %p1 = print %b : ()
  %p2 = print %c : ()
  %p3 = print %d : ()
  %p4 = print %v : ()
  %p5 = print %m : ()
  %p6 = print %h : ()
  %p7 = print %y : ()
  %t = tuple %a, %v, %y : (f64, tensor<f64; 3>, tensor<bool; ?>)
  %p8 = print %t : ()
  %one = tuple %c : (i64)
  %p9 = print %one : ()
  %u = tuple : ()
  %p10 = print %u : ()
  return %u
}
"#;
    diff_text(text, CASES);
}
