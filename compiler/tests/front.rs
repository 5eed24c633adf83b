//! Compiles small programs with the front end, runs them with the reference
//! interpreter, and compares with values computed here in Rust.

use mad::back::interp;
use mad::front::{SourceFiles, SurfaceType, compile};
use mad_runtime::{Tensor, Value};

fn render(
    files: &SourceFiles,
    diags: &[codespan_reporting::diagnostic::Diagnostic<usize>],
) -> String {
    let config = codespan_reporting::term::Config::default();
    let mut out = String::new();
    for d in diags {
        out.push_str(
            &codespan_reporting::term::emit_into_string(&config, files, d).unwrap_or_default(),
        );
    }
    out
}

fn build(src: &str) -> mad::front::Compiled {
    let mut files = SourceFiles::new();
    let id = files.add("test.mad".to_string(), src.to_string());
    match compile(&mut files, id) {
        Ok(c) => c,
        Err(d) => panic!("compile failed:\n{}", render(&files, &d)),
    }
}

/// Runs `name(args)` and returns its value and printed output.
fn run_out(src: &str, name: &str, args: &[Value]) -> (Value, String) {
    let c = build(src);
    let f = c
        .function(name)
        .unwrap_or_else(|| panic!("no function {name}"))
        .func;
    let mut out = Vec::new();
    let v =
        interp::call(&c.module, f, args, &mut out).unwrap_or_else(|e| panic!("run failed: {e}"));
    (v, String::from_utf8(out).unwrap())
}

fn run(src: &str, name: &str, args: &[Value]) -> Value {
    run_out(src, name, args).0
}

fn f64v(v: Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not an f64: {v:?}"))
}

fn i64v(v: Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an i64: {v:?}"))
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_tensor()
        .and_then(|t| t.as_f64())
        .unwrap_or_else(|| panic!("not an f64 tensor: {v:?}"))
        .to_vec()
}

#[test]
fn precedence_and_power() {
    let src = "fn a() -> f64 { -2.0^2 }\n fn b() -> i64 { 2^3^2 }\n fn c() -> f64 { let x = 3.0; x^-1 }\n\
               fn d() -> bool { 1 + 2 * 3 == 7 && !(2 < 1) || false }\n fn e() -> i64 { 7 % 3 - 10 / 3 }";
    assert_eq!(f64v(run(src, "a", &[])), -4.0);
    assert_eq!(i64v(run(src, "b", &[])), 512);
    assert_eq!(f64v(run(src, "c", &[])), 1.0 / 3.0);
    assert_eq!(run(src, "d", &[]).as_bool(), Some(true));
    assert_eq!(i64v(run(src, "e", &[])), 7 % 3 - 10 / 3);
}

#[test]
fn literal_adaptation() {
    let src = "fn f(x: f64) -> f64 { let y: f64 = 1; 2 * x + y - 3 }\n\
               fn g(x: f32) -> f32 { x * 2 + 0.5 }\n fn h(x: f64) -> f64 { x^2 + sqrt(4) }";
    assert_eq!(
        f64v(run(src, "f", &[Value::F64(5.0)])),
        2.0 * 5.0 + 1.0 - 3.0
    );
    assert_eq!(
        run(src, "g", &[Value::F32(1.5)]),
        Value::F32(1.5 * 2.0 + 0.5)
    );
    assert_eq!(f64v(run(src, "h", &[Value::F64(3.0)])), 11.0);
}

#[test]
fn casts() {
    let src = "fn f(n: i64) -> f64 { (n as f64) / 2.0 }\n fn g(x: f64) -> i64 { x as i64 }\n\
               fn h(b: bool) -> i64 { b as i64 + 1 }";
    assert_eq!(f64v(run(src, "f", &[Value::I64(5)])), 2.5);
    assert_eq!(i64v(run(src, "g", &[Value::F64(-2.7)])), -2);
    assert_eq!(i64v(run(src, "h", &[Value::Bool(true)])), 2);
}

#[test]
fn loops_break_continue_return() {
    let src = r#"
fn sum_odd_until(n: i64, stop: i64) -> i64 {
    let mut s = 0;
    for i in 0..n {
        if i % 2 == 0 { continue; }
        if i > stop { break; }
        s += i;
    }
    s
}
fn first_square_above(t: i64) -> i64 {
    let mut i = 0;
    while true {
        if i * i > t { return i; }
        i += 1;
    }
    -1
}
fn count_while(x: f64) -> i64 {
    let mut y = x;
    let mut k = 0;
    while y > 1.0 { y = y / 2.0; k += 1; }
    k
}
fn nested(n: i64) -> i64 {
    let mut c = 0;
    for i in 0..n {
        for j in 0..n {
            if j > i { break; }
            c += 1;
        }
    }
    c
}
"#;
    let reference = |n: i64, stop: i64| {
        (0..n)
            .filter(|i| i % 2 == 1)
            .take_while(|&i| i <= stop)
            .sum::<i64>()
    };
    for (n, stop) in [(10, 5), (20, 100), (0, 3), (7, 0)] {
        assert_eq!(
            i64v(run(
                src,
                "sum_odd_until",
                &[Value::I64(n), Value::I64(stop)]
            )),
            reference(n, stop)
        );
    }
    assert_eq!(i64v(run(src, "first_square_above", &[Value::I64(50)])), 8);
    assert_eq!(i64v(run(src, "count_while", &[Value::F64(100.0)])), 7);
    assert_eq!(i64v(run(src, "nested", &[Value::I64(5)])), 15);
}

#[test]
fn early_return_in_for() {
    let src =
        "fn find(x: [f64], t: f64) -> i64 { for i in 0..len(x) { if x[i] == t { return i; } } -1 }";
    let xs = Value::Tensor(Tensor::vector(vec![3.0, 1.0, 4.0, 1.0, 5.0]));
    assert_eq!(i64v(run(src, "find", &[xs.clone(), Value::F64(4.0)])), 2);
    assert_eq!(i64v(run(src, "find", &[xs, Value::F64(9.0)])), -1);
}

#[test]
fn recursion_and_if_expressions() {
    let src = "fn fib(n: i64) -> i64 { if n < 2 { n } else { fib(n - 1) + fib(n - 2) } }\n\
               fn sign(x: f64) -> f64 { if x > 0.0 { 1.0 } else if x < 0.0 { -1.0 } else { 0.0 } }";
    assert_eq!(i64v(run(src, "fib", &[Value::I64(15)])), 610);
    assert_eq!(f64v(run(src, "sign", &[Value::F64(-3.0)])), -1.0);
    assert_eq!(f64v(run(src, "sign", &[Value::F64(0.0)])), 0.0);
}

#[test]
fn short_circuit_skips_the_right_side() {
    let src = "fn f(n: i64) -> bool { n != 0 && 10 / n > 2 }\n fn g(n: i64) -> bool { n == 0 || 10 / n > 2 }";
    assert_eq!(run(src, "f", &[Value::I64(0)]).as_bool(), Some(false));
    assert_eq!(run(src, "f", &[Value::I64(3)]).as_bool(), Some(true));
    assert_eq!(run(src, "g", &[Value::I64(0)]).as_bool(), Some(true));
}

#[test]
fn overloads_and_stdlib() {
    let src = "fn f(x: f64) -> f64 { x + 1.0 }\n fn f(x: i64) -> i64 { x + 2 }\n\
               fn a() -> f64 { f(1.0) }\n fn b() -> i64 { f(1) }\n\
               fn c() -> f64 { dot(vec3(1, 2, 3), vec3(4.0, 5.0, 6.0)) + norm(vec2(3.0, 4.0)) }\n\
               fn d() -> vec3 { std::vec::cross(vec3(1.0, 0.0, 0.0), vec3(0.0, 1.0, 0.0)) }";
    assert_eq!(f64v(run(src, "a", &[])), 2.0);
    assert_eq!(i64v(run(src, "b", &[])), 3);
    assert_eq!(f64v(run(src, "c", &[])), 32.0 + 5.0);
    assert_eq!(floats(&run(src, "d", &[])), vec![0.0, 0.0, 1.0]);
}

#[test]
fn tuples_and_patterns() {
    let src = "fn divmod(a: i64, b: i64) -> (i64, i64) { (a / b, a % b) }\n\
               fn f() -> i64 { let (q, r) = divmod(17, 5); let (_, r2) = divmod(9, 4); let mut t = (q, r); t.0 = 10; t.0 + t.1 + r2 }";
    assert_eq!(i64v(run(src, "f", &[])), 10 + 2 + 1);
}

#[test]
fn mutable_vectors_and_arrays() {
    let src = "fn f() -> vec3 { let mut v = vec3(1.0, 2.0, 3.0); v[0] = 10.0; v.y = 20.0; v[2] += 1; v }\n\
               fn g() -> [i64; 4] { let mut a = [0; 4]; for i in 0..4 { a[i] = i * i; } a }\n\
               fn h() -> f64 { let mut m = mat2(1, 2, 3, 4); m[1, 0] = 7.0; m[1, 0] + m[0][1] }";
    assert_eq!(floats(&run(src, "f", &[])), vec![10.0, 20.0, 4.0]);
    let g = run(src, "g", &[]);
    assert_eq!(
        g.as_tensor().map(|t| t.data.clone()),
        Some(mad_runtime::TensorData::I64(vec![0, 1, 4, 9]))
    );
    assert_eq!(f64v(run(src, "h", &[])), 9.0);
}

#[test]
fn dynamic_vectors() {
    let src = "fn f(n: i64) -> f64 { let mut v = zeros(n); for i in 0..n { v[i] = i as f64; } sum(v) + sum(ones(3)) }\n\
               fn g(x: vector) -> f64 { let mut s = 0.0; let mut i = 0; while s < 10.0 { s += x[i % len(x)]; i += 1; } s }";
    assert_eq!(f64v(run(src, "f", &[Value::I64(5)])), 10.0 + 3.0);
    let xs = Value::Tensor(Tensor::vector(vec![1.5, 2.5]));
    assert_eq!(f64v(run(src, "g", &[xs])), 12.0);
}

#[test]
fn matrices() {
    let src = "fn f() -> vec2 { let a = mat2(1, 2, 3, 4); let b = mat2::cols(vec2(1.0, 0.0), vec2(1.0, 1.0)); (a * b) * vec2(1.0, 2.0) }\n\
               fn g() -> f64 { let m = mat2x3(1, 2, 3, 4, 5, 6); let t = transpose(m); t[2, 1] + det(mat2::rows(vec2(1.0, 2.0), vec2(3.0, 4.0))) }\n\
               fn h() -> f64 { let i = mat3::identity(); sum(i) + frob2(inv(mat2(2, 0, 0, 4))) }";
    // a*b = [[1,3],[3,7]]; times (1,2) = (7, 17)
    assert_eq!(floats(&run(src, "f", &[])), vec![7.0, 17.0]);
    assert_eq!(f64v(run(src, "g", &[])), 6.0 + (4.0 - 6.0));
    assert_eq!(f64v(run(src, "h", &[])), 3.0 + 0.25 + 0.0625);
}

#[test]
fn builtins_consts_and_print() {
    let src = "const N: i64 = 3;\n const HALF: f64 = 1 / 2.0;\n\
               fn f() -> f64 { let a = [HALF; N]; print(\"hi\"); print(a); sum(a) + max(1, 2.5) + atan2(0.0, 1.0) + abs(-2) as f64 }\n\
               fn g(x: f64) -> f64 { select(x > 0.0, x, -x) + min(x, 0.0) }";
    let (v, out) = run_out(src, "f", &[]);
    assert_eq!(f64v(v), 1.5 + 2.5 + 0.0 + 2.0);
    assert_eq!(out, "hi\n[0.5, 0.5, 0.5]\n");
    assert_eq!(f64v(run(src, "g", &[Value::F64(-2.0)])), 0.0);
}

#[test]
fn modules_uses_and_signatures() {
    let src = "mod geo { fn area(a: vec2, b: vec2) -> f64 { 0.5 * (a.x * b.y - a.y * b.x) } fn twice(a: vec2, b: vec2) -> f64 { 2.0 * area(a, b) } }\n\
               use std::mat::{det};\n fn f() -> f64 { geo::twice(vec2(1.0, 0.0), vec2(0.0, 1.0)) + det(mat2(1, 0, 0, 1)) }\n\
               @ad(tape) fn t(x: f64) -> f64 { x }";
    let c = build(src);
    let names: Vec<String> = c.functions.iter().map(|f| f.to_string()).collect();
    assert_eq!(
        names,
        vec![
            "fn geo::area(a: vec2, b: vec2) -> f64",
            "fn geo::twice(a: vec2, b: vec2) -> f64",
            "fn f() -> f64",
            "fn t(x: f64) -> f64"
        ]
    );
    let t = c.function("t").unwrap().func;
    assert_eq!(c.module.functions[t].ad_mode, Some(mad::ir::AdMode::Tape));
    assert_eq!(f64v(run(src, "f", &[])), 2.0);
    assert_eq!(c.function("f").unwrap().ret, SurfaceType::F64);
}

#[test]
fn user_definitions_shadow_the_prelude() {
    let src = "fn norm(v: vec2) -> f64 { 42.0 }\n fn f() -> f64 { norm(vec2(3.0, 4.0)) }";
    assert_eq!(f64v(run(src, "f", &[])), 42.0);
}

#[test]
fn mesh_declarations() {
    let src = r#"
dof x: vertex -> vec3;
data rest: edge -> f64;
param k: f64 = 2;
energy spring(e: edge) {
    let d = x[e.v0] - x[e.v1];
    let l = rest[e];
    0.5 * k * (dot(d, d) / (l * l) - 1.0)^2
}
energy pin(v: vertex) { norm2(x[v.v0]) }
objective = spring + 0.5 * pin;
"#;
    let c = build(src);
    let m = &c.mesh;
    assert_eq!(m.dofs.len(), 1);
    assert_eq!(m.params[0].default, Some(mad::ir::Literal::F64(2.0)));
    assert_eq!(m.energies.len(), 2);
    let spring = &m.energies[0];
    let fields: Vec<(String, mad::front::InputAt)> = spring
        .inputs
        .iter()
        .map(|i| (i.field.clone(), i.at.clone()))
        .collect();
    use mad::front::InputAt::*;
    assert_eq!(
        fields,
        vec![
            ("x".into(), Vertex(0)),
            ("x".into(), Vertex(1)),
            ("rest".into(), Element),
            ("k".into(), Param)
        ]
    );
    // Evaluate the lowered term on gathered inputs.
    let args = [
        Value::Tensor(Tensor::vector(vec![1.0, 0.0, 0.0])),
        Value::Tensor(Tensor::vector(vec![0.0, 2.0, 0.0])),
        Value::F64(2.0),
        Value::F64(3.0),
    ];
    let v = interp::call(&c.module, spring.func, &args, &mut Vec::new()).unwrap();
    let reference = 0.5 * 3.0 * (5.0f64 / 4.0 - 1.0).powi(2);
    assert!((f64v(v) - reference).abs() < 1e-15);
    assert!(matches!(m.objective, Some(mad::front::ObjExpr::Add(..))));
}

/// Every prefix of every diagnostics example (cut at each line and in the middle of
/// lines) compiles to a result or to diagnostics, never a panic.
#[test]
fn truncated_sources_never_panic() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/diagnostics");
    for entry in std::fs::read_dir(dir).expect("corpus") {
        let path = entry.expect("entry").path();
        // `modules/` holds the files the examples' `mod` declarations load.
        if path.extension().is_none_or(|e| e != "mad") {
            continue;
        }
        let src = std::fs::read_to_string(path).expect("read");
        let cuts: Vec<usize> = (0..src.len())
            .filter(|&i| src.is_char_boundary(i))
            .step_by(3)
            .collect();
        for cut in cuts {
            let mut files = SourceFiles::new();
            let id = files.add("cut.mad".to_string(), src[..cut].to_string());
            let _ = compile(&mut files, id);
        }
    }
}

#[test]
fn errors_do_not_cascade() {
    let mut files = SourceFiles::new();
    let id = files.add(
        "t.mad".to_string(),
        "fn f() -> f64 { let a = nope(1.0); let b = a + 1.0; b * 2.0 }".to_string(),
    );
    let d = compile(&mut files, id).expect_err("an error");
    let codes: Vec<_> = d.iter().filter_map(|d| d.code.clone()).collect();
    assert_eq!(codes, vec!["E0100".to_string()]);
}

/// The IR of compiled programs (including `print.str`, loops with flags, overload
/// names with `$`) prints and parses back to the same text.
#[test]
fn lowered_ir_round_trips_through_the_text_form() {
    let src = "fn f(n: i64) -> i64 { print(\"say \\\"hi\\\"\"); let mut s = 0; for i in 0..n { if i == 3 { break; } s += i; } s + dot(vec2(1, 2), vec2(3, 4)) as i64 }";
    let c = build(src);
    let text = mad::ir::print::print_module(&c.module);
    assert!(text.contains("print.str"), "{text}");
    let back = mad::ir::parse::parse_module(&text).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
    assert_eq!(mad::ir::print::print_module(&back), text);
    let (v, out) = run_out(src, "f", &[Value::I64(10)]);
    assert_eq!(i64v(v), 3 + 11);
    assert_eq!(out, "say \"hi\"\n");
}
