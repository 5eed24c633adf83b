//! The header of an `.npy` file: a Python dict literal with the keys `descr`,
//! `fortran_order` and `shape` (`{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }`).

use super::NpyError;

/// What a header says.
#[derive(Debug, PartialEq)]
pub(super) struct Header {
    /// The dtype string (`<f8`).
    pub descr: String,
    pub fortran_order: bool,
    pub shape: Vec<usize>,
}

/// The shape in Python's tuple form: `()`, `(3,)`, `(2, 3)`.
pub fn shape_text(shape: &[usize]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// The header text for a dtype and shape (without padding).
pub(super) fn format(descr: &str, shape: &[usize]) -> String {
    format!(
        "{{'descr': '{descr}', 'fortran_order': False, 'shape': {}, }}",
        shape_text(shape)
    )
}

fn bad(m: impl Into<String>) -> NpyError {
    NpyError::Header(m.into())
}

/// A value of the dict.
enum Item {
    Str(String),
    Bool(bool),
    Tuple(Vec<usize>),
    /// A list or anything else this reader does not interpret (a structured dtype).
    Other(String),
}

/// A cursor over the header text.
struct Cursor<'a> {
    text: &'a str,
    at: usize,
}

impl Cursor<'_> {
    fn rest(&self) -> &str {
        &self.text[self.at..]
    }

    fn skip_space(&mut self) {
        let rest = self.rest();
        self.at += rest.len() - rest.trim_start().len();
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn eat(&mut self, c: char) -> bool {
        self.skip_space();
        if self.peek() == Some(c) {
            self.at += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn string(&mut self) -> Result<String, NpyError> {
        self.skip_space();
        let quote = self.peek().filter(|c| *c == '\'' || *c == '"');
        let quote = quote.ok_or_else(|| bad(format!("expected a quoted string at `{}`", excerpt(self.rest()))))?;
        let body = &self.rest()[1..];
        let end = body.find(quote).ok_or_else(|| bad("an unterminated string"))?;
        let s = body[..end].to_string();
        self.at += end + 2;
        Ok(s)
    }

    fn item(&mut self) -> Result<Item, NpyError> {
        self.skip_space();
        match self.peek() {
            Some('\'' | '"') => self.string().map(Item::Str),
            Some('(') => self.tuple().map(Item::Tuple),
            Some('[') => {
                // A list: a structured dtype. Kept as text for the error message.
                let start = self.at;
                let mut depth = 0i32;
                for (i, c) in self.rest().char_indices() {
                    match c {
                        '[' | '(' => depth += 1,
                        ']' | ')' => depth -= 1,
                        _ => {}
                    }
                    if depth == 0 {
                        self.at += i + 1;
                        return Ok(Item::Other(self.text[start..self.at].to_string()));
                    }
                }
                Err(bad("an unterminated list"))
            }
            _ => {
                let rest = self.rest();
                let word_len = rest
                    .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                    .unwrap_or(rest.len());
                let item = match &rest[..word_len] {
                    "True" => Ok(Item::Bool(true)),
                    "False" => Ok(Item::Bool(false)),
                    "" => Err(bad(format!("expected a value at `{}`", excerpt(rest)))),
                    w => Ok(Item::Other(w.to_string())),
                };
                self.at += word_len;
                item
            }
        }
    }

    /// `(a, b, …)`, trailing comma allowed; Python 2's `3L` is read as 3.
    fn tuple(&mut self) -> Result<Vec<usize>, NpyError> {
        self.eat('(');
        let mut dims = Vec::new();
        loop {
            if self.eat(')') {
                return Ok(dims);
            }
            self.skip_space();
            let rest = self.rest();
            let len = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
            let n = rest[..len]
                .parse::<usize>()
                .map_err(|_| bad(format!("bad shape entry at `{}`", excerpt(rest))))?;
            self.at += len;
            self.eat('L');
            dims.push(n);
            if !self.eat(',') {
                if self.eat(')') {
                    return Ok(dims);
                }
                return Err(bad(format!("bad shape at `{}`", excerpt(self.rest()))));
            }
        }
    }
}

/// The first characters of `s`, for a message.
fn excerpt(s: &str) -> String {
    s.chars().take(20).collect()
}

/// Parses the header text.
pub(super) fn parse(text: &str) -> Result<Header, NpyError> {
    let mut c = Cursor { text, at: 0 };
    if !c.eat('{') {
        return Err(bad("it is not a dictionary (`{...}`)"));
    }
    let (mut descr, mut fortran_order, mut shape) = (None, None, None);
    loop {
        if c.eat('}') {
            break;
        }
        let key = c.string()?;
        if !c.eat(':') {
            return Err(bad(format!("expected `:` after '{key}'")));
        }
        match (key.as_str(), c.item()?) {
            ("descr", Item::Str(s)) => descr = Some(s),
            ("descr", Item::Other(s)) => return Err(NpyError::Dtype(s)),
            ("fortran_order", Item::Bool(b)) => fortran_order = Some(b),
            ("shape", Item::Tuple(t)) => shape = Some(t),
            ("descr" | "fortran_order" | "shape", _) => {
                return Err(bad(format!("the value of '{key}' is malformed")));
            }
            _ => {}
        }
        if !c.eat(',') {
            if c.eat('}') {
                break;
            }
            return Err(bad(format!("expected `,` or `}}` at `{}`", excerpt(c.rest()))));
        }
    }
    if !c.rest().trim().is_empty() {
        return Err(bad("text after the dictionary"));
    }
    Ok(Header {
        descr: descr.ok_or_else(|| bad("no 'descr'"))?,
        fortran_order: fortran_order.ok_or_else(|| bad("no 'fortran_order'"))?,
        shape: shape.ok_or_else(|| bad("no 'shape'"))?,
    })
}
