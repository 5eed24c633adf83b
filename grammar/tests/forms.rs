//! Every statement and item form, checked on the tree's shape.

use crate::common;
use common::{body, file, parse_ok};

#[test]
fn let_statements() {
    assert_eq!(body("let x = 1;"), "{(let x 1)}");
    assert_eq!(body("let mut x: f64 = 1;"), "{(let mut x: f64 1)}");
    assert_eq!(body("let (a, b) = t;"), "{(let (tuple a b) t)}");
    assert_eq!(
        body("let (a, _, (b, c)) = t;"),
        "{(let (tuple a _ (tuple b c)) t)}"
    );
    assert_eq!(body("let _ = f();"), "{(let _ (call f []))}");
    assert_eq!(body("let (a,) = t;"), "{(let (tuple a) t)}");
    assert_eq!(
        body("let x: [f64; 3] = [0.0; 3];"),
        "{(let x: [f64; 3] (repeat 0.0 3))}"
    );
    assert_eq!(
        body("let x: (f64, [i64]) = t;"),
        "{(let x: (tuple f64 [i64]) t)}"
    );
}

#[test]
fn assignments_including_compound() {
    assert_eq!(body("x = 1;"), "{(= x 1)}");
    assert_eq!(body("v[i] = e;"), "{(= (index v [i]) e)}");
    assert_eq!(body("m[i, j] = e;"), "{(= (index m [i j]) e)}");
    assert_eq!(body("v.x = e;"), "{(= (. v x) e)}");
    for op in ["+", "-", "*", "/", "%", "^"] {
        assert_eq!(body(&format!("x {op}= 2;")), format!("{{({op}= x 2)}}"));
    }
}

#[test]
fn loops_and_jumps() {
    assert_eq!(
        body("for i in 0..n { s += i; }"),
        "{(for i 0 n {(+= s i)})}"
    );
    assert_eq!(
        body("for i in lo + 1..len(x) - 1 {}"),
        "{(for i (+ lo 1) (- (call len [x]) 1) {})}"
    );
    assert_eq!(
        body("while s < 1.0 { s *= 2.0; }"),
        "{(while (< s 1.0) {(*= s 2.0)})}"
    );
    assert_eq!(
        body("while true { if a { break; } continue; }"),
        "{(while true {(expr (if a {(break)})) (continue)})}"
    );
    assert_eq!(body("return;"), "{(return)}");
    assert_eq!(body("return x + 1;"), "{(return (+ x 1))}");
}

#[test]
fn block_like_statements_need_no_semicolon() {
    assert_eq!(
        body("if a { f(); } g();"),
        "{(expr (if a {(expr (call f []))})) (expr (call g []))}"
    );
    assert_eq!(
        body("{ f(); } g()"),
        "{(expr {(expr (call f []))}) (tail (call g []))}"
    );
    assert_eq!(
        body("for i in 0..3 {} while c {} x"),
        "{(for i 0 3 {}) (while c {}) (tail x)}"
    );
    // A leading `-` after a block-like statement starts a new statement.
    assert_eq!(
        body("if a { 1 } else { 2 } -x"),
        "{(expr (if a {(tail 1)} {(tail 2)})) (tail (neg x))}"
    );
    assert_eq!(
        body("if a { f(); };"),
        "{(expr (if a {(expr (call f []))}))}"
    );
}

#[test]
fn block_values() {
    // A trailing block-like expression is the block's value.
    assert_eq!(
        body("if a { 1 } else { 2 }"),
        "{(tail (if a {(tail 1)} {(tail 2)}))}"
    );
    // ... unless a `;` follows it.
    assert_eq!(
        body("if a { 1 } else { 2 };"),
        "{(expr (if a {(tail 1)} {(tail 2)}))}"
    );
    assert_eq!(body("let x = 1; x"), "{(let x 1) (tail x)}");
    assert_eq!(body("x;"), "{(expr x)}");
    assert_eq!(body(";;"), "{}");
    assert_eq!(body(""), "{}");
}

#[test]
fn functions() {
    let f = parse_ok("fn f(a: f64, b: [f64; 3]) -> (f64, i64) { (a, 1) } fn main() {}");
    assert_eq!(
        file(&f),
        "(fn f [a: f64 b: [f64; 3]] (tuple f64 i64) {(tail (tuple a 1))})\n(fn main [] () {})"
    );
    let f = parse_ok("@ad(tape) fn f(x: vector,) -> f64 { sum(x) }");
    assert_eq!(
        file(&f),
        "@ad(tape) (fn f [x: vector] f64 {(tail (call sum [x]))})"
    );
    let f = parse_ok("@inline @ad(sct, fast) fn g() {}");
    assert_eq!(file(&f), "@inline() @ad(sct fast) (fn g [] () {})");
}

#[test]
fn modules_and_uses() {
    let f = parse_ok("mod a { mod b { const K: i64 = 1; } fn f() {} }");
    assert_eq!(
        file(&f),
        "(mod a [(mod b [(const K i64 1)]) (fn f [] () {})])"
    );
    let f = parse_ok(
        "use std::vec::dot; use std::mat::{frob2, inv}; use std::mat::*; use x; use a::{};",
    );
    assert_eq!(
        file(&f),
        "(use [std vec] dot)\n(use [std mat] {frob2 inv})\n(use [std mat] *)\n(use [] x)\n(use [a] {})"
    );
}

#[test]
fn mesh_declarations() {
    let src = "
        dof x: vertex -> vec3;
        data rest: edge -> f64;
        data Rinv: face -> mat2x3;
        param k: f64 = 1.0;
        param n: i64;
        energy spring(e: edge) { let d = x[e.v0] - x[e.v1]; k * dot(d, d) }
        residual r(f: face) -> vec2 { vec2(1.0, 2.0) }
        objective = inertia + h * h * spring;
        const TAU: f64 = 2.0 * PI;
    ";
    assert_eq!(
        file(&parse_ok(src)),
        "(dof x vertex vec3)\n\
         (data rest edge f64)\n\
         (data Rinv face mat2x3)\n\
         (param k f64 1.0)\n\
         (param n i64)\n\
         (energy spring e: edge {(let d (- (index x [(. e v0)]) (index x [(. e v1)]))) \
         (tail (* k (call dot [d d])))})\n\
         (residual r f: face vec2 {(tail (call vec2 [1.0 2.0]))})\n\
         (objective (+ inertia (* (* h h) spring)))\n\
         (const TAU f64 (* 2.0 PI))"
    );
}

#[test]
fn initializers_states_and_updates() {
    let src = r#"
        dof u: vertex -> vec2 = tutte;
        dof w: vertex -> vec3 = "start.obj";
        state R: vertex -> mat3;
        state s: vertex -> vec3 = positions;
        update R(e: ring) { polar(a).0 }
        update u(e: vertex) { vec2(0.0, 0.0) }
    "#;
    assert_eq!(
        file(&parse_ok(src)),
        "(dof u vertex vec2 tutte)\n\
         (dof w vertex vec3 \"start.obj\")\n\
         (state R vertex mat3)\n\
         (state s vertex vec3 positions)\n\
         (update R e: ring {(tail (. (call polar [a]) 0))})\n\
         (update u e: vertex {(tail (call vec2 [0.0 0.0]))})"
    );
    // The contextual words stay identifiers.
    let f = parse_ok("fn update(state: f64) -> f64 { let solve = state; solve }");
    assert_eq!(
        file(&f),
        "(fn update [state: f64] f64 {(let solve state) (tail solve)})"
    );
}

#[test]
fn modules_in_other_files() {
    let f = parse_ok("mod geo; mod util = \"lib/util.mad\"; mod a { mod b; }");
    assert_eq!(
        file(&f),
        "(mod geo;)\n(mod util = \"lib/util.mad\")\n(mod a [(mod b;)])"
    );
    let src = "mod util = \"u.mad\";";
    let f = parse_ok(src);
    let mad_grammar::ast::ItemKind::ModFile { name, path: Some(path) } = &f.items[0].kind else {
        panic!()
    };
    assert_eq!(&src[name.span.range()], "util");
    assert_eq!(&src[path.span.range()], "\"u.mad\"");
    assert_eq!(&src[f.items[0].span.range()], src);
}

#[test]
fn spans_point_at_the_source() {
    let src = "fn f() { let x = a + b; }";
    let f = parse_ok(src);
    let mad_grammar::ast::ItemKind::Fn(func) = &f.items[0].kind else {
        panic!()
    };
    assert_eq!(&src[f.items[0].span.range()], src);
    assert_eq!(&src[func.name.span.range()], "f");
    let stmt = &func.body.stmts[0];
    assert_eq!(&src[stmt.span.range()], "let x = a + b;");
    let mad_grammar::ast::StmtKind::Let { value, .. } = &stmt.kind else {
        panic!()
    };
    assert_eq!(&src[value.span.range()], "a + b");
}

#[test]
fn comments_and_whitespace() {
    let f = parse_ok("// line\n/* block /* nested */ still comment */ fn f() {} // end");
    assert_eq!(file(&f), "(fn f [] () {})");
    assert_eq!(file(&parse_ok("")), "");
    assert_eq!(file(&parse_ok("  /* only a comment */ ")), "");
}

#[test]
fn ranges_and_fields_next_to_integers() {
    assert_eq!(body("for i in 0..n {}"), "{(for i 0 n {})}");
    assert_eq!(body("for i in 0..10 {}"), "{(for i 0 10 {})}");
    assert_eq!(body("t.0.x"), "{(tail (. (. t 0) x))}");
}

#[test]
fn broadphase_declarations() {
    let src = "
        broadphase vertex_face within 0.01;
        broadphase vertex_face, edge_edge within dhat;
        fn broadphase(within: f64) -> f64 { within }
    ";
    assert_eq!(
        file(&parse_ok(src)),
        "(broadphase (vertex_face) within 0.01)\n\
         (broadphase (vertex_face edge_edge) within dhat)\n\
         (fn broadphase [within: f64] f64 {(tail within)})"
    );
}
