//! The lexer: turns source text into [`Token`]s with byte spans.
//!
//! Built on `logos`; hand-written callbacks handle the parts a regular
//! expression cannot: nestable block comments, string escapes and numbers
//! (whose shape depends on what follows them, so that `0..n` is
//! `0` `..` `n` and `t.0.1` can still be read as two tuple fields).
//!
//! Lexical errors never stop lexing: [`lex`] records a diagnostic and, where
//! that keeps the parser from reporting a second error for the same mistake,
//! puts a placeholder token in the stream (`0` for a bad number, `""` for a
//! bad string).

use codespan_reporting::diagnostic::Diagnostic;
use logos::{Lexer, Logos, Skip};

use crate::ast::FloatLit;
use crate::diag;

/// What went wrong while lexing one token.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum LexError {
    /// A character that starts no token (E0001).
    #[default]
    UnexpectedChar,
    /// `"...` without its closing quote (E0002).
    UnterminatedString,
    /// `/* ...` without its closing `*/` (E0002).
    UnterminatedComment,
    /// An integer literal above `i64::MAX` (E0003).
    IntTooLarge,
    /// A float literal whose value is infinite (E0003).
    FloatTooLarge,
    /// A number with a missing part, e.g. `1e`, `1.` or `1_` (E0004).
    MalformedNumber(&'static str),
    /// An unknown `\x` escape in a string, at byte `offset` into the token (E0005).
    BadEscape { offset: usize, len: usize },
}

/// A token of the mad language.
#[derive(Logos, Clone, Debug, PartialEq)]
#[logos(error = LexError)]
#[logos(skip r"[ \t\r\n\f]+")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
#[logos(skip("/\\*", block_comment))]
pub enum Token<'s> {
    // Keywords.
    #[token("fn")]
    Fn,
    #[token("let")]
    Let,
    #[token("mut")]
    Mut,
    #[token("if")]
    If,
    #[token("else")]
    Else,
    #[token("for")]
    For,
    #[token("in")]
    In,
    #[token("while")]
    While,
    #[token("break")]
    Break,
    #[token("continue")]
    Continue,
    #[token("return")]
    Return,
    #[token("true")]
    True,
    #[token("false")]
    False,
    #[token("use")]
    Use,
    #[token("mod")]
    Mod,
    #[token("const")]
    Const,
    #[token("as")]
    As,
    #[token("dof")]
    Dof,
    #[token("data")]
    Data,
    #[token("param")]
    Param,
    #[token("energy")]
    Energy,
    #[token("residual")]
    Residual,
    #[token("objective")]
    Objective,

    /// An identifier (never a keyword, never `_` alone).
    #[regex("[A-Za-z_][A-Za-z0-9_]*")]
    Ident(&'s str),
    /// `_`, the wildcard pattern.
    #[token("_", priority = 3)]
    Underscore,
    /// Matched by the number pattern; its callback always turns it into
    /// [`Token::Int`] or [`Token::Float`], so the lexer never yields it.
    #[regex("[0-9][0-9_]*", lex_number)]
    Number,
    /// An integer literal that fits in an `i64`.
    Int(i64),
    /// A floating-point literal.
    Float(FloatLit),
    /// A string literal with its escapes resolved.
    #[token("\"", lex_string)]
    Str(String),

    // Punctuation.
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("^")]
    Caret,
    #[token("==")]
    EqEq,
    #[token("!=")]
    Ne,
    #[token("<")]
    Lt,
    #[token("<=")]
    Le,
    #[token(">")]
    Gt,
    #[token(">=")]
    Ge,
    #[token("&&")]
    AndAnd,
    #[token("||")]
    OrOr,
    #[token("!")]
    Bang,
    #[token("=")]
    Eq,
    #[token("+=")]
    PlusEq,
    #[token("-=")]
    MinusEq,
    #[token("*=")]
    StarEq,
    #[token("/=")]
    SlashEq,
    #[token("%=")]
    PercentEq,
    #[token("^=")]
    CaretEq,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token(",")]
    Comma,
    #[token(";")]
    Semi,
    #[token(":")]
    Colon,
    #[token("::")]
    ColonColon,
    #[token(".")]
    Dot,
    #[token("..")]
    DotDot,
    #[token("->")]
    Arrow,
    #[token("@")]
    At,
}

impl Token<'_> {
    /// What the token is, for diagnostics: "identifier `x`", "token `;`".
    pub fn describe(&self) -> String {
        match self {
            Token::Ident(s) => format!("identifier `{s}`"),
            Token::Int(v) => format!("integer literal `{v}`"),
            Token::Float(v) => format!("float literal `{:?}`", v.value),
            Token::Str(_) => "string literal".to_string(),
            Token::Number => "number".to_string(),
            Token::Fn
            | Token::Let
            | Token::Mut
            | Token::If
            | Token::Else
            | Token::For
            | Token::In
            | Token::While
            | Token::Break
            | Token::Continue
            | Token::Return
            | Token::True
            | Token::False
            | Token::Use
            | Token::Mod
            | Token::Const
            | Token::As
            | Token::Dof
            | Token::Data
            | Token::Param
            | Token::Energy
            | Token::Residual
            | Token::Objective => {
                format!("keyword `{}`", self.text().unwrap_or("?"))
            }
            other => format!("token `{}`", other.text().unwrap_or("?")),
        }
    }

    /// The fixed spelling of keywords and punctuation.
    pub fn text(&self) -> Option<&'static str> {
        Some(match self {
            Token::Fn => "fn",
            Token::Let => "let",
            Token::Mut => "mut",
            Token::If => "if",
            Token::Else => "else",
            Token::For => "for",
            Token::In => "in",
            Token::While => "while",
            Token::Break => "break",
            Token::Continue => "continue",
            Token::Return => "return",
            Token::True => "true",
            Token::False => "false",
            Token::Use => "use",
            Token::Mod => "mod",
            Token::Const => "const",
            Token::As => "as",
            Token::Dof => "dof",
            Token::Data => "data",
            Token::Param => "param",
            Token::Energy => "energy",
            Token::Residual => "residual",
            Token::Objective => "objective",
            Token::Underscore => "_",
            Token::Plus => "+",
            Token::Minus => "-",
            Token::Star => "*",
            Token::Slash => "/",
            Token::Percent => "%",
            Token::Caret => "^",
            Token::EqEq => "==",
            Token::Ne => "!=",
            Token::Lt => "<",
            Token::Le => "<=",
            Token::Gt => ">",
            Token::Ge => ">=",
            Token::AndAnd => "&&",
            Token::OrOr => "||",
            Token::Bang => "!",
            Token::Eq => "=",
            Token::PlusEq => "+=",
            Token::MinusEq => "-=",
            Token::StarEq => "*=",
            Token::SlashEq => "/=",
            Token::PercentEq => "%=",
            Token::CaretEq => "^=",
            Token::LParen => "(",
            Token::RParen => ")",
            Token::LBracket => "[",
            Token::RBracket => "]",
            Token::LBrace => "{",
            Token::RBrace => "}",
            Token::Comma => ",",
            Token::Semi => ";",
            Token::Colon => ":",
            Token::ColonColon => "::",
            Token::Dot => ".",
            Token::DotDot => "..",
            Token::Arrow => "->",
            Token::At => "@",
            Token::Ident(_) | Token::Number | Token::Int(_) | Token::Float(_) | Token::Str(_) => {
                return None;
            }
        })
    }
}

/// A token with its byte range `start..end`.
pub type SpannedToken<'s> = (usize, Token<'s>, usize);

/// Lexes a whole file. Never fails: lexical errors become diagnostics.
pub fn lex(src: &str, file_id: usize) -> (Vec<SpannedToken<'_>>, Vec<Diagnostic<usize>>) {
    let mut tokens = Vec::new();
    let mut diags: Vec<Diagnostic<usize>> = Vec::new();
    // The end of the last run of unexpected characters, to report a run once.
    let mut bad_run: Option<(usize, usize)> = None;
    let mut lexer = Token::lexer(src);
    while let Some(result) = lexer.next() {
        let span = lexer.span();
        if !matches!(result, Err(LexError::UnexpectedChar)) {
            flush_bad_run(&mut bad_run, &mut diags, src, file_id);
        }
        match result {
            Ok(tok) => tokens.push((span.start, tok, span.end)),
            Err(LexError::UnexpectedChar) => match &mut bad_run {
                Some((_, end)) if *end == span.start => *end = span.end,
                _ => bad_run = Some((span.start, span.end)),
            },
            Err(err) => {
                diags.push(diag::lex_error(&err, span.clone(), src, file_id));
                let placeholder = match err {
                    LexError::UnterminatedString | LexError::BadEscape { .. } => {
                        Some(Token::Str(String::new()))
                    }
                    LexError::IntTooLarge => Some(Token::Int(0)),
                    LexError::FloatTooLarge | LexError::MalformedNumber(_) => {
                        Some(Token::Float(FloatLit { value: 0.0, single: 0.0 }))
                    }
                    LexError::UnterminatedComment | LexError::UnexpectedChar => None,
                };
                if let Some(tok) = placeholder {
                    tokens.push((span.start, tok, span.end));
                }
            }
        }
    }
    flush_bad_run(&mut bad_run, &mut diags, src, file_id);
    (tokens, diags)
}

fn flush_bad_run(
    run: &mut Option<(usize, usize)>,
    diags: &mut Vec<Diagnostic<usize>>,
    src: &str,
    file_id: usize,
) {
    if let Some((start, end)) = run.take() {
        diags.push(diag::lex_error(
            &LexError::UnexpectedChar,
            start..end,
            src,
            file_id,
        ));
    }
}

/// Skips a block comment whose `/*` was just read; comments nest.
fn block_comment<'s>(lex: &mut Lexer<'s, Token<'s>>) -> Result<Skip, LexError> {
    let rest = lex.remainder().as_bytes();
    let mut depth = 1usize;
    let mut i = 0;
    while i < rest.len() {
        match (rest[i], rest.get(i + 1)) {
            (b'/', Some(b'*')) => {
                depth += 1;
                i += 2;
            }
            (b'*', Some(b'/')) => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    lex.bump(i);
                    return Ok(Skip);
                }
            }
            _ => i += 1,
        }
    }
    lex.bump(rest.len());
    Err(LexError::UnterminatedComment)
}

/// Reads a string literal whose opening `"` was just read.
fn lex_string<'s>(lex: &mut Lexer<'s, Token<'s>>) -> Result<String, LexError> {
    let rest = lex.remainder();
    let mut out = String::new();
    let mut bad_escape = None;
    let mut chars = rest.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => {
                lex.bump(i + 1);
                return match bad_escape {
                    Some(err) => Err(err),
                    None => Ok(out),
                };
            }
            '\\' => match chars.next() {
                Some((_, '"')) => out.push('"'),
                Some((_, '\\')) => out.push('\\'),
                Some((_, 'n')) => out.push('\n'),
                Some((_, 't')) => out.push('\t'),
                Some((_, other)) => {
                    // `+ 1` for the opening quote, which is part of the token.
                    bad_escape.get_or_insert(LexError::BadEscape {
                        offset: i + 1,
                        len: 1 + other.len_utf8(),
                    });
                }
                None => break,
            },
            c => out.push(c),
        }
    }
    lex.bump(rest.len());
    Err(LexError::UnterminatedString)
}

/// Reads a number whose leading digits (and underscores) were just matched,
/// extending it with a fraction and an exponent when they follow.
fn lex_number<'s>(lex: &mut Lexer<'s, Token<'s>>) -> Result<Token<'s>, LexError> {
    let rest = lex.remainder().as_bytes();
    let mut i = 0;
    let mut is_float = false;
    let is_digit = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_digit());
    let digits_end = |mut j: usize| {
        while j < rest.len() && (rest[j].is_ascii_digit() || rest[j] == b'_') {
            j += 1;
        }
        j
    };
    if rest.first() == Some(&b'.') {
        if is_digit(rest.get(1)) {
            is_float = true;
            i = digits_end(1);
        } else {
            let next = rest.get(1).copied();
            let continues = next.is_some_and(|b| b == b'.' || b == b'_' || b.is_ascii_alphabetic());
            if !continues {
                // `1.` followed by nothing that could make it a range or a field.
                lex.bump(1);
                return Err(LexError::MalformedNumber(
                    "a digit must follow the decimal point",
                ));
            }
        }
    }
    if matches!(rest.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(rest.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if is_digit(rest.get(j)) {
            is_float = true;
            i = digits_end(j);
        } else {
            lex.bump(j);
            return Err(LexError::MalformedNumber("the exponent has no digits"));
        }
    }
    lex.bump(i);
    let text = lex.slice();
    if text.contains("_.")
        || text.contains("._")
        || text.ends_with('_')
        || has_bad_exp_underscore(text)
    {
        return Err(LexError::MalformedNumber(
            "`_` may only stand between digits",
        ));
    }
    let clean: String = text.chars().filter(|&c| c != '_').collect();
    if is_float {
        match clean.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(Token::Float(FloatLit {
                value: v,
                // Rounded once from the text, not through the f64.
                single: clean.parse::<f32>().unwrap_or(v as f32),
            })),
            Ok(_) => Err(LexError::FloatTooLarge),
            Err(_) => Err(LexError::MalformedNumber("this is not a valid number")),
        }
    } else {
        match clean.parse::<i64>() {
            Ok(v) => Ok(Token::Int(v)),
            Err(_) => Err(LexError::IntTooLarge),
        }
    }
}

/// `1_e5`: an underscore right before the exponent marker.
fn has_bad_exp_underscore(text: &str) -> bool {
    text.contains("_e") || text.contains("_E")
}
