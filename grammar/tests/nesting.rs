//! Deep nesting: never a stack overflow, never a tree deeper than the limit,
//! and an E0013 diagnostic instead.

use crate::common;
use common::{codes, depth};
use mad_grammar::nesting::MAX_DEPTH;

const N: usize = 100_000;
/// Chains need far fewer links than brackets to pass the limit.
const CHAIN: usize = 10_000;

/// Parses `src` on a thread with a small stack (so that unbounded recursion
/// anywhere, including in `Drop`, would fail loudly), checks the tree depth,
/// and returns the diagnostic codes.
fn parse_deep(src: String) -> Vec<String> {
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            let (file, diags) = mad_grammar::parse(&src, 0);
            let d = depth(&file);
            assert!(d <= MAX_DEPTH as usize + 1, "tree depth {d}");
            drop(file);
            diags
                .iter()
                .map(|d| d.code.clone().unwrap_or_default())
                .collect::<Vec<_>>()
        })
        .expect("thread starts")
        .join()
        .expect("parsing does not panic or overflow")
}

fn in_fn(expr: &str) -> String {
    format!("fn ok() {{ 1 }}\nfn f() {{ let x = {expr}; }}\nfn after() {{}}")
}

fn assert_too_deep(src: String) {
    let codes = parse_deep(src);
    assert!(codes.contains(&"E0013".to_string()), "codes: {codes:?}");
    assert_eq!(
        codes.iter().filter(|c| *c == "E0013").count(),
        1,
        "codes: {codes:?}"
    );
}

#[test]
fn deep_brackets() {
    for (open, close) in [("(", ")"), ("[", "]"), ("{", "}")] {
        assert_too_deep(in_fn(&format!("{}1{}", open.repeat(N), close.repeat(N))));
        // Unclosed, too.
        assert_too_deep(in_fn(&open.repeat(N)));
    }
}

#[test]
fn deep_prefix_operators() {
    assert_too_deep(in_fn(&format!("{}x", "-".repeat(N))));
    assert_too_deep(in_fn(&format!("{}x", "!".repeat(N))));
    assert_too_deep(in_fn(&format!("{}x", "-!".repeat(N / 2))));
}

#[test]
fn long_operator_chains() {
    assert_too_deep(in_fn(&vec!["a"; CHAIN].join(" + ")));
    assert_too_deep(in_fn(&vec!["a"; CHAIN].join(" ^ ")));
    assert_too_deep(in_fn(&vec!["a"; CHAIN].join(" || ")));
    assert_too_deep(in_fn(&format!("x{}", " as f64".repeat(CHAIN))));
    assert_too_deep(in_fn(&format!("x{}", "^-x".repeat(CHAIN))));
}

#[test]
fn long_postfix_chains() {
    assert_too_deep(in_fn(&format!("f{}", "()".repeat(CHAIN))));
    assert_too_deep(in_fn(&format!("a{}", "[0]".repeat(CHAIN))));
    assert_too_deep(in_fn(&format!("a{}", ".b".repeat(CHAIN))));
    assert_too_deep(in_fn(&format!("a{}", ".0".repeat(CHAIN))));
}

#[test]
fn long_else_if_ladder() {
    let ladder = format!("{}{{ 0 }}", "if c { 1 } else ".repeat(N / 10));
    assert_too_deep(in_fn(&ladder));
}

#[test]
fn deep_items_types_and_patterns() {
    assert_too_deep(format!("{}{}", "mod m { ".repeat(N), "}".repeat(N)));
    assert_too_deep(format!(
        "const C: {}f64{} = 1;",
        "[".repeat(N),
        "; 1]".repeat(N)
    ));
    assert_too_deep(format!(
        "fn f() {{ let {}a{} = 1; }}",
        "(".repeat(N),
        ")".repeat(N)
    ));
}

#[test]
fn items_before_the_deep_one_are_kept() {
    let src = in_fn(&format!("{}1{}", "(".repeat(N), ")".repeat(N)));
    let (file, diags) = mad_grammar::parse(&src, 0);
    assert_eq!(diags.len(), 1);
    assert_eq!(file.items.len(), 1, "only `ok` survives");
}

#[test]
fn nesting_within_the_limit_is_fine() {
    // Realistic depths parse without complaint.
    let n = 100;
    assert!(codes(&in_fn(&format!("{}1{}", "(".repeat(n), ")".repeat(n)))).is_empty());
    assert!(codes(&in_fn(&vec!["a"; n].join(" + "))).is_empty());
    assert!(codes(&in_fn(&format!("{}x", "-".repeat(n)))).is_empty());
    assert!(codes(&format!("{}{}", "mod m { ".repeat(n), "}".repeat(n))).is_empty());
    // Many statements and items in a row are not nesting.
    let many_stmts = format!("fn f() {{ {} }}", "if a { b(); } x += 1; ".repeat(N / 10));
    assert!(codes(&many_stmts).is_empty());
    let many_items = "fn f() { 1 + 2 }\n".repeat(N / 10);
    assert!(codes(&many_items).is_empty());
}
