//! Reverse mode of recursive functions split on the tape (`f$rfwd` records each
//! level's live values, `f$rbwd` pops them): gradients of linear, tree-shaped,
//! mutual and branchy recursion against central finite differences of the
//! primal and hand-written derivatives (Rust), on both engines; `hessian` of a
//! recursive function against differences of its gradient; depth 1000; tape use
//! linear in the depth; the recomputing path kept for recursion inside loops;
//! calls in nested `if`s, early returns, vector, tuple and heap-tensor values.

use mad::{Engine, Program, Tensor, Value};

use crate::program_common;
use program_common::{call, close, flat};

const SRC: &str = r#"
// Horner's rule by recursion: the depth is the length of the data.
fn horner(c: [f64], x: f64, i: i64) -> f64 {
    if i >= len(c) { 0.0 } else { c[i] + x * horner(c, x, i + 1) }
}
fn horner_grad(c: [f64], x: f64) -> ([f64], f64) { grad(horner)(c, x, 0) }

fn rpow(x: f64, n: i64) -> f64 {
    if n == 0 { 1.0 } else { x * rpow(x, n - 1) }
}
fn rpow_grad(x: f64, n: i64) -> f64 { grad(rpow)(x, n) }

// Tree recursion, fib-shaped, with float accumulation in every level.
fn tree(x: f64, y: f64, n: i64) -> f64 {
    if n < 2 {
        x * y + sin(x)
    } else {
        let a = tree(x, y, n - 1);
        let b = tree(y, x * 0.5, n - 2);
        0.5 * a + sin(b) + x * y
    }
}
fn tree_grad(x: f64, y: f64, n: i64) -> (f64, f64) { grad(tree)(x, y, n) }
fn tree3(v: vec2) -> f64 { tree(v.x, v.y, 5) }
fn tree3_hess(v: vec2) -> matrix { hessian(tree3)(v) }
fn tree3_grad(v: vec2) -> vec2 { grad(tree3)(v) }

// The call inside an `if` whose result is used after it.
fn after(x: f64, n: i64) -> f64 {
    let r = if n > 0 { after(x * 0.9, n - 1) } else { x };
    r * x + sin(r)
}
fn after_grad(x: f64, n: i64) -> f64 { grad(after)(x, n) }

// Mutual recursion.
fn ev(x: f64, n: i64) -> f64 {
    if n == 0 { x } else { sin(od(x, n - 1)) + x }
}
fn od(x: f64, n: i64) -> f64 {
    if n == 0 { x * x } else { ev(x, n - 1) * x }
}
fn ev_grad(x: f64, n: i64) -> f64 { grad(ev)(x, n) }

// A data-dependent `while` loop in every level.
fn wrec(x: f64, n: i64) -> f64 {
    let mut s = x;
    while s < 3.0 { s = s * 1.5 + 0.1; }
    if n == 0 { s } else { wrec(s * 0.3, n - 1) * x }
}
fn wrec_grad(x: f64, n: i64) -> f64 { grad(wrec)(x, n) }

// Recursion inside a loop keeps the recomputing path.
fn loopy(x: f64, n: i64) -> f64 {
    let mut s = x;
    for i in 0..n { s += x * loopy(x * 0.5, n - 1 - i); }
    s
}
fn loopy_grad(x: f64, n: i64) -> f64 { grad(loopy)(x, n) }

// An error at the deepest level (out of bounds for short data).
fn bad(c: [f64], i: i64) -> f64 {
    if i == 0 { c[0] } else { c[i] * bad(c, i - 1) + c[i + 3] }
}
fn bad_grad(c: [f64]) -> [f64] { grad(bad)(c, 2) }

fn rpow6(x: f64) -> f64 { rpow(x, 6) }
fn rpow6_hess(x: f64) -> matrix { hessian(rpow6)(x) }

// Other shapes: an early `return`, vector and tuple results, no float parameter.
fn early(x: f64, n: i64) -> f64 {
    if n == 0 { return x; }
    x * early(x, n - 1) + sin(x)
}
fn early_grad(x: f64, n: i64) -> f64 { grad(early)(x, n) }
fn vrec(v: vec3, n: i64) -> vec3 {
    if n == 0 { v } else { let w = vrec(v * 0.5, n - 1); vec3(w.y, w.z, w.x) + v * w.x }
}
fn vsum(v: vec3) -> f64 { let w = vrec(v, 4); w.x + 2.0 * w.y + 3.0 * w.z }
fn vsum_grad(v: vec3) -> vec3 { grad(vsum)(v) }
fn vsum_jvp(v: vec3, d: vec3) -> (f64, f64) { jvp(vsum)(v, d) }
fn vsum_hess(v: vec3) -> matrix { hessian(vsum)(v) }
fn trec(x: f64, n: i64) -> (f64, f64) {
    if n == 0 { (x, 1.0) } else { let (a, b) = trec(x * 1.1, n - 1); (a * b + x, sin(a) + b) }
}
fn tsum(x: f64) -> f64 { let (a, b) = trec(x, 5); a + 3.0 * b }
fn tsum_grad(x: f64) -> f64 { grad(tsum)(x) }
fn tsum_jvp(x: f64) -> (f64, f64) { jvp(tsum)(x, 1.0) }
fn cnt(n: i64) -> f64 { if n == 0 { 1.0 } else { 1.5 * cnt(n - 1) } }
fn usecnt(x: f64) -> f64 { x * cnt(5) }
fn usecnt_grad(x: f64) -> f64 { grad(usecnt)(x) }

// A heap tensor made in every level, recorded on the tape by one function
// (`$rfwd`) and read back by another (`$rbwd`).
fn vdyn(v: [f64], n: i64) -> f64 {
    if n == 0 { sum(v) } else { let w = v * 0.9 + sin(v); vdyn(w, n - 1) * 1.1 + w[0] * w[1] }
}
fn vdyn_grad(v: [f64]) -> [f64] { grad(vdyn)(v, 6) }

// Mutual recursion where one side calls back from a loop: `mf` is split,
// its calls of `mg` are not (`mg` recomputes).
fn mf(x: f64, n: i64) -> f64 { if n <= 0 { x } else { sin(mg(x, n - 1)) * x } }
fn mg(x: f64, n: i64) -> f64 {
    let mut s = x;
    for i in 0..2 { s += mf(s * 0.5, n - 1 - i); }
    s
}
fn mf_grad(x: f64, n: i64) -> f64 { grad(mf)(x, n) }

// The recursive calls inside nested `if`s, and a `for` loop in every level.
fn nest(x: f64, n: i64) -> f64 {
    let mut s = 0.0;
    for i in 0..3 { s += sin(x * (i as f64)); }
    if n > 0 {
        if n % 2 == 0 { nest(x * 0.8, n - 1) * x + s } else { cos(nest(x, n - 1)) + x }
    } else {
        x * x + s
    }
}
fn nest_grad(x: f64, n: i64) -> f64 { grad(nest)(x, n) }

// Second derivative by reverse over reverse.
fn rpow_d1(x: f64) -> f64 { grad(rpow)(x, 5) }
fn rpow_d2(x: f64) -> f64 { grad(rpow_d1)(x) }
"#;

const ENGINES: [Engine; 2] = [Engine::Jit, Engine::Interpreter];

fn program() -> Program {
    Program::compile_str("ad_recursion.mad", SRC).unwrap_or_else(|e| panic!("compiles: {e}"))
}

fn fd1(f: &dyn Fn(f64) -> f64, x: f64) -> f64 {
    let h = 1e-6 * x.abs().max(1.0);
    (f(x + h) - f(x - h)) / (2.0 * h)
}

fn vector(xs: &[f64]) -> Value {
    Value::Tensor(Tensor::vector(xs.to_vec()))
}

/// A value with its derivatives in two directions (hand-written forward mode).
#[derive(Clone, Copy, Debug)]
struct D(f64, f64, f64);

impl D {
    fn var(v: f64, dir: usize) -> D {
        D(
            v,
            if dir == 0 { 1.0 } else { 0.0 },
            if dir == 1 { 1.0 } else { 0.0 },
        )
    }
    fn add(self, o: D) -> D {
        D(self.0 + o.0, self.1 + o.1, self.2 + o.2)
    }
    fn mul(self, o: D) -> D {
        D(
            self.0 * o.0,
            self.1 * o.0 + self.0 * o.1,
            self.2 * o.0 + self.0 * o.2,
        )
    }
    fn scale(self, k: f64) -> D {
        D(self.0 * k, self.1 * k, self.2 * k)
    }
    fn sin(self) -> D {
        let c = self.0.cos();
        D(self.0.sin(), self.1 * c, self.2 * c)
    }
}

fn tree_by_hand(x: D, y: D, n: i64) -> D {
    if n < 2 {
        x.mul(y).add(x.sin())
    } else {
        let a = tree_by_hand(x, y, n - 1);
        let b = tree_by_hand(y, x.scale(0.5), n - 2);
        a.scale(0.5).add(b.sin()).add(x.mul(y))
    }
}

fn after_by_hand(x: D, n: i64) -> D {
    let r = if n > 0 {
        after_by_hand(x.scale(0.9), n - 1)
    } else {
        x
    };
    r.mul(x).add(r.sin())
}

fn ev_by_hand(x: D, n: i64) -> D {
    if n == 0 {
        x
    } else {
        od_by_hand(x, n - 1).sin().add(x)
    }
}

fn od_by_hand(x: D, n: i64) -> D {
    if n == 0 {
        x.mul(x)
    } else {
        ev_by_hand(x, n - 1).mul(x)
    }
}

#[test]
fn linear_recursion_horner_with_depth_from_the_data() {
    let p = program();
    let c: Vec<f64> = (0..12).map(|k| 0.3 + 0.1 * (k as f64).sin()).collect();
    let x = 0.83f64;
    // Hand-written: d/dc_k = x^k, d/dx = sum k c_k x^(k-1).
    let mut want: Vec<f64> = (0..c.len()).map(|k| x.powi(k as i32)).collect();
    want.push(
        (1..c.len())
            .map(|k| k as f64 * c[k] * x.powi(k as i32 - 1))
            .sum(),
    );
    let value = |c: &[f64], x: f64| {
        flat(&call(
            &p,
            Engine::Interpreter,
            "horner",
            &[vector(c), Value::F64(x), Value::I64(0)],
        ))[0]
    };
    let mut num: Vec<f64> = (0..c.len())
        .map(|k| {
            fd1(
                &|t| {
                    let mut cc = c.clone();
                    cc[k] = t;
                    value(&cc, x)
                },
                c[k],
            )
        })
        .collect();
    num.push(fd1(&|t| value(&c, t), x));
    for e in ENGINES {
        let g = flat(&call(&p, e, "horner_grad", &[vector(&c), Value::F64(x)]));
        close("horner grad vs hand-written", &g, &want, 1e-12);
        close("horner grad vs differences", &g, &num, 1e-7);
    }
}

#[test]
fn tree_recursion_against_hand_written_forward_mode_and_differences() {
    let p = program();
    let (x, y) = (0.7, -0.4);
    for n in [0i64, 1, 2, 5, 9] {
        let dx = tree_by_hand(D::var(x, 0), D::var(y, 1), n);
        let value = |a: f64, b: f64| {
            flat(&call(
                &p,
                Engine::Interpreter,
                "tree",
                &[Value::F64(a), Value::F64(b), Value::I64(n)],
            ))[0]
        };
        let num = [fd1(&|t| value(t, y), x), fd1(&|t| value(x, t), y)];
        for e in ENGINES {
            let g = flat(&call(
                &p,
                e,
                "tree_grad",
                &[Value::F64(x), Value::F64(y), Value::I64(n)],
            ));
            close(
                &format!("tree({n}) grad vs hand-written"),
                &g,
                &[dx.1, dx.2],
                1e-12,
            );
            close(&format!("tree({n}) grad vs differences"), &g, &num, 1e-7);
        }
    }
}

#[test]
fn call_inside_an_if_whose_result_is_used_after_it() {
    let p = program();
    for n in [0i64, 1, 3, 8] {
        for x in [0.6, -1.3] {
            let want = after_by_hand(D::var(x, 0), n).1;
            let f = |t: f64| {
                flat(&call(
                    &p,
                    Engine::Interpreter,
                    "after",
                    &[Value::F64(t), Value::I64(n)],
                ))[0]
            };
            let num = fd1(&f, x);
            for e in ENGINES {
                let g = flat(&call(&p, e, "after_grad", &[Value::F64(x), Value::I64(n)]));
                close("after grad vs hand-written", &g, &[want], 1e-12);
                close("after grad vs differences", &g, &[num], 1e-7);
            }
        }
    }
}

#[test]
fn mutual_recursion_is_split_too() {
    let p = program();
    let mut m = p.module().clone();
    let f = m.find("ev").expect("ev");
    mad::ad::vjp(&mut m, f).expect("reverse mode");
    for name in ["ev$rfwd", "ev$rbwd", "od$rfwd", "od$rbwd"] {
        assert!(m.find(name).is_some(), "{name}");
    }
    for n in [0i64, 1, 2, 7] {
        let x = 0.9;
        let want = ev_by_hand(D::var(x, 0), n).1;
        let f = |t: f64| {
            flat(&call(
                &p,
                Engine::Interpreter,
                "ev",
                &[Value::F64(t), Value::I64(n)],
            ))[0]
        };
        let num = fd1(&f, x);
        for e in ENGINES {
            let g = flat(&call(&p, e, "ev_grad", &[Value::F64(x), Value::I64(n)]));
            close("ev grad vs hand-written", &g, &[want], 1e-12);
            close("ev grad vs differences", &g, &[num], 1e-7);
        }
    }
}

/// Forward mode (`jvp`) of the primal as the reference where no closed form is handy.
#[test]
fn while_loop_in_every_level_and_recursion_inside_a_loop() {
    let p = program();
    for (name, x, n) in [
        ("wrec", 0.4, 3i64),
        ("nest", 0.7, 6),
        ("nest", 0.7, 5),
        ("mf", 0.6, 5),
        ("wrec", 1.7, 0),
        ("loopy", 0.8, 4),
        ("loopy", 1.1, 0),
    ] {
        let f = |t: f64| {
            flat(&call(
                &p,
                Engine::Interpreter,
                name,
                &[Value::F64(t), Value::I64(n)],
            ))[0]
        };
        let num = fd1(&f, x);
        for e in ENGINES {
            let g = flat(&call(
                &p,
                e,
                &format!("{name}_grad"),
                &[Value::F64(x), Value::I64(n)],
            ));
            close(&format!("{name} grad vs differences"), &g, &[num], 1e-7);
        }
    }
    let mut m = p.module().clone();
    let f = m.find("loopy").expect("loopy");
    mad::ad::vjp(&mut m, f).expect("reverse mode");
    assert!(
        m.find("loopy$rfwd").is_none(),
        "a recursive call in a loop recomputes"
    );
    let f = m.find("mf").expect("mf");
    mad::ad::vjp(&mut m, f).expect("reverse mode");
    assert!(m.find("mf$rfwd").is_some(), "mf is split");
    assert!(m.find("mg$rfwd").is_none(), "mg recomputes");
    let f = m.find("nest").expect("nest");
    mad::ad::vjp(&mut m, f).expect("reverse mode");
    assert!(
        m.find("nest$rbwd").is_some(),
        "calls in nested ifs are split"
    );
}

#[test]
fn hessian_of_recursive_functions() {
    let p = program();
    let h = 1e-5;
    for v in [[0.6, 0.3], [-0.2, 1.1]] {
        let grad_at = |a: f64, b: f64| {
            flat(&call(
                &p,
                Engine::Interpreter,
                "tree3_grad",
                &[vector(&[a, b])],
            ))
        };
        let (gxp, gxm) = (grad_at(v[0] + h, v[1]), grad_at(v[0] - h, v[1]));
        let (gyp, gym) = (grad_at(v[0], v[1] + h), grad_at(v[0], v[1] - h));
        let num = [
            (gxp[0] - gxm[0]) / (2.0 * h),
            (gyp[0] - gym[0]) / (2.0 * h),
            (gxp[1] - gxm[1]) / (2.0 * h),
            (gyp[1] - gym[1]) / (2.0 * h),
        ];
        for e in ENGINES {
            let hm = flat(&call(&p, e, "tree3_hess", &[vector(&v)]));
            close(
                "tree hessian vs differences of the gradient",
                &hm,
                &num,
                1e-6,
            );
            assert!(
                (hm[1] - hm[2]).abs() <= 1e-12 * hm[1].abs().max(1.0),
                "symmetric: {hm:?}"
            );
        }
    }
    for e in ENGINES {
        let x = 1.3f64;
        let hm = flat(&call(&p, e, "rpow6_hess", &[Value::F64(x)]));
        close("rpow hessian vs 30 x^4", &hm, &[30.0 * x.powi(4)], 1e-12);
        let d2 = flat(&call(&p, e, "rpow_d2", &[Value::F64(x)]));
        close(
            "grad(grad(rpow)) vs 20 x^3",
            &d2,
            &[20.0 * x.powi(3)],
            1e-12,
        );
    }
}

#[test]
fn an_error_at_the_deepest_level_leaves_the_next_call_clean() {
    let p = program();
    for e in ENGINES {
        let mut out = Vec::new();
        let err = p.call_with(e, "bad_grad", &[vector(&[1.0, 2.0, 3.0])], &mut out);
        assert!(err.is_err(), "out of bounds on {e:?}");
        let c = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        // bad(c, 2) = c2 (c1 c0 + c4) + c5
        let g = flat(&call(&p, e, "bad_grad", &[vector(&c)]));
        let want = [c[2] * c[1], c[2] * c[0], c[1] * c[0] + c[4], 0.0, c[2], 1.0];
        close("bad grad after an error", &g, &want, 1e-14);
        let r = flat(&call(&p, e, "rpow_grad", &[Value::F64(1.1), Value::I64(3)]));
        close(
            "rpow grad after an error",
            &r,
            &[3.0 * 1.1f64.powi(2)],
            1e-14,
        );
    }
}

/// Depth 1000 runs on the JIT (limit 12 000 nested calls, as the primal) and
/// on the interpreter (on a stack sized as for the primal at that depth), with
/// the gradient `n x^(n-1)`.
#[test]
fn depth_one_thousand() {
    let p = program();
    let x = 1.0005f64;
    let want = 1000.0 * x.powi(999);
    let g = flat(&call(
        &p,
        Engine::Jit,
        "rpow_grad",
        &[Value::F64(x), Value::I64(1000)],
    ));
    close("rpow(x, 1000) on the JIT", &g, &[want], 1e-12);
    let g = flat(&call(
        &p,
        Engine::Jit,
        "rpow_grad",
        &[Value::F64(1.0), Value::I64(11_000)],
    ));
    close("rpow(1, 11000) on the JIT", &g, &[11_000.0], 1e-12);
    let handle = std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || {
            let p = program();
            flat(&call(
                &p,
                Engine::Interpreter,
                "rpow_grad",
                &[Value::F64(x), Value::I64(1000)],
            ))
        })
        .expect("spawn");
    let g = handle.join().expect("no stack overflow");
    close("rpow(x, 1000) on the interpreter", &g, &[want], 1e-12);
}

/// The tape's peak grows by the same number of words per level of a linear
/// recursion (linear in the depth; the recomputing path would do work quadratic
/// in it), by a fixed number of words per call for tree recursion, and every
/// push is popped.
#[test]
fn tape_use_is_linear_in_the_depth_and_balanced() {
    let handle = std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(|| {
            let p = program();
            let peak = |name: &str, args: &[Value]| {
                call(&p, Engine::Interpreter, name, args);
                let (peak, left) = mad::back::interp::last_tape_use();
                assert_eq!(left, 0, "{name}: every push popped");
                peak
            };
            let rp: Vec<usize> = [100i64, 200, 300, 400]
                .iter()
                .map(|&n| peak("rpow_grad", &[Value::F64(1.01), Value::I64(n)]))
                .collect();
            let tr: Vec<usize> = [6i64, 8, 10, 12]
                .iter()
                .map(|&n| {
                    peak(
                        "tree_grad",
                        &[Value::F64(0.3), Value::F64(0.2), Value::I64(n)],
                    )
                })
                .collect();
            // (The interpreter's tape holds a tensor's elements, the JIT's a
            // pointer: scalar recursions measure the words per level.)
            let ho: Vec<usize> = [100i64, 200, 300]
                .iter()
                .map(|&n| peak("after_grad", &[Value::F64(0.9), Value::I64(n)]))
                .collect();
            (rp, tr, ho)
        })
        .expect("spawn");
    let (rp, tr, ho) = handle.join().expect("runs");
    for (what, v) in [("rpow", &rp), ("after", &ho)] {
        let step = v[1] - v[0];
        assert!(step > 0, "{what}: {v:?}");
        for w in v.windows(2) {
            assert_eq!(w[1] - w[0], step, "{what}: linear in the depth: {v:?}");
        }
    }
    // rpow: 100 more levels, the same words per level.
    assert_eq!((rp[1] - rp[0]) % 100, 0, "{rp:?}");
    // tree: the forward pass records every call once, so the peak is a fixed
    // number of words per inner call (a binary tree has one leaf more than
    // inner calls): linear in the number of calls.
    fn inner(n: i64) -> usize {
        if n < 2 {
            0
        } else {
            1 + inner(n - 1) + inner(n - 2)
        }
    }
    let calls: Vec<usize> = [6i64, 8, 10, 12].iter().map(|&n| inner(n)).collect();
    let w = (tr[1] - tr[0]) / (calls[1] - calls[0]);
    assert!(w > 0, "{tr:?}");
    for k in 1..4 {
        assert_eq!(
            tr[k] - tr[0],
            w * (calls[k] - calls[0]),
            "tree: linear in the calls: {tr:?}"
        );
    }
}

/// Early `return`, vector- and tuple-valued recursion, and a recursive callee
/// without float parameters, against forward mode (`jvp`) and differences.
#[test]
fn other_shapes_of_recursion() {
    let p = program();
    for e in ENGINES {
        let f = |t: f64| {
            flat(&call(
                &p,
                Engine::Interpreter,
                "early",
                &[Value::F64(t), Value::I64(4)],
            ))[0]
        };
        let g = flat(&call(
            &p,
            e,
            "early_grad",
            &[Value::F64(0.7), Value::I64(4)],
        ));
        close("early return", &g, &[fd1(&f, 0.7)], 1e-7);

        let v = [0.3, -0.2, 0.5];
        let g = flat(&call(&p, e, "vsum_grad", &[vector(&v)]));
        for k in 0..3 {
            let mut d = [0.0; 3];
            d[k] = 1.0;
            let jv = flat(&call(&p, e, "vsum_jvp", &[vector(&v), vector(&d)]));
            close("vector recursion: grad vs jvp", &[g[k]], &[jv[1]], 1e-13);
        }
        let hm = flat(&call(&p, e, "vsum_hess", &[vector(&v)]));
        let h = 1e-5;
        for k in 0..3 {
            let (mut a, mut b) = (v, v);
            a[k] += h;
            b[k] -= h;
            let ga = flat(&call(&p, Engine::Interpreter, "vsum_grad", &[vector(&a)]));
            let gb = flat(&call(&p, Engine::Interpreter, "vsum_grad", &[vector(&b)]));
            for j in 0..3 {
                close(
                    "vector recursion: hessian vs differences",
                    &[hm[3 * j + k]],
                    &[(ga[j] - gb[j]) / (2.0 * h)],
                    1e-6,
                );
            }
        }

        let g = flat(&call(&p, e, "tsum_grad", &[Value::F64(0.4)]));
        let jv = flat(&call(&p, e, "tsum_jvp", &[Value::F64(0.4)]));
        close("tuple recursion: grad vs jvp", &g, &[jv[1]], 1e-12);

        let v = [0.3, -0.7, 1.2, 0.05];
        let g = flat(&call(&p, e, "vdyn_grad", &[vector(&v)]));
        let num: Vec<f64> = (0..v.len())
            .map(|k| {
                fd1(
                    &|t| {
                        let mut a = v;
                        a[k] = t;
                        flat(&call(
                            &p,
                            Engine::Interpreter,
                            "vdyn",
                            &[vector(&a), Value::I64(6)],
                        ))[0]
                    },
                    v[k],
                )
            })
            .collect();
        close("heap tensors on the tape", &g, &num, 1e-7);

        let g = flat(&call(&p, e, "usecnt_grad", &[Value::F64(2.0)]));
        close("no float parameter", &g, &[1.5f64.powi(5)], 1e-14);
    }
}
