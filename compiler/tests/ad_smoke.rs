use mad::back::interp;
use mad::ir::parse::parse_module;
use mad_runtime::Value;

#[test]
fn forward_b1() {
    let mut m = parse_module(
        "func @f(%x: f64, %y: f64) -> f64 {\n  %l = log %y : f64\n  %a = mul %x, %l : f64\n  %xy = mul %x, %y : f64\n  %l2 = log %xy : f64\n  %b = mul %l2, %y : f64\n  %r = add %a, %b : f64\n  return %r\n}\n",
    )
    .unwrap();
    let f = m.find("f").unwrap();
    let j = mad::ad::jvp(&mut m, f, 2).unwrap();
    println!("{}", mad::ir::print::print_function(&m, j));
    let out = interp::call(&m, j, &[Value::F64(2.0), Value::F64(3.0), Value::F64(1.0), Value::F64(0.0), Value::F64(0.0), Value::F64(1.0)], &mut std::io::sink()).unwrap();
    println!("{out}");
}
