//! Tensors updated in place at any loop depth, and adjoints of reads accumulated sparsely:
//! the programs of the "linear cost" promise (an element write in a nested loop, the
//! gradient of a nested loop of reads) compile to in-place updates of one buffer
//! (checked on the IR: no zero fill or whole-tensor add left in a loop, every insert in a
//! loop written in place), and give the same values on the interpreter and the JIT as
//! closed forms and central finite differences do. Programs where an in-place write would
//! be visible (the old value read later, or read inside the inner loop) write into a copy.

use mad::codegen::inplace::analyze;
use mad::ir::{Function, OpKind, Region, Type};
use mad::{Engine, Program};
use mad_runtime::{Tensor, TensorData, Value};

fn vector(xs: &[f64]) -> Value {
    Value::Tensor(Tensor { shape: vec![xs.len()], data: TensorData::F64(xs.to_vec()) })
}

fn floats(v: &Value) -> Vec<f64> {
    match v {
        Value::F64(x) => vec![*x],
        Value::Tensor(Tensor { data: TensorData::F64(xs), .. }) => xs.clone(),
        other => panic!("not floats: {other:?}"),
    }
}

/// Calls `name` on both engines; they must agree bit for bit.
fn both(prog: &Program, name: &str, args: &[Value]) -> Vec<f64> {
    let jit = prog.call_with(Engine::Jit, name, args, &mut std::io::sink()).expect("JIT runs");
    let interp = prog.call_with(Engine::Interpreter, name, args, &mut std::io::sink()).expect("interpreter runs");
    let (a, b) = (floats(&jit), floats(&interp));
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.to_bits(), y.to_bits(), "{name}: JIT {x} vs interpreter {y}");
    }
    a
}

/// Every op of `r` inside a loop (at any depth below `depth` 0), with its depth.
fn ops_in_loops(f: &Function, r: &Region, depth: usize, out: &mut Vec<(mad::ir::OpId, usize)>) {
    for &id in &r.ops {
        let op = &f.ops[id];
        if depth > 0 {
            out.push((id, depth));
        }
        let inner = depth + usize::from(matches!(op.kind, OpKind::For | OpKind::While));
        for nr in &op.regions {
            ops_in_loops(f, nr, inner, out);
        }
    }
}

/// No zero fill and no whole-tensor op inside a loop of `f` (of the highest rank in `f`, the
/// tensor it loops over: a row-sized one is fine), and every insert inside a
/// loop written in place.
fn assert_linear(f: &Function) {
    assert_linear_but_state(f, false);
}

/// [`assert_linear`], where `state_buffers` allows fills inside loops (the per-iteration
/// state a nested loop's reverse sweep stores for its scalars: trip-count sized).
fn assert_linear_but_state(f: &Function, state_buffers: bool) {
    let rank = |t: &Type| match t {
        Type::Tensor { shape, .. } => shape.len(),
        _ => 0,
    };
    let whole = f.values.iter().map(|(_, v)| rank(&v.ty)).max().unwrap_or(0).max(1);
    let inplace = analyze(f);
    let mut ops = Vec::new();
    ops_in_loops(f, &f.body, 0, &mut ops);
    for (id, _) in ops {
        let op = &f.ops[id];
        let tensor_result = op.results.first().is_some_and(|&v| rank(f.ty(v)) == whole);
        match op.kind {
            OpKind::Full if tensor_result && !state_buffers => panic!("{}: a tensor filled inside a loop", f.name),
            OpKind::Binary(_) if tensor_result => panic!("{}: a whole-tensor op inside a loop", f.name),
            OpKind::Insert => assert!(inplace.inserts.contains(&id), "{}: an insert in a loop copies", f.name),
            _ => {}
        }
    }
}

const NESTED_WRITES: &str = "
fn rows(n: i64) -> vector {
    let v: vector = ones(n);
    let mut w: vector = zeros(n);
    for r in 0..10 { for i in 0..n { w[i] = v[i] * (r as f64) + w[i]; } }
    w
}
fn deep(n: i64) -> matrix {
    let mut m: matrix = zeros(n, 3);
    for r in 0..2 { for i in 0..n { for j in 0..3 { m[i, j] = m[i, j] + ((i * 3 + j + r) as f64); } } }
    m
}
fn kept(n: i64) -> f64 {
    let a: vector = zeros(n);
    let mut w = a;
    for r in 0..3 { for i in 0..n { w[i] = w[i] + 1.0; } }
    a[0] * 100.0 + w[0]
}
fn old_inside(n: i64) -> vector {
    let mut w: vector = ones(n);
    for r in 0..3 {
        let old = w;
        for i in 0..n { w[i] = old[(i + 1) % n] * 2.0 + (i as f64); }
    }
    w
}
fn empty_inner(n: i64) -> vector {
    let mut w: vector = ones(n);
    for r in 0..4 { for i in 0..(r - 2) { w[i] = w[i] * 3.0; } }
    w
}
";

#[test]
fn nested_writes_update_one_buffer_and_agree_with_closed_forms() {
    let prog = Program::compile_str("nested.mad", NESTED_WRITES).expect("compiles");
    let n = 7;
    let rows = both(&prog, "rows", &[Value::I64(n)]);
    assert_eq!(rows, vec![45.0; n as usize]);
    let deep = both(&prog, "deep", &[Value::I64(n)]);
    let want: Vec<f64> = (0..n * 3).map(|k| (2 * k + 1) as f64).collect();
    assert_eq!(deep, want);
    assert_eq!(both(&prog, "kept", &[Value::I64(n)]), vec![3.0]);
    let mut w = vec![1.0; n as usize];
    for _ in 0..3 {
        let old = w.clone();
        for i in 0..n as usize {
            w[i] = old[(i + 1) % n as usize] * 2.0 + i as f64;
        }
    }
    assert_eq!(both(&prog, "old_inside", &[Value::I64(n)]), w);
    let mut e = vec![1.0; n as usize];
    for r in 0..4i64 {
        for i in 0..(r - 2).max(0) as usize {
            e[i] *= 3.0;
        }
    }
    assert_eq!(both(&prog, "empty_inner", &[Value::I64(n)]), e);

    let m = prog.module();
    for name in ["rows", "deep"] {
        assert_linear(&m.functions[prog.func_ref(name).unwrap()]);
    }
    // Where the old value stays visible, the loop writes into a copy it makes when it starts
    // (once per loop entry), and the values above show the old value unchanged.
    for name in ["kept", "old_inside"] {
        let f = &m.functions[prog.func_ref(name).unwrap()];
        assert!(!analyze(f).copied_inits.is_empty(), "{name} must start from a copy");
    }
}

const NESTED_READS: &str = "
fn blocks(v: vector) -> f64 {
    let n = len(v);
    let mut s = 0.0;
    for i in 0..n/4 { for j in 0..4 { s += v[4*i+j] * v[4*i+j]; } }
    s
}
fn neighbours(v: vector) -> f64 {
    let n = len(v);
    let mut s = 0.0;
    for i in 0..n/2 { for j in 0..2 { let k = 2*i + j; s += v[k] * v[(k + 1) % n] + sin(v[k]); } }
    s
}
fn three(v: vector) -> f64 {
    let n = len(v);
    let mut s = 0.0;
    for a in 0..2 { for i in 0..n/2 { for j in 0..2 { s += v[2*i+j] * v[2*i+j] * ((a + 1) as f64); } } }
    s
}
fn rows_of(m: matrix) -> f64 {
    let mut s = 0.0;
    for i in 0..rows(m) { let r = m[i]; s += r[0] * r[1] + m[i, 2] * r[0]; }
    s
}
fn g_rows_of(m: matrix) -> matrix { grad(rows_of)(m) }
fn two_inner(v: vector) -> f64 {
    let n = len(v);
    let mut s = 0.0;
    for i in 0..n/2 {
        for j in 0..2 { s += v[2*i+j] * v[2*i+j]; }
        for j in 0..2 { s += sin(v[2*i+j]) * (i as f64); }
    }
    s
}
fn g_two_inner(v: vector) -> vector { grad(two_inner)(v) }
fn triangle(v: vector) -> f64 {
    let n = len(v);
    let mut s = 0.0;
    for c in 0..2 {
        let mut best = -1.0 / 0.0;
        for b in 0..n {
            let mut t = v[b] * ((c + 1) as f64);
            for a in 0..b { t += v[a] * v[b] * 0.1; }
            s += t * t;
            if t > best { best = t; }
        }
        s += best;
    }
    s
}
fn g_triangle(v: vector) -> vector { grad(triangle)(v) }
fn g_blocks(v: vector) -> vector { grad(blocks)(v) }
fn g_neighbours(v: vector) -> vector { grad(neighbours)(v) }
fn g_three(v: vector) -> vector { grad(three)(v) }
";

#[test]
fn nested_read_gradients_accumulate_sparsely_and_match_finite_differences() {
    let prog = Program::compile_str("reads.mad", NESTED_READS).expect("compiles");
    let x: Vec<f64> = (0..16).map(|i| 0.3 + 0.17 * i as f64 - 0.01 * (i * i) as f64).collect();
    for name in ["blocks", "neighbours", "three", "two_inner", "triangle"] {
        let g = both(&prog, &format!("g_{name}"), &[vector(&x)]);
        let h = 1e-6;
        for k in 0..x.len() {
            let (mut up, mut down) = (x.clone(), x.clone());
            up[k] += h;
            down[k] -= h;
            let fd = (both(&prog, name, &[vector(&up)])[0] - both(&prog, name, &[vector(&down)])[0]) / (2.0 * h);
            assert!((g[k] - fd).abs() <= 1e-7 * (1.0 + fd.abs()), "{name}: d/dv[{k}] {} vs {fd}", g[k]);
        }
        let m = prog.module();
        let vjp = m.find(&format!("{name}$vjp")).expect("reverse mode of the function");
        // `triangle` keeps, per outer iteration, the state of its `b` loop (`best`).
        assert_linear_but_state(&m.functions[vjp], name == "triangle");
    }
    // Row reads of a matrix.
    let (r, c) = (5, 3);
    let matrix = |xs: &[f64]| Value::Tensor(Tensor { shape: vec![r, c], data: TensorData::F64(xs.to_vec()) });
    let g = both(&prog, "g_rows_of", &[matrix(&x[..r * c])]);
    for k in 0..r * c {
        let (mut up, mut down) = (x[..r * c].to_vec(), x[..r * c].to_vec());
        up[k] += 1e-6;
        down[k] -= 1e-6;
        let fd = (both(&prog, "rows_of", &[matrix(&up)])[0] - both(&prog, "rows_of", &[matrix(&down)])[0]) / 2e-6;
        assert!((g[k] - fd).abs() <= 1e-7 * (1.0 + fd.abs()), "rows_of: d/dm[{k}] {} vs {fd}", g[k]);
    }
    let m = prog.module();
    assert_linear(&m.functions[m.find("rows_of$vjp").expect("reverse mode")]);
}

const WRITTEN_STATE: &str = "
fn scan(v: vector) -> f64 {
    let n = len(v);
    let mut w: vector = zeros(n);
    w[0] = v[0];
    for i in 1..n { w[i] = w[i - 1] * 0.5 + sin(v[i]) * w[i - 1]; }
    sum(w)
}
fn g_scan(v: vector) -> vector { grad(scan)(v) }
fn rolling(v: vector) -> f64 {
    let n = len(v);
    let mut w: vector = zeros(n);
    let mut acc = 0.0;
    for i in 0..n {
        acc += v[i] * w[(i + n - 1) % n];
        w[i] = sin(acc + v[i]) * v[i];
        w[(i + 1) % n] = w[(i + 1) % n] + w[i] * 0.5;
    }
    sum(hadamard(w, v)) + acc
}
fn g_rolling(v: vector) -> vector { grad(rolling)(v) }
";

/// Reverse mode keeps a tensor written element by element in a loop as an undo log: one
/// row of overwritten elements per iteration, never the whole tensor, and the gradient
/// matches finite differences on both engines.
#[test]
fn element_written_state_is_kept_as_an_undo_log() {
    let prog = Program::compile_str("state.mad", WRITTEN_STATE).expect("compiles");
    let x: Vec<f64> = (0..12).map(|i| 0.4 + 0.13 * i as f64 - 0.02 * (i * i) as f64).collect();
    for name in ["scan", "rolling"] {
        let g = both(&prog, &format!("g_{name}"), &[vector(&x)]);
        for k in 0..x.len() {
            let (mut up, mut down) = (x.clone(), x.clone());
            up[k] += 1e-6;
            down[k] -= 1e-6;
            let fd = (both(&prog, name, &[vector(&up)])[0] - both(&prog, name, &[vector(&down)])[0]) / 2e-6;
            assert!((g[k] - fd).abs() <= 1e-7 * (1.0 + fd.abs()), "{name}: d/dv[{k}] {} vs {fd}", g[k]);
        }
        let m = prog.module();
        let f = &m.functions[m.find(&format!("{name}$vjp")).expect("reverse mode")];
        assert_linear_but_state(f, true);
        // No whole vector is stored per iteration: every insert inside a loop writes a scalar.
        let mut ops = Vec::new();
        ops_in_loops(f, &f.body, 0, &mut ops);
        for (id, _) in ops {
            let op = &f.ops[id];
            if op.kind == OpKind::Insert {
                assert!(matches!(f.ty(op.operands[1]), Type::Scalar(_)), "{name}: a tensor stored per iteration");
            }
        }
    }
}

const STRAIGHT_LINE: &str = "
fn fresh(n: i64) -> vector {
    let mut w: vector = zeros(n);
    w[0] = 1.0;
    w[1] = w[0] + 2.0;
    w[n - 1] = w[1] * 2.0;
    w
}
fn aliased(n: i64) -> f64 {
    let a: vector = zeros(n);
    let mut w = a;
    w[0] = 5.0;
    let b = w;
    w[0] = 7.0;
    a[0] * 100.0 + b[0] * 10.0 + w[0]
}
fn then_loop(n: i64) -> vector {
    let mut w: vector = ones(n);
    w[0] = 3.0;
    for i in 1..n { w[i] = w[i - 1] * 2.0; }
    w
}
fn literal(x: f64) -> vector {
    let v: vector = [1.0, 2.5, x, -4.0, 1e300, 0.0, -0.0];
    v
}
fn literal_rows() -> matrix {
    let m: matrix = [[1, 2], [3, 4.5], [5, 6]];
    m
}
";

#[test]
fn straight_line_writes_and_literals_agree_with_closed_forms() {
    let prog = Program::compile_str("straight.mad", STRAIGHT_LINE).expect("compiles");
    let mut want = vec![0.0; 5];
    want[0] = 1.0;
    want[1] = 3.0;
    want[4] = 6.0;
    assert_eq!(both(&prog, "fresh", &[Value::I64(5)]), want);
    assert_eq!(both(&prog, "aliased", &[Value::I64(3)]), vec![57.0]);
    assert_eq!(both(&prog, "then_loop", &[Value::I64(5)]), vec![3.0, 6.0, 12.0, 24.0, 48.0]);
    let lit = both(&prog, "literal", &[Value::F64(0.25)]);
    assert_eq!(lit[..5], [1.0, 2.5, 0.25, -4.0, 1e300]);
    assert_eq!((lit[5].to_bits(), lit[6].to_bits()), (0.0f64.to_bits(), (-0.0f64).to_bits()));
    assert_eq!(both(&prog, "literal_rows", &[]), vec![1.0, 2.0, 3.0, 4.5, 5.0, 6.0]);
    // The writes into a fresh tensor, and the ones after the last copy, are in place; the
    // first write into `w` (which `a` still holds) and the one after `b = w` copy.
    let m = prog.module();
    let inserts_in_place = |name: &str| {
        let f = &m.functions[prog.func_ref(name).unwrap()];
        let inplace = analyze(f);
        f.body.ops.iter().filter(|&&id| f.ops[id].kind == OpKind::Insert).map(|id| inplace.inserts.contains(id)).collect::<Vec<_>>()
    };
    assert_eq!(inserts_in_place("fresh"), vec![true, true, true]);
    assert_eq!(inserts_in_place("aliased"), vec![false, false]);
}

#[test]
fn a_long_literal_is_one_op() {
    let n = 3000;
    let body: Vec<String> = (0..n).map(|i| format!("{}.5", i)).collect();
    let src = format!("fn main() -> f64 {{ let v: vector = [{}]; let mut s = 0.0; for i in 0..len(v) {{ s += v[i]; }} s }}", body.join(", "));
    let prog = Program::compile_str("long.mad", &src).expect("compiles");
    let f = &prog.module().functions[prog.func_ref("main").unwrap()];
    assert_eq!(f.body.ops.iter().filter(|&&id| f.ops[id].kind == OpKind::Insert).count(), 0);
    let want: f64 = (0..n).map(|i| i as f64 + 0.5).sum();
    assert_eq!(both(&prog, "main", &[]), vec![want]);
}

const TAPED_WRITES: &str = "
@ad(tape)
fn taped(a: vector, x: f64) -> f64 {
    let mut s: vector = zeros(2);
    s[0] = x;
    for k in 0..3 { s[0] = s[0] * a[0] + 1.0; s[1] = s[0] * a[1]; }
    s[0] + s[1]
}
fn g_taped(a: vector, x: f64) -> (vector, f64) { grad(taped)(a, x) }
";

/// A taped loop pushes its state on the tape and then writes it: the write must not change
/// what the tape holds (the JIT writes into a copy, as the interpreter does).
#[test]
fn taped_loops_keep_the_state_they_pushed() {
    let prog = Program::compile_str("taped.mad", TAPED_WRITES).expect("compiles");
    let (a0, a1, x) = (0.5, 1.5, 0.3);
    let args = [vector(&[a0, a1]), Value::F64(x)];
    let jit = prog.call_with(Engine::Jit, "g_taped", &args, &mut std::io::sink()).expect("JIT runs");
    let interp = prog.call_with(Engine::Interpreter, "g_taped", &args, &mut std::io::sink()).expect("interpreter runs");
    assert_eq!(jit, interp);
    let g = crate::program_common::flat(&jit);
    // s0 = x a0³ + a0² + a0 + 1, and the result is s0 (1 + a1).
    let s0 = x * a0 * a0 * a0 + a0 * a0 + a0 + 1.0;
    let ds0_da0 = 3.0 * x * a0 * a0 + 2.0 * a0 + 1.0;
    let want = [ds0_da0 * (1.0 + a1), s0, a0 * a0 * a0 * (1.0 + a1)];
    for (got, want) in g.iter().zip(want) {
        assert!((got - want).abs() <= 1e-14, "{g:?} vs {want}");
    }
}
