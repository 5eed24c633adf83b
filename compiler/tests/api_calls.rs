//! Calling functions through the embedding API (`Program`): overloads picked by the
//! arguments' types, and deep recursion on the interpreter from a small caller stack.

use mad::{Engine, Error, Program, Tensor, Value};

const AREAS: &str = "
fn area(r: f64) -> f64 { 3.0 * r * r }
fn area(a: vec2, b: vec2) -> f64 { 0.5 * (a.x * b.y - a.y * b.x) }
fn rec(n: i64) -> i64 { if n == 0 { 0 } else { 1 + rec(n - 1) } }
";

fn program() -> Program {
    Program::compile_str("areas.mad", AREAS).unwrap()
}

/// `call` and `function` reach every overload of a name, by the values' types or the Rust
/// types; arguments no overload takes are an error listing the overloads.
#[test]
fn overloads_are_picked_by_the_argument_types() {
    let p = program();
    let v = |x: f64, y: f64| Value::Tensor(Tensor::vector(vec![x, y]));
    assert_eq!(p.call("area", &[Value::F64(2.0)]).unwrap(), Value::F64(12.0));
    assert_eq!(p.call("area", &[v(1.0, 0.0), v(0.0, 1.0)]).unwrap(), Value::F64(0.5));
    let two = p.function::<([f64; 2], [f64; 2]), f64>("area").unwrap();
    assert_eq!(two.call(([1.0, 0.0], [0.0, 2.0])).unwrap(), 1.0);
    let one = p.function::<(f64,), f64>("area").unwrap();
    assert_eq!(one.call((1.0,)).unwrap(), 3.0);
    match p.call("area", &[Value::I64(1), Value::I64(2), Value::I64(3)]) {
        Err(e @ Error::NoOverload { .. }) => {
            let m = e.to_string();
            assert!(m.contains("fn area(r: f64) -> f64") && m.contains("vec2"), "{m}");
        }
        other => panic!("expected NoOverload, got {other:?}"),
    }
    // A name with one function keeps that function's own message.
    match p.call("rec", &[Value::F64(1.0)]) {
        Err(Error::Arguments { .. }) => {}
        other => panic!("expected Arguments, got {other:?}"),
    }
}

/// Runs `f` on a host thread with a 512 KiB stack (smaller than a main thread's).
fn on_a_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new().stack_size(512 << 10).spawn(f).unwrap().join().unwrap()
}

/// Deep recursion on the interpreter is the run-time error "recursion is too deep", also
/// when the caller's thread has a small stack (the interpreter runs on a thread of its own).
#[test]
fn deep_recursion_on_the_interpreter_is_an_error_from_a_small_stack() {
    let p = program();
    let result = on_a_small_stack(move || {
        let mut out = Vec::new();
        let ok = p.call_with(Engine::Interpreter, "rec", &[Value::I64(1000)], &mut out);
        let deep = p.call_with(Engine::Interpreter, "rec", &[Value::I64(10_000_000)], &mut out);
        (ok.map_err(|e| e.to_string()), deep.map_err(|e| e.to_string()))
    });
    assert_eq!(result.0, Ok(Value::I64(1000)));
    let err = result.1.unwrap_err();
    assert!(err.contains("recursion is too deep"), "{err}");
}

/// The JIT runs a call on the calling thread, and one that needs more stack than that lends
/// (recursion 11,000 deep) again on a thread of its own: from a thread with a 512 KiB stack
/// both return, the output of the abandoned first attempt is not written twice, and the
/// language's depth limit is still the error.
#[test]
fn jit_calls_that_need_a_big_stack_run_again_on_one() {
    let p = Program::compile_str(
        "stack.mad",
        "fn rec(n: i64) -> i64 { if n == 0 { 0 } else { 1 + rec(n - 1) } }\n\
         fn loud(n: i64) -> i64 { print(n); rec(n) }\n",
    )
    .unwrap();
    let result = on_a_small_stack(move || {
        let mut out = Vec::new();
        let shallow = p.call_with(Engine::Jit, "rec", &[Value::I64(10)], &mut out);
        let deep = p.call_with(Engine::Jit, "loud", &[Value::I64(11_000)], &mut out);
        let too_deep = p.call_with(Engine::Jit, "rec", &[Value::I64(13_000)], &mut out);
        (
            shallow.map_err(|e| e.to_string()),
            deep.map_err(|e| e.to_string()),
            too_deep.map_err(|e| e.to_string()),
            String::from_utf8(out).unwrap(),
        )
    });
    assert_eq!(result.0, Ok(Value::I64(10)));
    assert_eq!(result.1, Ok(Value::I64(11_000)));
    assert!(result.2.unwrap_err().contains("recursion is too deep"));
    assert_eq!(result.3, "11000\n");
}

/// A dof declared `= tutte` on a closed mesh is an error when the program is bound (§12.2),
/// not first when the unknowns are formed; so is `set_init` of `tutte` on one.
#[test]
fn tutte_on_a_closed_mesh_is_an_error_at_bind_time() {
    use mad::energy::EnergyProgram;
    use mad::front::state::Init;
    let closed = mad_runtime::mesh::load_mesh("sphere:1").unwrap();
    let p = EnergyProgram::compile_str(
        "t.mad",
        "dof u: vertex -> vec2 = tutte; energy a(e: edge) { let d = u[e.v0] - u[e.v1]; dot(d, d) }",
    )
    .unwrap();
    let err = p.bind(&closed).err().expect("bind must fail").to_string();
    assert!(err.contains("no boundary") && err.contains("`u`"), "{err}");
    let q = EnergyProgram::compile_str("t2.mad", "dof u: vertex -> vec2; energy a(e: edge) { let d = u[e.v0] - u[e.v1]; dot(d, d) }").unwrap();
    let mut me = q.bind(&closed).unwrap();
    let err = me.set_init("u", Init::Tutte).unwrap_err().to_string();
    assert!(err.contains("no boundary"), "{err}");
}

/// Compile errors carry their positions as data, not only in the rendered text.
#[test]
fn compile_errors_give_their_positions() {
    let Err(Error::Compile(d)) = Program::compile_str("bad.mad", "fn main() {\n    let x: i64 = 1.5;\n    print(y);\n}\n") else {
        panic!("compiles")
    };
    let items = d.items();
    assert_eq!(items.len(), 2, "{items:?}");
    assert_eq!(items[0].code.as_deref(), Some("E0101"));
    assert_eq!((items[0].file.as_deref(), items[0].line, items[0].column), (Some("bad.mad"), Some(2), Some(18)));
    assert_eq!(items[1].code.as_deref(), Some("E0100"));
    assert_eq!((items[1].line, items[1].column), (Some(3), Some(11)));
    assert!(items[1].message.contains("cannot find `y`"), "{items:?}");
}
