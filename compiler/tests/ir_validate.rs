//! The validator: one broken module per invariant, each rejected with the
//! expected message; and the public type rule `result_types`.

use mad::ir::parse::parse_module;
use mad::ir::validate::{ValidationError, result_types, validate_module};
use mad::ir::{
    BinaryOp, Builder, Dim, Function, Literal, Module, OpKind, Region, ScalarKind, Type, UnaryOp,
};

/// The rendered errors of a module given in text form (it must parse).
fn errors(text: &str) -> Vec<String> {
    let m = parse_module(text).unwrap_or_else(|e| panic!("{e}"));
    errors_of(&m)
}

fn errors_of(m: &Module) -> Vec<String> {
    match validate_module(m) {
        Ok(()) => Vec::new(),
        Err(es) => es.iter().map(ValidationError::to_string).collect(),
    }
}

fn valid(text: &str) {
    let es = errors(text);
    assert!(es.is_empty(), "{es:?}");
}

fn single(text: &str) -> String {
    let es = errors(text);
    assert_eq!(es.len(), 1, "{es:?}");
    es[0].clone()
}

#[test]
fn operand_count() {
    assert_eq!(
        single("func @f(%x: f64) -> f64 {\n  %r = add %x : f64\n  return %r\n}"),
        "in @f, op 0 (`add`): `add` takes 2 operand(s), found 1"
    );
}

#[test]
fn declared_result_type_must_match_the_rule() {
    assert_eq!(
        single(
            "func @f(%x: f64) -> f64 {\n  %r = mul %x, %x : i64\n  %s = cast %r : f64\n  return %s\n}"
        ),
        "in @f, op 0 (`mul`): declares results (i64), the op's type rule gives (f64)"
    );
}

#[test]
fn binary_kinds_and_broadcast() {
    assert_eq!(
        single("func @f(%x: f64, %n: i64) -> f64 {\n  %r = add %x, %n : f64\n  return %r\n}"),
        "in @f, op 0 (`add`): `add` operands differ in kind: f64 and i64"
    );
    assert_eq!(
        single(
            "func @f(%a: tensor<f64; 3>, %b: tensor<f64; 4>) -> tensor<f64; 3> {\n  %r = add %a, %b : tensor<f64; 3>\n  return %r\n}"
        ),
        "in @f, op 0 (`add`): `add` operand shapes differ: tensor<f64; 3> and tensor<f64; 4>"
    );
    assert_eq!(
        single("func @f(%a: bool, %b: bool) -> bool {\n  %r = lt %a, %b : bool\n  return %r\n}"),
        "in @f, op 0 (`lt`): `lt` does not accept operands of kind bool"
    );
    assert_eq!(
        single("func @f(%a: i64) -> i64 {\n  %r = sqrt %a : i64\n  return %r\n}"),
        "in @f, op 0 (`sqrt`): `sqrt` does not accept i64"
    );
    // Scalar broadcast both ways; unknown extents meet fixed ones; comparisons give bool.
    valid(
        "func @f(%a: tensor<f64; 3, N>, %b: tensor<f64; ?, 4>, %s: f64) -> tensor<bool; 3, 4> {\n  %x = mul %a, %s : tensor<f64; 3, N>\n  %y = mul %s, %b : tensor<f64; ?, 4>\n  %r = lt %x, %y : tensor<bool; 3, 4>\n  return %r\n}",
    );
}

#[test]
fn matmul_shapes() {
    valid(
        "func @f(%a: tensor<f64; N, K>, %b: tensor<f64; K, M>, %c: tensor<f64; ?, ?>, %v: tensor<f64; 3>) -> tensor<f64; N, M> {\n  %r = tensor.matmul %a, %b : tensor<f64; N, M>\n  %d = tensor.matmul %c, %v : tensor<f64; ?>\n  return %r\n}",
    );
    assert_eq!(
        single(
            "func @f(%a: tensor<f64; 2, 3>, %b: tensor<f64; 4, 2>) -> tensor<f64; 2, 2> {\n  %r = tensor.matmul %a, %b : tensor<f64; 2, 2>\n  return %r\n}"
        ),
        "in @f, op 0 (`tensor.matmul`): `tensor.matmul` inner extents differ: tensor<f64; 2, 3> and tensor<f64; 4, 2>"
    );
    assert_eq!(
        single(
            "func @f(%a: tensor<f64; 2, 3>, %b: tensor<f64; 3, 5>) -> tensor<f64; 2, 4> {\n  %r = tensor.matmul %a, %b : tensor<f64; 2, 4>\n  return %r\n}"
        ),
        "in @f, op 0 (`tensor.matmul`): declares results (tensor<f64; 2, 4>), the op's type rule gives (tensor<f64; 2, 5>)"
    );
    assert_eq!(
        single(
            "func @f(%a: tensor<i64; 2, 2>) -> tensor<i64; 2, 2> {\n  %r = tensor.matmul %a, %a : tensor<i64; 2, 2>\n  return %r\n}"
        ),
        "in @f, op 0 (`tensor.matmul`): `tensor.matmul` needs float tensors of one kind, found tensor<i64; 2, 2> and tensor<i64; 2, 2>"
    );
}

#[test]
fn extract_index_in_range_when_the_extent_is_fixed() {
    assert_eq!(
        single(
            "func @f(%t: tensor<f64; 3>) -> f64 {\n  %r = tensor.extract[3] %t : f64\n  return %r\n}"
        ),
        "in @f, op 0 (`tensor.extract`): `tensor.extract` index 3 is out of range for extent 3"
    );
    valid(
        "func @f(%t: tensor<f64; ?>) -> f64 {\n  %r = tensor.extract[3] %t : f64\n  return %r\n}",
    );
}

#[test]
fn full_declares_a_tensor_of_the_right_rank() {
    assert_eq!(
        single(
            "func @f(%x: f64, %n: i64) -> tensor<f64; ?, ?> {\n  %r = tensor.full %x, %n : tensor<f64; ?, ?>\n  return %r\n}"
        ),
        "in @f, op 0 (`tensor.full`): declares (tensor<f64; ?, ?>), the operands give (tensor<f64; ?>)"
    );
    valid(
        "func @f(%x: f64, %n: i64) -> tensor<f64; 4, N> {\n  %r = tensor.full %x, %n, %n : tensor<f64; 4, N>\n  return %r\n}",
    );
}

#[test]
fn if_branches_yield_the_results() {
    assert_eq!(
        single(
            "func @f(%c: bool, %x: f64, %n: i64) -> f64 {\n  %r = scf.if %c : f64 {\n    yield %x\n  } else {\n    yield %n\n  }\n  return %r\n}"
        ),
        "in @f, op 0 (`scf.if`): the else region yields (i64), the results (f64)"
    );
    assert_eq!(
        single(
            "func @f(%c: i64, %x: f64) -> f64 {\n  %r = scf.if %c : f64 {\n    yield %x\n  } else {\n    yield %x\n  }\n  return %r\n}"
        ),
        "in @f, op 0 (`scf.if`): `scf.if` takes one bool condition"
    );
}

#[test]
fn for_body_arguments_and_yields() {
    assert_eq!(
        single(
            "func @f(%n: i64, %x: f64) -> f64 {\n  %r = scf.for %n, %n, %x : f64 {\n  ^(%i: f64, %a: f64):\n    yield %a\n  }\n  return %r\n}"
        ),
        "in @f, op 0 (`scf.for`): the body's arguments are (f64, f64), (i64, carried...) is (i64, f64)"
    );
    assert_eq!(
        single(
            "func @f(%n: i64, %x: f64) -> f64 {\n  %r = scf.for %n, %n, %x : f64 {\n  ^(%i: i64, %a: f64):\n    yield %i\n  }\n  return %r\n}"
        ),
        "in @f, op 0 (`scf.for`): the body yields (i64), the carried values are (f64)"
    );
    assert_eq!(
        single(
            "func @f(%n: f64, %x: f64) -> f64 {\n  %r = scf.for %n, %n, %x : f64 {\n  ^(%i: i64, %a: f64):\n    yield %a\n  }\n  return %r\n}"
        ),
        "in @f, op 0 (`scf.for`): `scf.for`: lo must be i64, found f64"
    );
}

#[test]
fn while_cond_yields_one_bool() {
    assert_eq!(
        single(
            "func @f(%x: f64) -> f64 {\n  %r = scf.while %x : f64 {\n  ^(%a: f64):\n    yield %a\n  } do {\n  ^(%b: f64):\n    yield %b\n  }\n  return %r\n}"
        ),
        "in @f, op 0 (`scf.while`): the cond region yields (f64), it must yield one bool"
    );
    assert_eq!(
        single(
            "func @f(%x: f64, %c: bool) -> f64 {\n  %r = scf.while %x : f64 {\n  ^(%a: f64):\n    yield %c\n  } do {\n  ^(%b: i64):\n    yield %x\n  }\n  return %r\n}"
        ),
        "in @f, op 0 (`scf.while`): the body region's arguments are (i64), the carried values are (f64)"
    );
}

#[test]
fn region_counts() {
    let mut f = Function::new("f", &[Type::BOOL], Type::F64);
    let c = f.params()[0];
    let mut b = Builder::new(&mut f);
    b.begin_region(&[]);
    let x = b.constant(Literal::F64(1.0));
    let then = b.end_region(vec![x]);
    let op = b.push_with_regions(OpKind::If, vec![c], vec![Type::F64], vec![then]);
    let r = b.func.ops[op].results[0];
    b.finish(vec![r]);
    let mut m = Module::new();
    m.add_function(f);
    assert_eq!(
        errors_of(&m),
        ["in @f, op 1 (`scf.if`): has 1 region(s), `scf.if` has 2"]
    );
}

#[test]
fn uses_from_a_sibling_region_are_rejected() {
    assert_eq!(
        single(
            "func @f(%c: bool) -> f64 {\n  %r = scf.if %c : f64 {\n    %one = const 1.0 : f64\n    yield %one\n  } else {\n    yield %one\n  }\n  return %r\n}"
        ),
        "in @f, op 0 (`scf.if`): yielded value 0 (value #2) is not defined in this region or an enclosing one"
    );
}

#[test]
fn uses_from_an_inner_region_are_rejected() {
    assert_eq!(
        single(
            "func @f(%c: bool) -> f64 {\n  %r = scf.if %c : f64 {\n    %one = const 1.0 : f64\n    yield %one\n  } else {\n    %two = const 2.0 : f64\n    yield %two\n  }\n  %s = add %r, %one : f64\n  return %s\n}"
        ),
        "in @f, op 3 (`add`): operand 1 (value #2) is not defined in this region or an enclosing one"
    );
}

#[test]
fn an_op_may_not_use_its_own_result_in_its_region() {
    assert_eq!(
        single(
            "func @f(%c: bool, %x: f64) -> f64 {\n  %r = scf.if %c : f64 {\n    yield %r\n  } else {\n    yield %x\n  }\n  return %r\n}"
        ),
        "in @f, op 0 (`scf.if`): yielded value 0 (value #2) is used before its definition"
    );
}

#[test]
fn uses_before_definition_are_rejected() {
    // %y = neg %z; %z = neg %x — built by hand, since the text form cannot say it.
    let mut f = Function::new("f", &[Type::F64], Type::F64);
    let x = f.params()[0];
    let first = f.new_op(
        OpKind::Unary(UnaryOp::Neg),
        vec![],
        vec![Type::F64],
        Default::default(),
    );
    let second = f.new_op(
        OpKind::Unary(UnaryOp::Neg),
        vec![x],
        vec![Type::F64],
        Default::default(),
    );
    let z = f.ops[second].results[0];
    f.ops[first].operands.push(z);
    f.body.ops = vec![first, second];
    f.body.yields = vec![f.ops[first].results[0]];
    let mut m = Module::new();
    m.add_function(f);
    assert_eq!(
        errors_of(&m),
        ["in @f, op 0 (`neg`): operand 0 (value #2) is used before its definition"]
    );
}

#[test]
fn values_are_defined_once() {
    let mut f = Function::new("f", &[Type::F64], Type::F64);
    let x = f.params()[0];
    let op = f.new_op(
        OpKind::Unary(UnaryOp::Neg),
        vec![x],
        vec![],
        Default::default(),
    );
    f.ops[op].results.push(x); // redefines the parameter
    f.body.ops = vec![op];
    f.body.yields = vec![x];
    let mut m = Module::new();
    m.add_function(f);
    assert_eq!(
        errors_of(&m),
        ["in @f, op 0 (`neg`): value #0 is defined more than once"]
    );
}

#[test]
fn ops_appear_in_one_region_only() {
    let mut f = Function::new("f", &[Type::F64], Type::F64);
    let x = f.params()[0];
    let op = f.new_op(
        OpKind::Unary(UnaryOp::Neg),
        vec![x],
        vec![Type::F64],
        Default::default(),
    );
    f.body.ops = vec![op, op];
    f.body.yields = vec![x];
    let mut m = Module::new();
    m.add_function(f);
    assert_eq!(
        errors_of(&m),
        ["in @f, op 0 (`neg`): the op appears more than once in the function's regions"]
    );
}

#[test]
fn dangling_handles_are_errors_not_panics() {
    let mut f = Function::new("f", &[Type::F64], Type::F64);
    let x = f.params()[0];
    let op = f.new_op(
        OpKind::Unary(UnaryOp::Neg),
        vec![x],
        vec![Type::F64],
        Default::default(),
    );
    f.ops[op].operands.push(mad::ir::ValueId::from_index(99));
    f.body.ops = vec![op, mad::ir::OpId::from_index(7)];
    f.body.yields = vec![mad::ir::ValueId::from_index(42)];
    let mut m = Module::new();
    m.add_function(f);
    assert_eq!(
        errors_of(&m),
        [
            "in @f, op 0 (`neg`): operand 1 is value #99 which does not exist",
            "in @f: a region lists op #7 which does not exist",
            "in @f: yielded value 0 is value #42 which does not exist",
        ]
    );
}

#[test]
fn body_returns_one_value_of_the_return_type() {
    assert_eq!(
        single("func @f(%x: f64) -> i64 {\n  return %x\n}"),
        "in @f: returns a value of type f64, the function's return type is i64"
    );
    assert_eq!(
        single("func @f(%x: f64) -> f64 {\n  return %x, %x\n}"),
        "in @f: the body yields 2 values, a function returns exactly one"
    );
}

#[test]
fn calls_match_the_callee_signature() {
    assert_eq!(
        single(
            "func @f(%x: f64) -> f64 {\n  %r = call @g(%x) : f64\n  return %r\n}\nfunc @g(%n: i64) -> f64 {\n  %r = cast %n : f64\n  return %r\n}"
        ),
        "in @f, op 0 (`call`): `call` of `g`: argument 0 is f64, the parameter is i64"
    );
    assert_eq!(
        single(
            "func @f(%x: f64) -> f64 {\n  %r = call @g(%x, %x) : f64\n  return %r\n}\nfunc @g(%y: f64) -> f64 {\n  return %y\n}"
        ),
        "in @f, op 0 (`call`): `call` of `g` passes 2 argument(s), it takes 1"
    );
    assert_eq!(
        single(
            "func @f(%x: f64) -> i64 {\n  %r = call @g(%x) : i64\n  return %r\n}\nfunc @g(%y: f64) -> f64 {\n  return %y\n}"
        ),
        "in @f, op 0 (`call`): declares results (i64), the op's type rule gives (f64)"
    );
    // A fixed-size argument may go to a dynamic parameter.
    valid(
        "func @f(%x: tensor<f64; 3>) -> f64 {\n  %r = call @g(%x) : f64\n  return %r\n}\nfunc @g(%y: tensor<f64; ?>) -> f64 {\n  %s = tensor.sum %y : f64\n  return %s\n}",
    );
}

#[test]
fn function_names_are_unique() {
    let mut m = Module::new();
    for _ in 0..2 {
        let mut f = Function::new("dup", &[Type::F64], Type::F64);
        let x = f.params()[0];
        f.body.yields = vec![x];
        m.add_function(f);
    }
    assert_eq!(
        errors_of(&m),
        ["in @dup: another function has the same name"]
    );
}

#[test]
fn tuple_and_insert_rules() {
    assert_eq!(
        single(
            "func @f(%x: f64) -> f64 {\n  %t = tuple %x : (f64)\n  %r = tuple.get[1] %t : f64\n  return %r\n}"
        ),
        "in @f, op 1 (`tuple.get`): `tuple.get` index 1 is out of range for (f64)"
    );
    assert_eq!(
        single(
            "func @f(%t: tensor<f64; 2, 3>, %v: tensor<f64; 2>, %i: i64) -> tensor<f64; 2, 3> {\n  %r = tensor.insert %t, %v, %i : tensor<f64; 2, 3>\n  return %r\n}"
        ),
        "in @f, op 0 (`tensor.insert`): `tensor.insert` value must be tensor<f64; 3>, found tensor<f64; 2>"
    );
}

#[test]
fn all_errors_are_reported() {
    let es = errors(
        "func @f(%x: f64, %n: i64) -> f64 {\n  %a = add %x, %n : f64\n  %b = sqrt %n : i64\n  return %n\n}",
    );
    assert_eq!(es.len(), 3, "{es:?}");
}

#[test]
fn result_types_is_the_type_rule() {
    let m = Module::new();
    let t = |shape: Vec<Dim>| Type::Tensor {
        elem: ScalarKind::F64,
        shape,
    };
    let sym = |s: &str| Dim::Sym(s.into());
    assert_eq!(
        result_types(
            &OpKind::MatMul,
            &[t(vec![sym("N"), sym("K")]), t(vec![sym("K"), Dim::Dyn])],
            &m
        ),
        Ok(vec![t(vec![sym("N"), Dim::Dyn])])
    );
    assert_eq!(
        result_types(
            &OpKind::Binary(BinaryOp::Add),
            &[
                t(vec![Dim::Dyn, sym("N")]),
                t(vec![Dim::Fixed(3), Dim::Dyn])
            ],
            &m
        ),
        Ok(vec![t(vec![Dim::Fixed(3), sym("N")])])
    );
    assert_eq!(
        result_types(
            &OpKind::Pack,
            &[t(vec![Dim::Fixed(2)]), t(vec![Dim::Fixed(2)])],
            &m
        ),
        Ok(vec![Type::tensor(ScalarKind::F64, &[2, 2])])
    );
    assert_eq!(
        result_types(
            &OpKind::Index,
            &[t(vec![Dim::Dyn, Dim::Fixed(3)]), Type::I64],
            &m
        ),
        Ok(vec![t(vec![Dim::Fixed(3)])])
    );
    assert_eq!(
        result_types(&OpKind::Full, &[Type::F64, Type::I64], &m),
        Ok(vec![t(vec![Dim::Dyn])])
    );
    assert_eq!(
        result_types(&OpKind::Cast(ScalarKind::I64), &[Type::BOOL], &m),
        Ok(vec![Type::I64])
    );
    assert!(result_types(&OpKind::Cast(ScalarKind::F64), &[Type::BOOL], &m).is_err());
    assert_eq!(
        result_types(
            &OpKind::For,
            &[Type::I64, Type::I64, Type::F64, Type::BOOL],
            &m
        ),
        Ok(vec![Type::F64, Type::BOOL])
    );
    assert_eq!(
        result_types(&OpKind::Const(Literal::F32(1.0)), &[], &m),
        Ok(vec![Type::F32])
    );
    assert!(result_types(&OpKind::If, &[Type::BOOL], &m).is_err());
    let empty = Region::default();
    assert!(empty.ops.is_empty());
}
