//! Reads the IR text form written by [`super::print`] back into a [`Module`].
//!
//! Value names (`%0`, `%acc`) are local to a function and each is defined once;
//! a use must follow its definition in the text. Functions may be called before
//! they are defined (and recursively). A `const`'s literal and a `cast`'s target
//! kind are read from the op's result type. `//` starts a comment.

mod lexer;

use std::collections::HashMap;
use std::fmt;

use super::function::{AdMode, FuncRef, Function, Module, Region, ValueId};
use super::op::{BinaryOp, Literal, OpKind, Reduce, UnaryOp};
use super::types::{Dim, ScalarKind, Type};
use lexer::{Tok, Token};
use mad_grammar::span::Span;

/// A syntax error, at a 1-based line and column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IrParseError {
    pub line: u32,
    pub col: u32,
    pub message: String,
}

impl fmt::Display for IrParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

impl std::error::Error for IrParseError {}

/// Parses a whole module.
pub fn parse_module(text: &str) -> Result<Module, IrParseError> {
    let tokens = lexer::lex(text)?;
    let funcs = scan_functions(&tokens)?;
    let mut p = Parser {
        tokens,
        pos: 0,
        funcs,
        names: HashMap::new(),
    };
    let mut module = Module::new();
    while p.peek() != &Tok::Eof {
        let f = p.function()?;
        module.add_function(f);
    }
    // The text form names derived functions; their keys come back from the names.
    let keys: Vec<_> = module.functions.iter().map(|(h, f)| (h, crate::ir::derived::decode(&module, &f.name))).collect();
    for (h, key) in keys {
        if let Some(key) = key {
            module.derived.insert(key, h);
        }
    }
    Ok(module)
}

/// Function names in definition order (a function's handle is its position).
fn scan_functions(tokens: &[Token]) -> Result<HashMap<String, FuncRef>, IrParseError> {
    let mut funcs = HashMap::new();
    for w in tokens.windows(2) {
        if let (Tok::Ident(kw), Tok::Func(name)) = (&w[0].tok, &w[1].tok)
            && kw == "func"
        {
            let h = FuncRef::from_index(funcs.len());
            if funcs.insert(name.clone(), h).is_some() {
                return Err(IrParseError {
                    line: w[1].line,
                    col: w[1].col,
                    message: format!("function `{name}` is defined twice"),
                });
            }
        }
    }
    Ok(funcs)
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    funcs: HashMap<String, FuncRef>,
    /// Value names of the function being parsed.
    names: HashMap<String, ValueId>,
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Ident(s) => format!("`{s}`"),
        Tok::Value(s) => format!("`%{s}`"),
        Tok::Func(s) => format!("`@{s}`"),
        Tok::Num(s) => format!("`{s}`"),
        Tok::Arrow => "`->`".into(),
        Tok::Punct(c) => format!("`{c}`"),
        Tok::Eof => "the end of the text".into(),
    }
}

impl Parser {
    fn peek(&self) -> &Tok {
        self.peek_at(0)
    }

    fn peek_at(&self, k: usize) -> &Tok {
        &self.tokens[(self.pos + k).min(self.tokens.len() - 1)].tok
    }

    fn next(&mut self) -> Tok {
        // Past the end `pos` keeps counting (so stepping back with `pos -= 1`
        // returns to the token just read); reads stay on the final `Eof`.
        let t = self.peek().clone();
        self.pos += 1;
        t
    }

    fn error_here<T>(&self, message: impl Into<String>) -> Result<T, IrParseError> {
        let t = &self.tokens[self.pos.min(self.tokens.len() - 1)];
        Err(IrParseError {
            line: t.line,
            col: t.col,
            message: message.into(),
        })
    }

    fn expected<T>(&self, what: &str) -> Result<T, IrParseError> {
        self.error_here(format!("expected {what}, found {}", describe(self.peek())))
    }

    fn punct(&mut self, c: char) -> Result<(), IrParseError> {
        if self.peek() == &Tok::Punct(c) {
            self.next();
            Ok(())
        } else {
            self.expected(&format!("`{c}`"))
        }
    }

    fn eat_punct(&mut self, c: char) -> bool {
        if self.peek() == &Tok::Punct(c) {
            self.next();
            true
        } else {
            false
        }
    }

    fn keyword(&mut self, kw: &str) -> Result<(), IrParseError> {
        match self.peek() {
            Tok::Ident(s) if s == kw => {
                self.next();
                Ok(())
            }
            _ => self.expected(&format!("`{kw}`")),
        }
    }

    fn is_keyword(&self, kw: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if s == kw)
    }

    fn function(&mut self) -> Result<Function, IrParseError> {
        let mut ad_mode = None;
        if let Tok::Func(name) = self.peek().clone() {
            if name != "ad" {
                return self.error_here(format!("unknown attribute `@{name}`"));
            }
            self.next();
            self.punct('(')?;
            ad_mode = Some(match self.next() {
                Tok::Ident(m) if m == "tape" => AdMode::Tape,
                Tok::Ident(m) if m == "sct" => AdMode::Sct,
                _ => {
                    self.pos -= 1;
                    return self.expected("`tape` or `sct`");
                }
            });
            self.punct(')')?;
        }
        self.keyword("func")?;
        let name = match self.next() {
            Tok::Func(n) => n,
            _ => {
                self.pos -= 1;
                return self.expected("a function name `@name`");
            }
        };
        self.names.clear();
        let mut f = Function::new(name, &[], Type::unit());
        f.ad_mode = ad_mode;
        self.punct('(')?;
        if !self.eat_punct(')') {
            loop {
                let (n, at) = (self.value_name()?, self.pos - 1);
                self.punct(':')?;
                let v = f.new_value(self.ty()?);
                f.body.args.push(v);
                self.bind(n, v, at)?;
                if self.eat_punct(')') {
                    break;
                }
                self.punct(',')?;
            }
        }
        if self.next() != Tok::Arrow {
            self.pos -= 1;
            return self.expected("`->`");
        }
        f.ret = self.ty()?;
        self.punct('{')?;
        let ops = self.ops(&mut f)?;
        self.keyword("return")?;
        let yields = self.value_list_until('}')?;
        self.punct('}')?;
        f.body.ops = ops;
        f.body.yields = yields;
        Ok(f)
    }

    fn value_name(&mut self) -> Result<String, IrParseError> {
        match self.next() {
            Tok::Value(n) => Ok(n),
            _ => {
                self.pos -= 1;
                self.expected("a value name `%name`")
            }
        }
    }

    /// Binds a new name, defined by the token at `at`.
    fn bind(&mut self, name: String, v: ValueId, at: usize) -> Result<(), IrParseError> {
        if self.names.insert(name.clone(), v).is_some() {
            self.pos = at;
            return self.error_here(format!("value `%{name}` is defined twice"));
        }
        Ok(())
    }

    fn use_value(&mut self) -> Result<ValueId, IrParseError> {
        let n = self.value_name()?;
        match self.names.get(&n) {
            Some(&v) => Ok(v),
            None => {
                self.pos -= 1;
                self.error_here(format!("use of undefined value `%{n}`"))
            }
        }
    }

    /// Values separated by commas, up to (not including) `end`.
    fn value_list_until(&mut self, end: char) -> Result<Vec<ValueId>, IrParseError> {
        let mut vs = Vec::new();
        if self.peek() == &Tok::Punct(end) {
            return Ok(vs);
        }
        loop {
            vs.push(self.use_value()?);
            if !self.eat_punct(',') {
                return Ok(vs);
            }
        }
    }

    fn ty(&mut self) -> Result<Type, IrParseError> {
        match self.next() {
            Tok::Ident(s) if s == "tensor" => {
                self.punct('<')?;
                let elem = self.kind()?;
                self.punct(';')?;
                let mut shape = Vec::new();
                if !self.eat_punct('>') {
                    loop {
                        shape.push(match self.next() {
                            Tok::Punct('?') => Dim::Dyn,
                            Tok::Ident(s) => Dim::Sym(s),
                            Tok::Num(n) => match n.parse::<u64>() {
                                Ok(n) => Dim::Fixed(n),
                                Err(_) => {
                                    self.pos -= 1;
                                    return self.error_here(format!("bad extent `{n}`"));
                                }
                            },
                            _ => {
                                self.pos -= 1;
                                return self.expected("an extent (a number, a name or `?`)");
                            }
                        });
                        if self.eat_punct('>') {
                            break;
                        }
                        self.punct(',')?;
                    }
                }
                Ok(Type::Tensor { elem, shape })
            }
            Tok::Ident(_) => {
                self.pos -= 1;
                Ok(Type::Scalar(self.kind()?))
            }
            Tok::Punct('(') => {
                let mut items = Vec::new();
                if !self.eat_punct(')') {
                    loop {
                        items.push(self.ty()?);
                        if self.eat_punct(')') {
                            break;
                        }
                        self.punct(',')?;
                    }
                }
                Ok(Type::Tuple(items))
            }
            _ => {
                self.pos -= 1;
                self.expected("a type")
            }
        }
    }

    fn kind(&mut self) -> Result<ScalarKind, IrParseError> {
        let k = match self.peek() {
            Tok::Ident(s) => match s.as_str() {
                "f64" => ScalarKind::F64,
                "f32" => ScalarKind::F32,
                "i64" => ScalarKind::I64,
                "bool" => ScalarKind::Bool,
                _ => return self.expected("a scalar kind (f64, f32, i64, bool)"),
            },
            _ => return self.expected("a scalar kind (f64, f32, i64, bool)"),
        };
        self.next();
        Ok(k)
    }

    /// Ops up to a `return` or `yield`.
    fn ops(&mut self, f: &mut Function) -> Result<Vec<super::function::OpId>, IrParseError> {
        let mut ops = Vec::new();
        while !self.is_keyword("return") && !self.is_keyword("yield") {
            ops.push(self.op(f)?);
        }
        Ok(ops)
    }

    fn bracket_index(&mut self) -> Result<u64, IrParseError> {
        self.punct('[')?;
        let n = match self.next() {
            Tok::Num(n) => n.parse::<u64>().ok(),
            _ => None,
        };
        let Some(n) = n else {
            self.pos -= 1;
            return self.expected("an index");
        };
        self.punct(']')?;
        Ok(n)
    }

    /// `[a, b, …]`: axis numbers.
    fn bracket_list(&mut self) -> Result<Vec<u32>, IrParseError> {
        self.punct('[')?;
        let mut out = Vec::new();
        while !self.eat_punct(']') {
            if !out.is_empty() {
                self.punct(',')?;
            }
            let n = match self.next() {
                Tok::Num(n) => n.parse::<u32>().ok(),
                _ => None,
            };
            let Some(n) = n else {
                self.pos -= 1;
                return self.expected("an axis");
            };
            out.push(n);
        }
        Ok(out)
    }

    fn op(&mut self, f: &mut Function) -> Result<super::function::OpId, IrParseError> {
        let mut result_names = Vec::new();
        if matches!(self.peek(), Tok::Value(_)) {
            loop {
                result_names.push((self.value_name()?, self.pos - 1));
                if !self.eat_punct(',') {
                    break;
                }
            }
            self.punct('=')?;
        }
        let name_pos = self.pos;
        let name = match self.next() {
            Tok::Ident(n) => n,
            _ => {
                self.pos -= 1;
                return self.expected("an op name");
            }
        };
        enum Pending {
            Kind(OpKind),
            Const(Tok, usize),
            Cast,
        }
        let mut operands = Vec::new();
        let pending = match name.as_str() {
            "const" => {
                let pos = self.pos;
                Pending::Const(self.next(), pos)
            }
            "cast" => {
                operands = self.value_list_until(':')?;
                Pending::Cast
            }
            "call" => {
                let callee = match self.next() {
                    Tok::Func(n) => n,
                    _ => {
                        self.pos -= 1;
                        return self.expected("a callee `@name`");
                    }
                };
                let Some(&h) = self.funcs.get(&callee) else {
                    self.pos -= 1;
                    return self.error_here(format!("call of undefined function `{callee}`"));
                };
                self.punct('(')?;
                operands = self.value_list_until(')')?;
                self.punct(')')?;
                Pending::Kind(OpKind::Call(h))
            }
            "print.str" => match self.next() {
                Tok::Func(s) => Pending::Kind(OpKind::PrintStr(s)),
                _ => {
                    self.pos -= 1;
                    return self.expected("a quoted string `@\"text\"`");
                }
            },
            other => {
                let kind = match other {
                    "select" => OpKind::Select,
                    "tensor.pack" => OpKind::Pack,
                    "tensor.full" => OpKind::Full,
                    "tensor.extract" => OpKind::Extract(self.bracket_index()?),
                    "tensor.index" => OpKind::Index,
                    "tensor.insert" => OpKind::Insert,
                    "tensor.dim" => OpKind::DimOf(self.small_index()?),
                    "tensor.matmul" => OpKind::MatMul,
                    "tensor.transpose" => OpKind::Transpose,
                    "tensor.slice" => OpKind::Slice,
                    "tensor.concat" => OpKind::Concat,
                    "tensor.reshape" => OpKind::Reshape,
                    "tensor.broadcast" => OpKind::Broadcast,
                    "tensor.permute" => OpKind::Permute(self.bracket_list()?),
                    "tensor.sum_to" => OpKind::ReduceTo(Reduce::Sum),
                    "tensor.max_to" => OpKind::ReduceTo(Reduce::Max),
                    "tensor.min_to" => OpKind::ReduceTo(Reduce::Min),
                    "tensor.sum" => OpKind::Sum,
                    "tuple" => OpKind::Tuple,
                    "tuple.get" => OpKind::TupleGet(self.small_index()?),
                    "print" => OpKind::Print,
                    "scf.if" => OpKind::If,
                    "scf.for" => OpKind::For,
                    "scf.while" => OpKind::While,
                    "tape.push" => OpKind::TapePush,
                    "tape.pop" => OpKind::TapePop,
                    n => {
                        if let Some(u) = UnaryOp::from_name(n) {
                            OpKind::Unary(u)
                        } else if let Some(b) = BinaryOp::from_name(n) {
                            OpKind::Binary(b)
                        } else {
                            self.pos = name_pos;
                            return self.error_here(format!("unknown op `{n}`"));
                        }
                    }
                };
                operands = self.value_list_until(':')?;
                Pending::Kind(kind)
            }
        };
        self.punct(':')?;
        let types_pos = self.pos;
        let result_types = if result_names.len() == 1 {
            vec![self.ty()?]
        } else {
            match self.ty()? {
                Type::Tuple(items) if items.len() == result_names.len() => items,
                _ => {
                    self.pos = types_pos;
                    return self.error_here(format!(
                        "expected a list of {} result types `(T, ...)`",
                        result_names.len()
                    ));
                }
            }
        };
        let kind = match pending {
            Pending::Kind(k) => k,
            Pending::Cast => match result_types.first().and_then(Type::scalar_kind) {
                Some(k) if result_types.len() == 1 => OpKind::Cast(k),
                _ => {
                    self.pos = types_pos;
                    return self.error_here("`cast` needs one scalar or tensor result type");
                }
            },
            Pending::Const(tok, pos) => match result_types.as_slice() {
                [Type::Scalar(k)] => match literal(&tok, *k) {
                    Some(lit) => OpKind::Const(lit),
                    None => {
                        self.pos = pos;
                        return self.error_here(format!(
                            "{} is not a {} literal",
                            describe(&tok),
                            k.name()
                        ));
                    }
                },
                _ => {
                    self.pos = types_pos;
                    return self.error_here("`const` needs one scalar result type");
                }
            },
        };
        let after_types = self.pos;
        let id = f.new_op(kind, operands, result_types, Span::default());
        let results = f.ops[id].results.clone();
        for ((n, at), v) in result_names.into_iter().zip(results) {
            self.bind(n, v, at)?;
        }
        self.pos = after_types;
        if self.peek() == &Tok::Punct('{') {
            let mut regions = Vec::new();
            loop {
                regions.push(self.region(f)?);
                // `} else {` / `} do {` continue with another region.
                if matches!(self.peek(), Tok::Ident(_)) && self.peek_at(1) == &Tok::Punct('{') {
                    self.next();
                } else {
                    break;
                }
            }
            f.ops[id].regions = regions;
        }
        Ok(id)
    }

    fn small_index(&mut self) -> Result<u32, IrParseError> {
        let n = self.bracket_index()?;
        match u32::try_from(n) {
            Ok(n) => Ok(n),
            Err(_) => {
                self.pos -= 2;
                self.error_here(format!("index {n} is too large"))
            }
        }
    }

    fn region(&mut self, f: &mut Function) -> Result<Region, IrParseError> {
        self.punct('{')?;
        let mut args = Vec::new();
        if self.eat_punct('^') {
            self.punct('(')?;
            if !self.eat_punct(')') {
                loop {
                    let (n, at) = (self.value_name()?, self.pos - 1);
                    self.punct(':')?;
                    let v = f.new_value(self.ty()?);
                    self.bind(n, v, at)?;
                    args.push(v);
                    if self.eat_punct(')') {
                        break;
                    }
                    self.punct(',')?;
                }
            }
            self.punct(':')?;
        }
        let ops = self.ops(f)?;
        self.keyword("yield")?;
        let yields = self.value_list_until('}')?;
        self.punct('}')?;
        Ok(Region { args, ops, yields })
    }
}

fn literal(tok: &Tok, kind: ScalarKind) -> Option<Literal> {
    let text = match tok {
        Tok::Num(s) | Tok::Ident(s) => s.as_str(),
        _ => return None,
    };
    let float = |s: &str| -> Option<f64> {
        match s {
            "inf" => Some(f64::INFINITY),
            "-inf" => Some(f64::NEG_INFINITY),
            "NaN" => Some(f64::NAN),
            _ if matches!(tok, Tok::Num(_)) => s.parse().ok(),
            _ => None,
        }
    };
    match kind {
        ScalarKind::F64 => float(text).map(Literal::F64),
        ScalarKind::F32 => match text {
            "inf" | "-inf" | "NaN" => float(text).map(|x| Literal::F32(x as f32)),
            _ if matches!(tok, Tok::Num(_)) => text.parse::<f32>().ok().map(Literal::F32),
            _ => None,
        },
        ScalarKind::I64 => match tok {
            Tok::Num(_) => text.parse::<i64>().ok().map(Literal::I64),
            _ => None,
        },
        ScalarKind::Bool => match text {
            "true" => Some(Literal::Bool(true)),
            "false" => Some(Literal::Bool(false)),
            _ => None,
        },
    }
}
