//! The IR text form: every module of the corpus `tests/ir/*.ir` (at the workspace
//! root) parses, validates, and prints back to text that parses to the same text;
//! the corpus covers every op; parse errors carry line:col.

use std::collections::BTreeSet;
use std::path::PathBuf;

use mad::ir::parse::parse_module;
use mad::ir::print::{print_function, print_module};
use mad::ir::validate::validate_module;
use mad::ir::{
    BinaryOp, Builder, Dim, Function, Literal, Module, OpKind, ScalarKind, Type, UnaryOp,
};

fn corpus() -> Vec<(PathBuf, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/ir");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/ir exists")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ir"))
        .collect();
    files.sort();
    assert!(files.len() >= 4, "the corpus has its files");
    files
        .into_iter()
        .map(|p| (p.clone(), std::fs::read_to_string(&p).expect("readable")))
        .collect()
}

#[test]
fn corpus_round_trips_and_validates() {
    for (path, text) in corpus() {
        let m = parse_module(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if let Err(errs) = validate_module(&m) {
            panic!(
                "{}: {}",
                path.display(),
                errs.iter()
                    .map(|e| e.to_string())
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
        let printed = print_module(&m);
        let again = parse_module(&printed)
            .unwrap_or_else(|e| panic!("{}: reparse: {e}\n{printed}", path.display()));
        assert_eq!(print_module(&again), printed, "{}", path.display());
        assert_eq!(again.functions.len(), m.functions.len());
        assert_eq!(m.to_string(), printed, "Display is print_module");
    }
}

#[test]
fn corpus_covers_every_op() {
    let mut seen = BTreeSet::new();
    for (_, text) in corpus() {
        let m = parse_module(&text).expect("parses");
        for (_, f) in m.functions.iter() {
            for (_, op) in f.ops.iter() {
                seen.insert(op.kind.name());
            }
        }
    }
    let mut all: Vec<&str> = vec![
        "const",
        "select",
        "cast",
        "tensor.pack",
        "tensor.full",
        "tensor.extract",
        "tensor.index",
        "tensor.insert",
        "tensor.dim",
        "tensor.matmul",
        "tensor.transpose",
        "tensor.sum",
        "tuple",
        "tuple.get",
        "call",
        "print",
        "scf.if",
        "scf.for",
        "scf.while",
    ];
    all.extend(UnaryOp::ALL.iter().map(|u| u.name()));
    all.extend(BinaryOp::ALL.iter().map(|b| b.name()));
    let missing: Vec<&&str> = all.iter().filter(|n| !seen.contains(**n)).collect();
    assert!(
        missing.is_empty(),
        "ops missing from the corpus: {missing:?}"
    );
}

#[test]
fn values_are_renumbered_densely_in_print_order() {
    let text =
        "func @f(%x: f64) -> f64 {\n  %b = neg %x : f64\n  %a = mul %b, %x : f64\n  return %a\n}\n";
    let m = parse_module(text).expect("parses");
    let expected =
        "func @f(%0: f64) -> f64 {\n  %1 = neg %0 : f64\n  %2 = mul %1, %0 : f64\n  return %2\n}\n";
    assert_eq!(print_module(&m), expected);
}

#[test]
fn built_module_prints_and_round_trips() {
    // The builder creates region arguments before the op's results; the printer
    // still numbers values in print order.
    let mut f = Function::new("loop", &[Type::I64], Type::F64);
    let n = f.params()[0];
    let mut b = Builder::new(&mut f);
    let zero = b.constant(Literal::I64(0));
    let init = b.constant(Literal::F64(0.5));
    let args = b.begin_region(&[Type::I64, Type::F64]);
    let fi = b.push1(OpKind::Cast(ScalarKind::F64), vec![args[0]], Type::F64);
    let acc = b.push1(OpKind::Binary(BinaryOp::Add), vec![args[1], fi], Type::F64);
    let body = b.end_region(vec![acc]);
    let op = b.push_with_regions(
        OpKind::For,
        vec![zero, n, init],
        vec![Type::F64],
        vec![body],
    );
    let r = b.func.ops[op].results[0];
    b.finish(vec![r]);
    let mut m = Module::new();
    let h = m.add_function(f);
    assert_eq!(validate_module(&m), Ok(()));
    let text = print_function(&m, h);
    assert_eq!(
        text,
        "func @loop(%0: i64) -> f64 {\n  %1 = const 0 : i64\n  %2 = const 0.5 : f64\n  %3 = scf.for %1, %0, %2 : f64 {\n  ^(%4: i64, %5: f64):\n    %6 = cast %4 : f64\n    %7 = add %5, %6 : f64\n    yield %7\n  }\n  return %3\n}\n"
    );
    assert_eq!(print_module(&parse_module(&text).expect("parses")), text);
}

#[test]
fn floats_round_trip_exactly() {
    let values = [
        0.1,
        1.0 / 3.0,
        -0.0,
        1e-300,
        5e-324,
        f64::MAX,
        f64::MIN_POSITIVE,
        123_456_789.123_456_78,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    for x in values {
        let text = format!("func @c() -> f64 {{\n  %0 = const {x:?} : f64\n  return %0\n}}\n");
        let m = parse_module(&text).expect("parses");
        let f = &m.functions[m.find("c").expect("c")];
        let OpKind::Const(Literal::F64(y)) = f.ops.iter().next().expect("one op").1.kind else {
            panic!("const")
        };
        assert_eq!(y.to_bits(), x.to_bits(), "{x:?}");
        assert_eq!(print_module(&m), text);
    }
    let m = parse_module("func @c() -> f32 {\n  %0 = const 0.1 : f32\n  return %0\n}\n")
        .expect("parses");
    let f = &m.functions[m.find("c").expect("c")];
    assert_eq!(
        f.ops.iter().next().expect("op").1.kind,
        OpKind::Const(Literal::F32(0.1f32))
    );
    let nan = parse_module("func @c() -> f64 {\n  %0 = const NaN : f64\n  return %0\n}\n")
        .expect("parses");
    let f = &nan.functions[nan.find("c").expect("c")];
    assert!(
        matches!(f.ops.iter().next().expect("op").1.kind, OpKind::Const(Literal::F64(x)) if x.is_nan())
    );
}

#[test]
fn tensor_types_parse_with_every_kind_of_extent() {
    let m = parse_module(
        "func @t(%a: tensor<f32; 3, N, ?>, %b: tensor<i64;>) -> (tensor<bool; 1>, ()) {\n  %u = tuple : ()\n  %z = const true : bool\n  %p = tensor.pack %z : tensor<bool; 1>\n  %r = tuple %p, %u : (tensor<bool; 1>, ())\n  return %r\n}\n",
    )
    .expect("parses");
    let f = &m.functions[m.find("t").expect("t")];
    assert_eq!(
        f.param_types()[0],
        Type::Tensor {
            elem: ScalarKind::F32,
            shape: vec![Dim::Fixed(3), Dim::Sym("N".into()), Dim::Dyn]
        }
    );
    assert_eq!(
        f.param_types()[1],
        Type::Tensor {
            elem: ScalarKind::I64,
            shape: vec![]
        }
    );
    assert_eq!(
        f.ret,
        Type::Tuple(vec![Type::tensor(ScalarKind::Bool, &[1]), Type::unit()])
    );
    assert_eq!(validate_module(&m), Ok(()));
}

#[test]
fn quoted_names_are_quoted_only_when_needed() {
    let mut m = Module::new();
    for name in ["plain_name1", "std::vec::dot$1", "a.b", "q\"uote"] {
        let mut f = Function::new(name, &[], Type::unit());
        let mut b = Builder::new(&mut f);
        let u = b.push1(OpKind::Tuple, vec![], Type::unit());
        b.finish(vec![u]);
        m.add_function(f);
    }
    let text = print_module(&m);
    assert!(text.contains("func @plain_name1()"), "{text}");
    assert!(text.contains("func @\"std::vec::dot$1\"()"), "{text}");
    assert!(text.contains("func @\"a.b\"()"), "{text}");
    assert!(text.contains("func @\"q\\\"uote\"()"), "{text}");
    let back = parse_module(&text).expect("parses");
    let names: Vec<&str> = back
        .functions
        .iter()
        .map(|(_, f)| f.name.as_str())
        .collect();
    assert_eq!(names, ["plain_name1", "std::vec::dot$1", "a.b", "q\"uote"]);
}

fn parse_err(text: &str) -> String {
    parse_module(text).expect_err("must not parse").to_string()
}

#[test]
fn parse_errors_name_line_and_column() {
    assert_eq!(
        parse_err("func @f() -> f64 {\n  %0 = frob : f64\n  return %0\n}\n"),
        "2:8: unknown op `frob`"
    );
    assert_eq!(
        parse_err("func @f() -> f64 {\n  %0 = neg %9 : f64\n  return %0\n}\n"),
        "2:12: use of undefined value `%9`"
    );
    assert_eq!(
        parse_err("func @f() -> f64 {\n  %0 = call @g() : f64\n  return %0\n}\n"),
        "2:13: call of undefined function `g`"
    );
    assert_eq!(
        parse_err("func @f() -> f64 {\n  %0 = const true : f64\n  return %0\n}\n"),
        "2:14: `true` is not a f64 literal"
    );
    assert_eq!(
        parse_err("func @f(%a: f64, %a: f64) -> f64 {\n  return %a\n}\n"),
        "1:18: value `%a` is defined twice"
    );
    assert_eq!(
        parse_err("func @f() -> tensor<f64; x y> {\n}\n"),
        "1:28: expected `,`, found `y`"
    );
    assert_eq!(
        parse_err("func @f() -> f64 {\n  %0 = const 1.0 : f64\n"),
        "3:1: expected an op name, found the end of the text"
    );
    assert_eq!(
        parse_err("func @f() -> f64 { return }\nfunc @f() -> f64 { return }"),
        "2:6: function `f` is defined twice"
    );
    assert_eq!(
        parse_err("func @f() -> f64 {\n  %0, %1 = const 1.0 : f64\n}"),
        "2:24: expected a list of 2 result types `(T, ...)`"
    );
    assert_eq!(
        parse_err("func @f() -> f64 {\n  # \n}"),
        "2:3: unexpected character `#`"
    );
}

#[test]
fn printed_forms_snapshot() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/ir");
    let text = std::fs::read_to_string(dir.join("control.ir")).expect("read");
    insta::assert_snapshot!(
        "control_ir",
        print_module(&parse_module(&text).expect("parses"))
    );
    let text = std::fs::read_to_string(dir.join("calls.ir")).expect("read");
    insta::assert_snapshot!(
        "calls_ir",
        print_module(&parse_module(&text).expect("parses"))
    );
}
