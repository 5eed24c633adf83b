//! Constant comparisons and constant `select` conditions fold in `passes::simplify`,
//! and the folded program computes what the original did.

use mad::back::interp;
use mad::ir::parse::parse_module;
use mad::ir::validate::validate_module;
use mad::ir::{Module, OpKind};
use mad::passes::{dce, simplify};
use mad_runtime::Value;

const TEXT: &str = "
func @f(%w: f64) -> f64 {
  %m = const -1.0 : f64
  %z = const 0.0 : f64
  %nz = const -0.0 : f64
  %nan = const NaN : f64
  %c1 = eq %m, %z : bool
  %a = select %c1, %z, %w : f64
  %c2 = eq %z, %nz : bool
  %b = select %c2, %a, %m : f64
  %c3 = lt %nan, %z : bool
  %c = select %c3, %m, %b : f64
  %c4 = eq %w, %z : bool
  %d = select %c4, %z, %c : f64
  return %d
}
";

fn ops_of(m: &Module, kind: fn(&OpKind) -> bool) -> usize {
    let f = &m.functions[m.find("f").expect("f")];
    f.body
        .ops
        .iter()
        .filter(|&&id| kind(&f.ops[id].kind))
        .count()
}

#[test]
fn constant_conditions_fold() {
    let mut m = parse_module(TEXT).expect("parses");
    check(&mut m)
}

fn check(m: &mut Module) {
    validate_module(m).expect("valid");
    let before: Vec<Value> = [2.5, 0.0, -0.0, -3.0]
        .iter()
        .map(|&w| {
            interp::call(
                m,
                m.find("f").expect("f"),
                &[Value::F64(w)],
                &mut std::io::sink(),
            )
            .expect("runs")
        })
        .collect();
    let fref = m.find("f").expect("f");
    for _ in 0..3 {
        simplify::simplify(&mut m.functions[fref]);
        dce::dce(m, fref);
    }
    validate_module(m).expect("valid after folding");
    // Only the comparison with the argument and its select remain.
    assert_eq!(ops_of(m, |k| matches!(k, OpKind::Select)), 1);
    assert_eq!(ops_of(m, |k| matches!(k, OpKind::Binary(_))), 1);
    let after: Vec<Value> = [2.5, 0.0, -0.0, -3.0]
        .iter()
        .map(|&w| {
            interp::call(
                m,
                m.find("f").expect("f"),
                &[Value::F64(w)],
                &mut std::io::sink(),
            )
            .expect("runs")
        })
        .collect();
    let bits = |v: &[Value]| {
        v.iter()
            .map(|x| x.as_f64().map(f64::to_bits))
            .collect::<Vec<_>>()
    };
    assert_eq!(bits(&before), bits(&after));
    // w = 2.5 → -1 == 0 is false → a = w; 0 == -0 → b = a; c = b; w ≠ 0 → d = 2.5.
    assert_eq!(bits(&after)[0], Some(2.5f64.to_bits()));
}

#[test]
fn reading_the_element_just_written_is_the_written_value() {
    // `index(insert(t, v, k), k) → v`; a read at another index is left as it is.
    let text = "
func @f(%t: tensor<f64; ?>, %k: i64, %j: i64, %v: f64) -> f64 {
  %u = tensor.insert %t, %v, %k : tensor<f64; ?>
  %a = tensor.index %u, %k : f64
  %b = tensor.index %u, %j : f64
  %s = add %a, %b : f64
  return %s
}
";
    let mut m = parse_module(text).expect("parses");
    let fref = m.find("f").expect("f");
    assert!(simplify::simplify(&mut m.functions[fref]));
    validate_module(&m).expect("valid");
    dce::dce(&mut m, fref);
    assert_eq!(ops_of(&m, |k| matches!(k, OpKind::Index)), 1, "only the read at %j is left");
    let t = Value::Tensor(mad_runtime::Tensor {
        shape: vec![3],
        data: mad_runtime::TensorData::F64(vec![1.0, 2.0, 4.0]),
    });
    let out = interp::call(&m, fref, &[t, Value::I64(0), Value::I64(2), Value::F64(0.5)], &mut std::io::sink());
    assert_eq!(out.expect("runs"), Value::F64(4.5));
}
