//! The lexer on its own: token kinds, spans, numbers next to dots, comments.

use mad_grammar::ast::FloatLit;
use mad_grammar::lexer::{Token, lex};

/// A float token whose value is exact in both types.
fn fl(v: f64) -> Token<'static> {
    Token::Float(FloatLit { value: v, single: v as f32 })
}

fn toks(src: &str) -> Vec<Token<'_>> {
    let (tokens, diags) = lex(src, 0);
    assert!(diags.is_empty(), "{src}: {diags:?}");
    tokens.into_iter().map(|t| t.1).collect()
}

#[test]
fn numbers_next_to_dots() {
    use Token::*;
    assert_eq!(toks("0..n"), [Int(0), DotDot, Ident("n")]);
    assert_eq!(toks("t.0"), [Ident("t"), Dot, Int(0)]);
    assert_eq!(toks("1.5..2"), [fl(1.5), DotDot, Int(2)]);
    assert_eq!(
        toks("1e3 2.5E-1 1_000"),
        [fl(1000.0), fl(0.25), Int(1000)]
    );
    // Each type's value is rounded once from the text.
    assert_eq!(
        toks("1.00000005960464477540"),
        [Float(FloatLit { value: 1.0000000596046448, single: 1.0000001 })]
    );
    assert_eq!(toks("x.0.y"), [Ident("x"), Dot, Int(0), Dot, Ident("y")]);
}

#[test]
fn keywords_identifiers_and_wildcard() {
    use Token::*;
    assert_eq!(
        toks("fn fnx _ _a objective"),
        [Fn, Ident("fnx"), Underscore, Ident("_a"), Objective]
    );
    assert_eq!(
        toks("a::b->c"),
        [Ident("a"), ColonColon, Ident("b"), Arrow, Ident("c")]
    );
    assert_eq!(
        toks("^= ^ != ! <= < .. ."),
        [CaretEq, Caret, Ne, Bang, Le, Lt, DotDot, Dot]
    );
}

#[test]
fn comments_nest_and_strings_unescape() {
    use Token::*;
    assert_eq!(
        toks("a /* x /* y */ z */ b // c\nd"),
        [Ident("a"), Ident("b"), Ident("d")]
    );
    assert_eq!(
        toks(r#""a\"b\\c\nd\te""#),
        [Str("a\"b\\c\nd\te".to_string())]
    );
}

#[test]
fn spans_are_byte_ranges() {
    let (tokens, _) = lex("let  é = 1", 0);
    let spans: Vec<_> = tokens.iter().map(|t| (t.0, t.2)).collect();
    // `é` is an error (two bytes) and yields no token.
    assert_eq!(spans, [(0, 3), (8, 9), (10, 11)]);
}

#[test]
fn errors_leave_placeholders() {
    let (tokens, diags) = lex("1e 99999999999999999999 \"a\\q\"", 0);
    let codes: Vec<_> = diags.iter().map(|d| d.code.clone().unwrap()).collect();
    assert_eq!(codes, ["E0004", "E0003", "E0005"]);
    assert_eq!(tokens.len(), 3);
    assert!(tokens.iter().all(|t| t.1 != Token::Number));
}
