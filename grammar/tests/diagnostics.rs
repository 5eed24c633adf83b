//! Every diagnostic code, with a snapshot of its full rendered output, and
//! files with several errors.

use crate::common;
use common::{codes, render};

/// Parses `src`, checks that exactly `code` is reported, and renders it.
fn only(src: &str, code: &str) -> String {
    let (_, diags) = mad_grammar::parse(src, 0);
    let found: Vec<_> = diags
        .iter()
        .map(|d| d.code.clone().unwrap_or_default())
        .collect();
    assert_eq!(found, [code], "{}", render(src, &diags));
    render(src, &diags)
}

#[test]
fn e0001_unexpected_character() {
    insta::assert_snapshot!(only("fn f() {\n    let x = 1 # 2;\n}\n", "E0001"));
}

#[test]
fn e0001_reports_a_run_once() {
    assert_eq!(codes("fn f() { x = 1 é€$ + 2; }"), ["E0001"]);
    assert_eq!(codes("fn f() { x = 1 # + # 2; }"), ["E0001", "E0001"]);
}

/// An unterminated string at the top level is reported once: the parser does not report
/// the token the lexer already did.
#[test]
fn e0002_at_the_top_level_is_reported_once() {
    assert_eq!(codes("fn main() { print(1); }\n\"dangling\n"), ["E0002"]);
}

#[test]
fn e0002_unterminated_string() {
    insta::assert_snapshot!(only("fn main() {\n    print(\"hello);\n}\n", "E0002"));
}

#[test]
fn e0002_unterminated_block_comment() {
    insta::assert_snapshot!(only(
        "fn f() {}\n/* outer /* inner */\nfn g() {}\n",
        "E0002"
    ));
}

#[test]
fn e0003_integer_too_large() {
    insta::assert_snapshot!(only("const BIG: i64 = 9223372036854775808;\n", "E0003"));
}

#[test]
fn e0003_float_too_large() {
    assert_eq!(codes("const X: f64 = 1e400;"), ["E0003"]);
}

#[test]
fn e0004_malformed_number() {
    insta::assert_snapshot!(only("const EPS: f64 = 1e;\n", "E0004"));
}

#[test]
fn e0004_forms() {
    for src in ["1e", "1e+", "2.5E-", "1.", "1_", "1_000_", "1_.5", "1.5_e3"] {
        assert_eq!(codes(&format!("const X: f64 = {src};")), ["E0004"], "{src}");
    }
    for ok in [
        "1_000",
        "1__0",
        "0.5",
        "1e3",
        "1E+3",
        "2.5e-3",
        "1_0.0_1e1_0",
    ] {
        assert!(codes(&format!("const X: f64 = {ok};")).is_empty(), "{ok}");
    }
}

#[test]
fn e0005_unknown_escape() {
    insta::assert_snapshot!(only("fn main() { print(\"a\\qb\"); }\n", "E0005"));
}

#[test]
fn e0010_unexpected_token() {
    insta::assert_snapshot!(only(
        "fn f(x: f64) -> f64 {\n    let y = x + * 2.0;\n    y\n}\n",
        "E0010"
    ));
}

#[test]
fn e0010_module_file_needs_a_string_path() {
    assert_eq!(codes("mod a = b;\nfn f() {}\n"), ["E0010"]);
    assert_eq!(codes("mod a = \"a.mad\"\nfn f() {}\n"), ["E0010"]);
    assert_eq!(codes("mod a\n"), ["E0011"]);
}

#[test]
fn e0011_unexpected_end_of_file() {
    insta::assert_snapshot!(only("fn f(x: f64) -> f64 {\n    x + 1.0\n", "E0011"));
}

#[test]
fn e0012_chained_comparison() {
    insta::assert_snapshot!(only(
        "fn f(a: f64, b: f64, c: f64) -> bool {\n    a < b < c\n}\n",
        "E0012"
    ));
}

#[test]
fn e0013_nesting_too_deep() {
    // 300 parentheses, 20 to a line.
    let open = format!("{}\n", "(".repeat(20)).repeat(15);
    let src = format!("fn f() -> f64 {{\n{open}1{}\n}}\n", ")".repeat(300));
    insta::assert_snapshot!(only(&src, "E0013"));
}

#[test]
fn several_errors_in_one_file() {
    let src = "\
use std::mat::{frob2 inv};
dof x vertex -> vec3;
fn f(a: f64) -> f64 {
    let b = a * ;
    let c = (a + b;
    c = c +;
    a < b < c
}
fn g() { return 1 }
energy e(f: face) { 1.0 }
param k: f64 = ;
";
    let (file, diags) = mad_grammar::parse(src, 0);
    let codes: Vec<_> = diags
        .iter()
        .map(|d| d.code.clone().unwrap_or_default())
        .collect();
    assert_eq!(
        codes,
        [
            "E0010", "E0010", "E0010", "E0010", "E0010", "E0012", "E0010", "E0010"
        ]
    );
    // The items that could be read are still there.
    let names: Vec<String> = file.items.iter().map(common::item).collect();
    assert!(names.iter().any(|n| n.starts_with("(fn f ")), "{names:?}");
    assert!(
        names.iter().any(|n| n.starts_with("(energy e ")),
        "{names:?}"
    );
    insta::assert_snapshot!(render(src, &diags));
}

#[test]
fn diagnostics_come_in_source_order_with_file_ids() {
    let src = "fn f() { x = # ; }\nfn g() { y = ; }\n";
    let (_, diags) = mad_grammar::parse(src, 7);
    assert_eq!(diags.len(), 2);
    let starts: Vec<_> = diags.iter().map(|d| d.labels[0].range.start).collect();
    assert!(starts[0] < starts[1]);
    assert!(
        diags
            .iter()
            .all(|d| d.labels.iter().all(|l| l.file_id == 7))
    );
}
