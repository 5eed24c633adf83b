//! The grammar's semantic actions: build AST nodes, track their depth (see
//! [`crate::nesting`]) and record diagnostics found while parsing.
//!
//! Nodes travel through the parser wrapped with their depth ([`E`], [`B`],
//! [`S`], [`T`], [`P`]); the wrappers are unwrapped when a node is stored in
//! its parent.

use codespan_reporting::diagnostic::Diagnostic;
use lalrpop_util::{ErrorRecovery, ParseError};

use crate::ast::*;
use crate::diag;
use crate::lexer::Token;
use crate::nesting::MAX_DEPTH;
use crate::span::Span;

/// The lexer error type seen by the parser; the lexer adapter never yields one.
pub type NoLexError = ();

/// A parse error as lalrpop reports it.
pub type Recovery<'s> = ErrorRecovery<usize, Token<'s>, NoLexError>;

/// An expression with its depth. `cmp` is set on an unparenthesized
/// comparison, to report `a < b < c`.
pub struct E {
    pub e: Expr,
    pub d: u32,
    pub cmp: bool,
}

/// A block with its depth.
pub struct B {
    pub b: Block,
    pub d: u32,
}

/// A statement with its depth.
pub struct S {
    pub s: Stmt,
    pub d: u32,
}

/// A type with its depth.
pub struct T {
    pub t: TypeExpr,
    pub d: u32,
}

/// A pattern with its depth.
pub struct P {
    pub p: Pattern,
    pub d: u32,
}

/// One entry of a block body as parsed.
pub enum BlockEntry {
    Stmt(S),
    /// An `if` or block expression in statement position without `;`: the
    /// block's value when it comes last, else an expression statement.
    BlockLike(E),
    /// A lone `;`.
    Empty,
}

fn sp(l: usize, r: usize) -> Span {
    Span::new(l, r)
}

fn max_d<'a>(ds: impl IntoIterator<Item = &'a u32>) -> u32 {
    ds.into_iter().copied().max().unwrap_or(0)
}

/// Parser state shared by all actions.
pub struct Ctx<'s> {
    pub src: &'s str,
    pub file_id: usize,
    pub diags: Vec<Diagnostic<usize>>,
    /// Complete top-level items, in order (kept even if the parse gives up).
    pub items: Vec<Item>,
    /// The region of the last "nesting too deep" report, to report a chain once.
    deep_reported: Option<(usize, usize)>,
    /// Where the last syntax error started, to report one error per statement.
    last_error_start: Option<usize>,
    /// Sorted start offsets of tokens that begin or end a statement or item
    /// (see [`is_boundary`]).
    boundaries: Vec<usize>,
    /// Sorted start offsets of lexical errors: a syntax error they cause in
    /// the same statement is not reported again.
    lex_errors: Vec<usize>,
}

/// Tokens after which a new syntax error is worth reporting again.
pub fn is_boundary(tok: &Token<'_>) -> bool {
    matches!(
        tok,
        Token::Semi
            | Token::LBrace
            | Token::RBrace
            | Token::Fn
            | Token::Mod
            | Token::Use
            | Token::Const
            | Token::Dof
            | Token::Data
            | Token::Param
            | Token::Energy
            | Token::Residual
            | Token::Objective
            | Token::At
            | Token::Let
            | Token::For
            | Token::While
            | Token::Return
    )
}

impl<'s> Ctx<'s> {
    /// `boundaries`: sorted start offsets of the tokens for which [`is_boundary`] holds;
    /// `lex_errors`: sorted start offsets of lexical errors.
    pub fn new(
        src: &'s str,
        file_id: usize,
        boundaries: Vec<usize>,
        lex_errors: Vec<usize>,
    ) -> Self {
        Ctx {
            src,
            file_id,
            diags: Vec::new(),
            items: Vec::new(),
            deep_reported: None,
            last_error_start: None,
            boundaries,
            lex_errors,
        }
    }

    /// Records E0013 for `span` unless it overlaps the region last reported.
    fn report_deep(&mut self, span: Span) {
        let (s, e) = (span.start as usize, span.end as usize);
        if let Some((rs, re)) = self.deep_reported
            && s <= re
            && rs <= e
        {
            self.deep_reported = Some((rs.min(s), re.max(e)));
            return;
        }
        self.deep_reported = Some((s, e));
        self.diags
            .push(diag::too_deep(s..e, self.src, self.file_id));
    }

    /// Turns a parse error into a diagnostic.
    pub fn recover(&mut self, rec: Recovery<'s>) {
        self.parse_error(rec.error);
    }

    /// Turns a parse error into a diagnostic, unless it follows an earlier
    /// error in the same statement (nothing between them ends a statement or
    /// opens or closes a block), where it is most likely a consequence.
    pub fn parse_error(&mut self, err: ParseError<usize, Token<'s>, NoLexError>) {
        let start = match &err {
            ParseError::UnrecognizedToken {
                token: (l, _, _), ..
            }
            | ParseError::ExtraToken { token: (l, _, _) } => *l,
            ParseError::UnrecognizedEof { .. } => self.src.len(),
            ParseError::InvalidToken { location } => *location,
            ParseError::User { .. } => return,
        };
        // The latest error (syntax or lexical) before this one.
        let lex_before = self.lex_errors.partition_point(|&e| e < start);
        let lex_prev = lex_before.checked_sub(1).map(|i| self.lex_errors[i]);
        // The token a lexical error already reported (the placeholder of an unterminated
        // string, say): its consequence, not a second error.
        if self.lex_errors.get(lex_before) == Some(&start) {
            self.last_error_start = Some(start);
            return;
        }
        let prev = self.last_error_start.max(lex_prev);
        // A boundary token counts even when it was the previous error's token.
        let follows_error = prev.is_some_and(|prev| {
            let first_boundary = self.boundaries.partition_point(|&b| b < prev);
            prev < start
                && self
                    .boundaries
                    .get(first_boundary)
                    .is_none_or(|&b| b >= start)
        });
        self.last_error_start = Some(start);
        if follows_error {
            return;
        }
        let d = match err {
            ParseError::UnrecognizedToken {
                token: (l, tok, r),
                expected,
            } => diag::unexpected_token(&tok.describe(), l..r, &expected, self.src, self.file_id),
            ParseError::UnrecognizedEof { expected, .. } => {
                // Point just after the last thing written, not at trailing blank lines.
                let at = self.src.trim_end().len();
                diag::unexpected_eof(at, &expected, self.src, self.file_id)
            }
            ParseError::ExtraToken { token: (l, tok, r) } => {
                diag::unexpected_token(&tok.describe(), l..r, &[], self.src, self.file_id)
            }
            ParseError::InvalidToken { location } => {
                diag::unexpected_token("token", location..location, &[], self.src, self.file_id)
            }
            ParseError::User { .. } => return,
        };
        self.diags.push(d);
    }

    // ----- expressions -----

    /// Wraps `kind` at depth `d`, or an error node if that is too deep.
    pub fn expr(&mut self, kind: ExprKind, l: usize, r: usize, d: u32) -> E {
        let span = sp(l, r);
        if d > MAX_DEPTH {
            self.report_deep(span);
            return E {
                e: Expr {
                    kind: ExprKind::Error,
                    span,
                },
                d: 1,
                cmp: false,
            };
        }
        E {
            e: Expr { kind, span },
            d,
            cmp: false,
        }
    }

    pub fn leaf(&mut self, kind: ExprKind, l: usize, r: usize) -> E {
        self.expr(kind, l, r, 1)
    }

    pub fn path(&mut self, segs: Vec<Ident>, l: usize, r: usize) -> E {
        self.leaf(ExprKind::Path(segs), l, r)
    }

    pub fn binary(&mut self, op: BinOp, a: E, b: E, l: usize, r: usize) -> E {
        let d = 1 + a.d.max(b.d);
        self.expr(
            ExprKind::Binary {
                op,
                lhs: Box::new(a.e),
                rhs: Box::new(b.e),
            },
            l,
            r,
            d,
        )
    }

    /// A comparison; reports E0012 when `a` is itself a bare comparison.
    #[allow(clippy::too_many_arguments)]
    pub fn compare(
        &mut self,
        op: BinOp,
        ol: usize,
        or: usize,
        a: E,
        b: E,
        l: usize,
        r: usize,
    ) -> E {
        if a.cmp {
            self.diags
                .push(diag::chained_comparison(ol..or, self.src, self.file_id));
        }
        let mut e = self.binary(op, a, b, l, r);
        e.cmp = true;
        e
    }

    pub fn unary(&mut self, op: UnOp, a: E, l: usize, r: usize) -> E {
        let d = 1 + a.d;
        self.expr(
            ExprKind::Unary {
                op,
                operand: Box::new(a.e),
            },
            l,
            r,
            d,
        )
    }

    pub fn cast(&mut self, a: E, ty: T, l: usize, r: usize) -> E {
        let d = 1 + a.d.max(ty.d);
        self.expr(
            ExprKind::Cast {
                expr: Box::new(a.e),
                ty: ty.t,
            },
            l,
            r,
            d,
        )
    }

    /// `(e)`: the same expression, no longer a bare comparison.
    pub fn paren(&mut self, mut a: E) -> E {
        a.cmp = false;
        a
    }

    pub fn call(&mut self, callee: E, args: Vec<E>, l: usize, r: usize) -> E {
        let d = 1 + callee.d.max(max_d(args.iter().map(|a| &a.d)));
        let args = args.into_iter().map(|a| a.e).collect();
        self.expr(
            ExprKind::Call {
                callee: Box::new(callee.e),
                args,
            },
            l,
            r,
            d,
        )
    }

    pub fn slice(&mut self, base: E, lo: Option<E>, hi: Option<E>, l: usize, r: usize) -> E {
        let d = 1 + base.d.max(max_d(lo.iter().chain(hi.iter()).map(|a| &a.d)));
        let kind = ExprKind::Slice {
            base: Box::new(base.e),
            lo: lo.map(|a| Box::new(a.e)),
            hi: hi.map(|a| Box::new(a.e)),
        };
        self.expr(kind, l, r, d)
    }

    pub fn index(&mut self, base: E, ix: Vec<E>, l: usize, r: usize) -> E {
        let d = 1 + base.d.max(max_d(ix.iter().map(|a| &a.d)));
        let indices = ix.into_iter().map(|a| a.e).collect();
        self.expr(
            ExprKind::Index {
                base: Box::new(base.e),
                indices,
            },
            l,
            r,
            d,
        )
    }

    pub fn field(&mut self, base: E, name: Ident, l: usize, r: usize) -> E {
        let d = 1 + base.d;
        self.expr(
            ExprKind::Field {
                base: Box::new(base.e),
                name,
            },
            l,
            r,
            d,
        )
    }

    /// `base.N` where `N` was lexed as the integer `index` at `il..r`.
    pub fn tuple_field(&mut self, base: E, index: i64, il: usize, l: usize, r: usize) -> E {
        let Ok(index) = u32::try_from(index) else {
            self.bad_tuple_index(il, r);
            return self.leaf(ExprKind::Error, l, r);
        };
        let d = 1 + base.d;
        let kind = ExprKind::TupleField {
            base: Box::new(base.e),
            index,
            index_span: sp(il, r),
        };
        self.expr(kind, l, r, d)
    }

    /// `base.N.M` where `N.M` was lexed as one float literal at `fl..r`.
    pub fn float_fields(&mut self, base: E, fl: usize, l: usize, r: usize) -> E {
        let text = self.src.get(fl..r).unwrap_or("");
        let parts = text.split_once('.').and_then(|(a, b)| {
            let ok = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
            if ok(a) && ok(b) {
                Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?, a.len()))
            } else {
                None
            }
        });
        let Some((first, second, first_len)) = parts else {
            self.bad_tuple_index(fl, r);
            return self.leaf(ExprKind::Error, l, r);
        };
        let mid = fl + first_len;
        let inner = self.expr(
            ExprKind::TupleField {
                base: Box::new(base.e),
                index: first,
                index_span: sp(fl, mid),
            },
            l,
            mid,
            base.d + 1,
        );
        let d = inner.d + 1;
        let kind = ExprKind::TupleField {
            base: Box::new(inner.e),
            index: second,
            index_span: sp(mid + 1, r),
        };
        self.expr(kind, l, r, d)
    }

    fn bad_tuple_index(&mut self, l: usize, r: usize) {
        self.diags
            .push(diag::bad_tuple_index(l..r, self.src, self.file_id));
    }

    pub fn tuple(&mut self, elems: Vec<E>, l: usize, r: usize) -> E {
        let d = 1 + max_d(elems.iter().map(|a| &a.d));
        self.expr(
            ExprKind::Tuple(elems.into_iter().map(|a| a.e).collect()),
            l,
            r,
            d,
        )
    }

    pub fn array(&mut self, elems: Vec<E>, l: usize, r: usize) -> E {
        let d = 1 + max_d(elems.iter().map(|a| &a.d));
        self.expr(
            ExprKind::Array(elems.into_iter().map(|a| a.e).collect()),
            l,
            r,
            d,
        )
    }

    pub fn repeat(&mut self, value: E, count: E, l: usize, r: usize) -> E {
        let d = 1 + value.d.max(count.d);
        let kind = ExprKind::ArrayRepeat {
            value: Box::new(value.e),
            count: Box::new(count.e),
        };
        self.expr(kind, l, r, d)
    }

    pub fn block_expr(&mut self, b: B) -> E {
        let span = b.b.span;
        self.expr(
            ExprKind::Block(b.b),
            span.start as usize,
            span.end as usize,
            b.d + 1,
        )
    }

    pub fn if_expr(&mut self, cond: E, then: B, else_: Option<E>, l: usize, r: usize) -> E {
        let d = 1 + cond.d.max(then.d).max(else_.as_ref().map_or(0, |e| e.d));
        let kind = ExprKind::If {
            cond: Box::new(cond.e),
            then: then.b,
            else_: else_.map(|e| Box::new(e.e)),
        };
        self.expr(kind, l, r, d)
    }

    // ----- statements and blocks -----

    pub fn stmt(&mut self, kind: StmtKind, l: usize, r: usize, d: u32) -> BlockEntry {
        let span = sp(l, r);
        if d > MAX_DEPTH {
            self.report_deep(span);
            return BlockEntry::Stmt(S {
                s: Stmt {
                    kind: StmtKind::Error,
                    span,
                },
                d: 1,
            });
        }
        BlockEntry::Stmt(S {
            s: Stmt { kind, span },
            d,
        })
    }

    pub fn error_stmt(&mut self, rec: Recovery<'s>, l: usize, r: usize) -> BlockEntry {
        self.recover(rec);
        self.stmt(StmtKind::Error, l, r, 1)
    }

    #[allow(clippy::too_many_arguments)]
    pub fn let_stmt(
        &mut self,
        mutable: bool,
        pat: P,
        ty: Option<T>,
        value: E,
        l: usize,
        r: usize,
    ) -> BlockEntry {
        let d = 1 + pat.d.max(ty.as_ref().map_or(0, |t| t.d)).max(value.d);
        let kind = StmtKind::Let {
            pat: pat.p,
            mutable,
            ty: ty.map(|t| t.t),
            value: value.e,
        };
        self.stmt(kind, l, r, d)
    }

    pub fn assign(
        &mut self,
        place: E,
        op: Option<BinOp>,
        value: E,
        l: usize,
        r: usize,
    ) -> BlockEntry {
        let d = 1 + place.d.max(value.d);
        self.stmt(
            StmtKind::Assign {
                place: place.e,
                op,
                value: value.e,
            },
            l,
            r,
            d,
        )
    }

    pub fn expr_stmt(&mut self, e: E, l: usize, r: usize) -> BlockEntry {
        let d = 1 + e.d;
        self.stmt(StmtKind::Expr(e.e), l, r, d)
    }

    #[allow(clippy::too_many_arguments)]
    pub fn for_stmt(
        &mut self,
        var: Ident,
        lo: E,
        hi: E,
        body: B,
        l: usize,
        r: usize,
    ) -> BlockEntry {
        let d = 1 + lo.d.max(hi.d).max(body.d);
        self.stmt(
            StmtKind::For {
                var,
                lo: lo.e,
                hi: hi.e,
                body: body.b,
            },
            l,
            r,
            d,
        )
    }

    pub fn while_stmt(&mut self, cond: E, body: B, l: usize, r: usize) -> BlockEntry {
        let d = 1 + cond.d.max(body.d);
        self.stmt(
            StmtKind::While {
                cond: cond.e,
                body: body.b,
            },
            l,
            r,
            d,
        )
    }

    pub fn return_stmt(&mut self, value: Option<E>, l: usize, r: usize) -> BlockEntry {
        let d = 1 + value.as_ref().map_or(0, |e| e.d);
        self.stmt(StmtKind::Return(value.map(|e| e.e)), l, r, d)
    }

    /// `{ entries tail }`; a trailing `if`/block statement becomes the value.
    pub fn block(&mut self, entries: Vec<BlockEntry>, tail: Option<E>, l: usize, r: usize) -> B {
        let span = sp(l, r);
        let mut stmts = Vec::with_capacity(entries.len());
        let mut tail = tail;
        let mut d = tail.as_ref().map_or(0, |t| t.d);
        let last = entries.len().checked_sub(1);
        for (i, entry) in entries.into_iter().enumerate() {
            match entry {
                BlockEntry::Stmt(s) => {
                    d = d.max(s.d);
                    stmts.push(s.s);
                }
                BlockEntry::BlockLike(e) if Some(i) == last && tail.is_none() => {
                    d = d.max(e.d);
                    tail = Some(e);
                }
                BlockEntry::BlockLike(e) => {
                    d = d.max(e.d + 1);
                    let span = e.e.span;
                    stmts.push(Stmt {
                        kind: StmtKind::Expr(e.e),
                        span,
                    });
                }
                BlockEntry::Empty => {}
            }
        }
        let d = d + 1;
        if d > MAX_DEPTH {
            self.report_deep(span);
            let error = Stmt {
                kind: StmtKind::Error,
                span,
            };
            return B {
                b: Block {
                    stmts: vec![error],
                    tail: None,
                    span,
                },
                d: 2,
            };
        }
        B {
            b: Block {
                stmts,
                tail: tail.map(|t| Box::new(t.e)),
                span,
            },
            d,
        }
    }

    // ----- types and patterns -----

    fn ty(&mut self, kind: TypeExprKind, l: usize, r: usize, d: u32) -> T {
        let span = sp(l, r);
        if d > MAX_DEPTH {
            self.report_deep(span);
            return T {
                t: TypeExpr {
                    kind: TypeExprKind::Named(String::new()),
                    span,
                },
                d: 1,
            };
        }
        T {
            t: TypeExpr { kind, span },
            d,
        }
    }

    pub fn named_type(&mut self, name: &str, l: usize, r: usize) -> T {
        self.ty(TypeExprKind::Named(name.to_string()), l, r, 1)
    }

    pub fn array_type(&mut self, elem: T, n: i64, l: usize, r: usize) -> T {
        // Integer tokens are never negative.
        let n = u64::try_from(n).unwrap_or(0);
        self.ty(TypeExprKind::Array(Box::new(elem.t), n), l, r, elem.d + 1)
    }

    pub fn slice_type(&mut self, elem: T, l: usize, r: usize) -> T {
        self.ty(TypeExprKind::Slice(Box::new(elem.t)), l, r, elem.d + 1)
    }

    pub fn tuple_type(&mut self, elems: Vec<T>, l: usize, r: usize) -> T {
        let d = 1 + max_d(elems.iter().map(|t| &t.d));
        self.ty(
            TypeExprKind::Tuple(elems.into_iter().map(|t| t.t).collect()),
            l,
            r,
            d,
        )
    }

    fn pat(&mut self, p: Pattern, span: Span, d: u32) -> P {
        if d > MAX_DEPTH {
            self.report_deep(span);
            return P {
                p: Pattern::Wild(span),
                d: 1,
            };
        }
        P { p, d }
    }

    pub fn name_pat(&mut self, name: Ident) -> P {
        let span = name.span;
        self.pat(Pattern::Name(name), span, 1)
    }

    pub fn wild_pat(&mut self, l: usize, r: usize) -> P {
        self.pat(Pattern::Wild(sp(l, r)), sp(l, r), 1)
    }

    pub fn tuple_pat(&mut self, elems: Vec<P>, l: usize, r: usize) -> P {
        let d = 1 + max_d(elems.iter().map(|p| &p.d));
        let span = sp(l, r);
        self.pat(
            Pattern::Tuple(elems.into_iter().map(|p| p.p).collect(), span),
            span,
            d,
        )
    }

    // ----- items -----

    pub fn name(&self, s: &str, l: usize, r: usize) -> Ident {
        Ident::new(s.to_string(), sp(l, r))
    }

    /// An item with its depth, or `None` (with E0013) if that is too deep.
    pub fn item(
        &mut self,
        attrs: Vec<Attribute>,
        kind: (ItemKind, u32),
        l: usize,
        r: usize,
    ) -> Option<(Item, u32)> {
        let span = sp(l, r);
        let (kind, d) = kind;
        if d > MAX_DEPTH {
            self.report_deep(span);
            return None;
        }
        Some((Item { attrs, kind, span }, d))
    }

    pub fn fn_item(
        &mut self,
        name: Ident,
        params: Vec<(Param, u32)>,
        ret: Option<T>,
        body: B,
    ) -> (ItemKind, u32) {
        let d = max_d(params.iter().map(|p| &p.1))
            .max(ret.as_ref().map_or(0, |t| t.d))
            .max(body.d)
            + 1;
        let params = params.into_iter().map(|p| p.0).collect();
        (
            ItemKind::Fn(FnDecl {
                name,
                params,
                ret: ret.map(|t| t.t),
                body: body.b,
            }),
            d,
        )
    }

    /// `mod name { items }`: items that failed to parse are left out.
    pub fn mod_item(&mut self, name: Ident, items: Vec<Option<(Item, u32)>>) -> (ItemKind, u32) {
        let items: Vec<(Item, u32)> = items.into_iter().flatten().collect();
        let d = max_d(items.iter().map(|i| &i.1)) + 1;
        (
            ItemKind::Mod {
                name,
                items: items.into_iter().map(|i| i.0).collect(),
            },
            d,
        )
    }
}
