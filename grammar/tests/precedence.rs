//! Operator precedence and associativity, checked on the tree's shape.

use crate::common;
use common::{codes, expr};

#[test]
fn power_binds_tighter_than_unary_minus() {
    assert_eq!(expr("-x^2"), "(neg (^ x 2))");
    assert_eq!(expr("-2^2"), "(neg (^ 2 2))");
    assert_eq!(expr("!a^b"), "(not (^ a b))");
}

#[test]
fn power_is_right_associative() {
    assert_eq!(expr("2^3^2"), "(^ 2 (^ 3 2))");
    assert_eq!(expr("a^b^c^d"), "(^ a (^ b (^ c d)))");
}

#[test]
fn power_right_operand_may_be_prefixed() {
    assert_eq!(expr("x^-1"), "(^ x (neg 1))");
    assert_eq!(expr("x^-y^2"), "(^ x (neg (^ y 2)))");
    assert_eq!(expr("x^-1 * 3"), "(* (^ x (neg 1)) 3)");
}

#[test]
fn power_binds_looser_than_postfix() {
    assert_eq!(expr("f(x)^2"), "(^ (call f [x]) 2)");
    assert_eq!(expr("v.x^2"), "(^ (. v x) 2)");
    assert_eq!(expr("a[i]^b[j]"), "(^ (index a [i]) (index b [j]))");
}

#[test]
fn arithmetic_levels_and_left_associativity() {
    assert_eq!(expr("a + b * c"), "(+ a (* b c))");
    assert_eq!(expr("a * b + c"), "(+ (* a b) c)");
    assert_eq!(expr("a - b - c"), "(- (- a b) c)");
    assert_eq!(expr("a / b / c"), "(/ (/ a b) c)");
    assert_eq!(expr("a % b * c"), "(* (% a b) c)");
    assert_eq!(expr("a - -b"), "(- a (neg b))");
    assert_eq!(expr("-a * b"), "(* (neg a) b)");
}

#[test]
fn cast_sits_between_product_and_prefix() {
    assert_eq!(expr("-x as i64"), "(as (neg x) i64)");
    assert_eq!(expr("a * b as f64"), "(* a (as b f64))");
    assert_eq!(expr("x as f32 as f64"), "(as (as x f32) f64)");
    assert_eq!(expr("n as f64 + 1.0"), "(+ (as n f64) 1.0)");
    assert_eq!(expr("x as [f64; 3]"), "(as x [f64; 3])");
}

#[test]
fn logic_and_comparison_levels() {
    assert_eq!(expr("a || b && c"), "(|| a (&& b c))");
    assert_eq!(expr("a && b || c && d"), "(|| (&& a b) (&& c d))");
    assert_eq!(expr("a < b && b < c"), "(&& (< a b) (< b c))");
    assert_eq!(expr("a + 1 == b * 2"), "(== (+ a 1) (* b 2))");
    assert_eq!(expr("!a == b"), "(== (not a) b)");
    assert_eq!(expr("a || b || c"), "(|| (|| a b) c)");
    for op in ["==", "!=", "<", "<=", ">", ">="] {
        assert_eq!(expr(&format!("a {op} b")), format!("({op} a b)"));
    }
}

#[test]
fn parenthesized_comparisons_may_be_compared() {
    assert_eq!(expr("(a < b) == (c < d)"), "(== (< a b) (< c d))");
    assert_eq!(expr("(a == b) == c"), "(== (== a b) c)");
}

#[test]
fn chained_comparisons_are_an_error() {
    assert_eq!(codes("const C: bool = a < b < c;"), ["E0012"]);
    assert_eq!(codes("const C: bool = a == b != c;"), ["E0012"]);
    assert_eq!(codes("const C: bool = a < b < c < d;"), ["E0012", "E0012"]);
}

#[test]
fn postfix_chains() {
    assert_eq!(expr("grad(f)(x)"), "(call (call grad [f]) [x])");
    assert_eq!(expr("m[i, j]"), "(index m [i j])");
    assert_eq!(expr("v[a..b + 1]"), "(slice v a (+ b 1))");
    assert_eq!(expr("v[..n][1..]"), "(slice (slice v _ n) 1 _)");
    assert_eq!(expr("m[..]"), "(slice m _ _)");
    assert_eq!(expr("x[e.v0].y"), "(. (index x [(. e v0)]) y)");
    assert_eq!(expr("t.0"), "(. t 0)");
    assert_eq!(expr("t.0.1"), "(. (. t 0) 1)");
    assert_eq!(expr("t.1.x"), "(. (. t 1) x)");
    assert_eq!(expr("mat2::cols(a, b)"), "(call mat2::cols [a b])");
    assert_eq!(expr("std::mat::det(m)"), "(call std::mat::det [m])");
    assert_eq!(expr("f()"), "(call f [])");
    assert_eq!(expr("f(a, b,)"), "(call f [a b])");
}

#[test]
fn primaries() {
    assert_eq!(expr("()"), "(tuple )");
    assert_eq!(expr("(a)"), "a");
    assert_eq!(expr("(a,)"), "(tuple a)");
    assert_eq!(expr("(a, b)"), "(tuple a b)");
    assert_eq!(expr("(a, b,)"), "(tuple a b)");
    assert_eq!(expr("[1, 2, 3]"), "(array 1 2 3)");
    assert_eq!(expr("[]"), "(array )");
    assert_eq!(expr("[0.0; 3]"), "(repeat 0.0 3)");
    assert_eq!(expr("true && false"), "(&& true false)");
    assert_eq!(expr(r#""a\"b\\c\n\t""#), r#""a\"b\\c\n\t""#);
    assert_eq!(expr("1_000"), "1000");
    assert_eq!(expr("2.5E+4"), "25000.0");
    assert_eq!(expr("1e-3"), "0.001");
    assert_eq!(expr("9223372036854775807"), "9223372036854775807");
}

#[test]
fn if_and_blocks_are_expressions() {
    assert_eq!(
        expr("if a { 1 } else { 2 }"),
        "(if a {(tail 1)} {(tail 2)})"
    );
    assert_eq!(
        expr("if a { 1 } else if b { 2 } else { 3 }"),
        "(if a {(tail 1)} (if b {(tail 2)} {(tail 3)}))"
    );
    assert_eq!(
        expr("1 + if a { 1 } else { 2 }"),
        "(+ 1 (if a {(tail 1)} {(tail 2)}))"
    );
    assert_eq!(expr("{ let y = 2; y * y }"), "{(let y 2) (tail (* y y))}");
    assert_eq!(
        expr("if x < 1 { 1 } else { 2 }"),
        "(if (< x 1) {(tail 1)} {(tail 2)})"
    );
}
