//! The diagnostics of the grammar crate (codes E0001–E0049), built in one
//! place so that every code has one wording.
//!
//! | code  | meaning |
//! |-------|---------|
//! | E0001 | unexpected character |
//! | E0002 | unterminated string literal or block comment |
//! | E0003 | number literal too large (`i64` overflow, infinite `f64`) |
//! | E0004 | malformed number literal (`1e`, `1.`, `1_`) |
//! | E0005 | unknown escape sequence in a string |
//! | E0010 | unexpected token |
//! | E0011 | unexpected end of file |
//! | E0012 | chained comparison operators |
//! | E0013 | nesting too deep |

use std::ops::Range;

use codespan_reporting::diagnostic::{Diagnostic, Label};

use crate::lexer::LexError;

use crate::nesting::MAX_DEPTH;

/// Clamps `range` into `src` on character boundaries, so that rendering a
/// diagnostic can never slice a character in two.
pub fn clamp(src: &str, range: Range<usize>) -> Range<usize> {
    let fix = |mut i: usize| {
        i = i.min(src.len());
        while !src.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let start = fix(range.start);
    let end = fix(range.end).max(start);
    start..end
}

fn error(code: &str, message: impl std::fmt::Display) -> Diagnostic<usize> {
    Diagnostic::error().with_code(code).with_message(message)
}

fn primary(
    file_id: usize,
    src: &str,
    range: Range<usize>,
    msg: impl std::fmt::Display,
) -> Label<usize> {
    Label::primary(file_id, clamp(src, range)).with_message(msg)
}

/// The diagnostic for one lexical error at `range`.
pub fn lex_error(
    err: &LexError,
    range: Range<usize>,
    src: &str,
    file_id: usize,
) -> Diagnostic<usize> {
    match err {
        LexError::UnexpectedChar => {
            let text = &src[clamp(src, range.clone())];
            let message = match text.chars().count() {
                1 => format!(
                    "unexpected character {:?}",
                    text.chars().next().unwrap_or(' ')
                ),
                _ => "unexpected characters".to_string(),
            };
            error("E0001", message).with_labels(vec![primary(
                file_id,
                src,
                range,
                "no token starts here",
            )])
        }
        LexError::UnterminatedString => error("E0002", "unterminated string literal")
            .with_labels(vec![primary(
                file_id,
                src,
                range.start..range.start + 1,
                "this string is never closed",
            )])
            .with_notes(vec!["help: add a closing `\"`".to_string()]),
        LexError::UnterminatedComment => error("E0002", "unterminated block comment")
            .with_labels(vec![primary(
                file_id,
                src,
                range.start..range.start + 2,
                "this comment is never closed",
            )])
            .with_notes(vec![
                "note: block comments nest: each `/*` needs its own `*/`".to_string(),
            ]),
        LexError::IntTooLarge => error("E0003", "integer literal is too large")
            .with_labels(vec![primary(
                file_id,
                src,
                range,
                "this does not fit in an `i64`",
            )])
            .with_notes(vec![format!(
                "note: the largest integer literal is {}",
                i64::MAX
            )]),
        LexError::FloatTooLarge => error("E0003", "float literal is too large")
            .with_labels(vec![primary(
                file_id,
                src,
                range,
                "this is infinite as an `f64`",
            )])
            .with_notes(vec![format!(
                "note: the largest finite `f64` is about {:e}",
                f64::MAX
            )]),
        LexError::MalformedNumber(why) => error("E0004", "malformed number literal")
            .with_labels(vec![primary(file_id, src, range, *why)])
            .with_notes(vec![
                "help: numbers look like `42`, `1_000`, `0.5`, `1e-3` or `2.5E+4`".to_string(),
            ]),
        LexError::BadEscape { offset, len } => {
            let at = range.start + offset;
            error("E0005", "unknown escape sequence")
                .with_labels(vec![primary(file_id, src, at..at + len, "unknown escape")])
                .with_notes(vec![
                    "note: the escapes are `\\\"`, `\\\\`, `\\n` and `\\t`".to_string(),
                ])
        }
    }
}

/// How a grammar terminal name (as lalrpop reports it) reads in a message.
fn terminal_name(t: &str) -> String {
    match t {
        "!" => "end of file".to_string(),
        "Ident" => "identifier".to_string(),
        "Int" => "integer".to_string(),
        "Float" => "float".to_string(),
        "Str" => "string".to_string(),
        quoted => format!("`{}`", quoted.trim_matches('"').replace("\\\"", "\"")),
    }
}

/// Terminals that can start an expression: listed as "expression" when all are expected.
const EXPR_START: [&str; 12] = [
    "Ident",
    "Int",
    "Float",
    "Str",
    "\"true\"",
    "\"false\"",
    "\"(\"",
    "\"[\"",
    "\"{\"",
    "\"-\"",
    "\"!\"",
    "\"if\"",
];

/// Terminals that can continue an expression as a binary operator.
const BINARY_OPS: [&str; 14] = [
    "\"+\"", "\"-\"", "\"*\"", "\"/\"", "\"%\"", "\"^\"", "\"==\"", "\"!=\"", "\"<\"", "\"<=\"",
    "\">\"", "\">=\"", "\"&&\"", "\"||\"",
];

/// Turns lalrpop's list of expected terminals into a readable phrase.
pub fn expected_phrase(expected: &[String]) -> String {
    let has = |t: &str| expected.iter().any(|e| e == t);
    let mut parts: Vec<String> = Vec::new();
    let mut skip: Vec<&str> = Vec::new();
    let all_expr = EXPR_START.iter().all(|t| has(t));
    if all_expr {
        parts.push("expression".to_string());
        skip.extend(EXPR_START);
    }
    if BINARY_OPS.iter().all(|t| has(t)) {
        parts.push("operator".to_string());
        skip.extend(BINARY_OPS);
    }
    for e in expected {
        if !skip.contains(&e.as_str()) {
            let name = terminal_name(e);
            if !parts.contains(&name) {
                parts.push(name);
            }
        }
    }
    match parts.len() {
        0 => "nothing can follow here".to_string(),
        1 => format!("expected {}", parts[0]),
        _ => format!("expected one of {}", parts.join(", ")),
    }
}

/// E0010: a token the grammar does not allow here.
pub fn unexpected_token(
    found: &str,
    range: Range<usize>,
    expected: &[String],
    src: &str,
    file_id: usize,
) -> Diagnostic<usize> {
    error("E0010", format!("unexpected {found}")).with_labels(vec![primary(
        file_id,
        src,
        range,
        expected_phrase(expected),
    )])
}

/// E0010 for a field access whose number is not a tuple index (`t.1e5`, `t.99999999999`).
pub fn bad_tuple_index(range: Range<usize>, src: &str, file_id: usize) -> Diagnostic<usize> {
    let text = &src[clamp(src, range.clone())];
    error("E0010", format!("unexpected number `{text}` after `.`"))
        .with_labels(vec![primary(
            file_id,
            src,
            range,
            "expected a field name or a tuple index",
        )])
        .with_notes(vec![
            "note: tuple indices are small integers: `t.0`, `t.1`".to_string(),
        ])
}

/// E0011: the file ended in the middle of something.
pub fn unexpected_eof(
    at: usize,
    expected: &[String],
    src: &str,
    file_id: usize,
) -> Diagnostic<usize> {
    error("E0011", "unexpected end of file").with_labels(vec![primary(
        file_id,
        src,
        at..at,
        expected_phrase(expected),
    )])
}

/// E0012: `a < b < c`.
pub fn chained_comparison(op: Range<usize>, src: &str, file_id: usize) -> Diagnostic<usize> {
    error("E0012", "comparison operators cannot be chained")
        .with_labels(vec![primary(file_id, src, op, "second comparison here")])
        .with_notes(vec!["help: use `a < b && b < c`".to_string()])
}

/// E0013: brackets, operators or blocks nested past [`MAX_DEPTH`].
pub fn too_deep(range: Range<usize>, src: &str, file_id: usize) -> Diagnostic<usize> {
    error("E0013", "nesting is too deep")
        .with_labels(vec![primary(
            file_id,
            src,
            range,
            format!("this nests more than {MAX_DEPTH} levels deep"),
        )])
        .with_notes(vec![
            "note: brackets, blocks, `else if` branches and each operator of a chain \
             (`a + b + c` is two levels) count"
                .to_string(),
            "help: split it into smaller parts with `let` or functions".to_string(),
        ])
}
