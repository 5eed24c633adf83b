//! Tokens of the IR text form.

use super::IrParseError;

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// `[A-Za-z_][A-Za-z0-9_.]*`: keywords, op names, scalar kinds, symbolic extents.
    Ident(String),
    /// `%name`.
    Value(String),
    /// `@name` or `@"quoted name"` (unescaped).
    Func(String),
    /// A number, including `-` signs, exponents and `-inf`.
    Num(String),
    Arrow,
    Punct(char),
    Eof,
}

#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub line: u32,
    pub col: u32,
}

pub fn lex(text: &str) -> Result<Vec<Token>, IrParseError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line, mut col) = (0usize, 1u32, 1u32);
    let is_ident_start = |c: char| c.is_ascii_alphabetic() || c == '_';
    let is_ident_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
    while i < chars.len() {
        let c = chars[i];
        let (tline, tcol) = (line, col);
        let err = |message: String| IrParseError { line: tline, col: tcol, message };
        let start = i;
        let tok = if c == '\n' {
            i += 1;
            line += 1;
            col = 1;
            continue;
        } else if c.is_whitespace() {
            i += 1;
            col += 1;
            continue;
        } else if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        } else if c == '%' {
            i += 1;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            if i == start + 1 {
                return Err(err("expected a value name after `%`".into()));
            }
            Tok::Value(chars[start + 1..i].iter().collect())
        } else if c == '@' {
            i += 1;
            if chars.get(i) == Some(&'"') {
                i += 1;
                let mut name = String::new();
                loop {
                    match chars.get(i) {
                        None | Some('\n') => return Err(err("unterminated quoted function name".into())),
                        Some('"') => {
                            i += 1;
                            break;
                        }
                        Some('\\') => {
                            match chars.get(i + 1) {
                                Some('"') => name.push('"'),
                                Some('\\') => name.push('\\'),
                                Some('n') => name.push('\n'),
                                _ => return Err(err("unknown escape in a quoted function name".into())),
                            }
                            i += 2;
                        }
                        Some(&ch) => {
                            name.push(ch);
                            i += 1;
                        }
                    }
                }
                Tok::Func(name)
            } else {
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                if i == start + 1 {
                    return Err(err("expected a function name after `@`".into()));
                }
                Tok::Func(chars[start + 1..i].iter().collect())
            }
        } else if c == '-' && chars.get(i + 1) == Some(&'>') {
            i += 2;
            Tok::Arrow
        } else if c.is_ascii_digit() || (c == '-' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit() || *d == 'i')) {
            i += 1;
            if c == '-' && chars.get(i) == Some(&'i') {
                if chars[i..].iter().take(3).collect::<String>() != "inf" {
                    return Err(err("expected a number after `-`".into()));
                }
                i += 3;
            } else {
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
                if chars.get(i) == Some(&'.') && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()) {
                    i += 1;
                    while i < chars.len() && chars[i].is_ascii_digit() {
                        i += 1;
                    }
                }
                if matches!(chars.get(i), Some('e' | 'E')) {
                    let mut j = i + 1;
                    if matches!(chars.get(j), Some('+' | '-')) {
                        j += 1;
                    }
                    if chars.get(j).is_some_and(|d| d.is_ascii_digit()) {
                        i = j;
                        while i < chars.len() && chars[i].is_ascii_digit() {
                            i += 1;
                        }
                    }
                }
            }
            Tok::Num(chars[start..i].iter().collect())
        } else if is_ident_start(c) {
            while i < chars.len() && is_ident_char(chars[i]) {
                i += 1;
            }
            Tok::Ident(chars[start..i].iter().collect())
        } else if "(){}<>[],:=;?^".contains(c) {
            i += 1;
            Tok::Punct(c)
        } else {
            return Err(err(format!("unexpected character `{c}`")));
        };
        col += (i - start) as u32;
        out.push(Token { tok, line: tline, col: tcol });
    }
    out.push(Token { tok: Tok::Eof, line, col });
    Ok(out)
}
