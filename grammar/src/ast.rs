//! The abstract syntax tree of a `.mad` file.
//!
//! Every node that a diagnostic may point at carries a [`Span`]. The tree is
//! exactly what the parser saw: names are not resolved and types are not
//! checked (that is the compiler's front end).

use crate::span::{Span, Spanned};

pub type Ident = Spanned<String>;

/// A whole source file: its items in order.
#[derive(Clone, Debug, PartialEq)]
pub struct File {
    pub items: Vec<Item>,
}

/// `@name` or `@name(arg, ...)` before an item, e.g. `@ad(tape)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Attribute {
    pub name: Ident,
    pub args: Vec<Ident>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    pub attrs: Vec<Attribute>,
    pub kind: ItemKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ItemKind {
    Fn(FnDecl),
    /// `mod name { items }`
    Mod {
        name: Ident,
        items: Vec<Item>,
    },
    /// `mod name;` or `mod name = "path.mad";`: a module whose items are in another
    /// file (`path` as written, without the quotes; `None` for `name.mad`). The parser
    /// does not read the file: the compiler's front end loads it.
    ModFile {
        name: Ident,
        path: Option<Spanned<String>>,
    },
    /// `use a::b::c;`, `use a::b::{c, d};`, `use a::b::*;`
    Use(UseTree),
    /// `const NAME: T = expr;`
    Const {
        name: Ident,
        ty: TypeExpr,
        value: Expr,
    },
    /// `dof x: vertex -> vec3;` or `dof u: vertex -> vec2 = tutte;` (`init`: a name
    /// such as `positions`, `zeros`, `tutte`, or a string naming a file).
    Dof {
        name: Ident,
        stencil: Ident,
        ty: TypeExpr,
        init: Option<Expr>,
    },
    /// `data rest: edge -> f64;`
    Data {
        name: Ident,
        stencil: Ident,
        ty: TypeExpr,
    },
    /// `param k: f64 = 1.0;` (the default is optional)
    Param {
        name: Ident,
        ty: TypeExpr,
        default: Option<Expr>,
    },
    /// `energy NAME(e: STENCIL) { body }`: the body's value is an `f64`.
    Energy {
        name: Ident,
        elem: Ident,
        stencil: Ident,
        body: Block,
    },
    /// `residual NAME(e: STENCIL) -> T { body }`: a vector-valued term.
    Residual {
        name: Ident,
        elem: Ident,
        stencil: Ident,
        ret: TypeExpr,
        body: Block,
    },
    /// `objective = expr;` a weighted sum of energies.
    Objective {
        value: Expr,
    },
    /// `state R: vertex -> mat3 [= INIT];` values read like data, recomputed by
    /// `update` items. `keyword` is the leading name (the front end requires `state`).
    State {
        keyword: Ident,
        name: Ident,
        stencil: Ident,
        ty: TypeExpr,
        init: Option<Expr>,
    },
    /// `update NAME(e: STENCIL) { body }`: recomputes a state or dof between solver
    /// iterations. `keyword` is the leading name (the front end requires `update`).
    Update {
        keyword: Ident,
        name: Ident,
        elem: Ident,
        stencil: Ident,
        body: Block,
    },
    /// `solve { key = value; ... }`: how `madc run` solves the file. `keyword` is
    /// the name before the brace (the front end requires `solve`).
    Solve {
        keyword: Ident,
        entries: Vec<(Ident, Expr)>,
    },
    /// `broadphase KIND[, KIND] within EXPR;`: the contact broad phase. `keyword`
    /// and `within` are plain names (the front end requires those words).
    Broadphase {
        keyword: Ident,
        kinds: Vec<Ident>,
        within: Ident,
        distance: Expr,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct FnDecl {
    pub name: Ident,
    pub params: Vec<Param>,
    /// `None` when there is no `-> T` (the unit type).
    pub ret: Option<TypeExpr>,
    pub body: Block,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: Ident,
    pub ty: TypeExpr,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct UseTree {
    /// The path before the last segment or group, e.g. `std::mat`.
    pub prefix: Vec<Ident>,
    pub kind: UseKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum UseKind {
    /// `use a::b;` (the last segment is `b`; `prefix` is `a`)
    Single(Ident),
    /// `use a::{b, c};`
    Group(Vec<Ident>),
    /// `use a::*;`
    Glob,
}

/// A type as written.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeExpr {
    pub kind: TypeExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeExprKind {
    /// A named type: `f64`, `f32`, `i64`, `bool`, `vec3`, `mat2`, `mat2x3`,
    /// `vector`, `matrix`, a stencil name (`vertex`, `edge`, ...), or a user
    /// error the checker reports.
    Named(String),
    /// `[T; N]`
    Array(Box<TypeExpr>, u64),
    /// `[T]`
    Slice(Box<TypeExpr>),
    /// `(T, U, ...)`; `()` is the unit type.
    Tuple(Vec<TypeExpr>),
}

/// `{ stmt* expr? }`
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    /// The trailing expression without `;`, the block's value.
    pub tail: Option<Box<Expr>>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `let [mut] pat [: T] = expr;`
    Let {
        pat: Pattern,
        mutable: bool,
        ty: Option<TypeExpr>,
        value: Expr,
    },
    /// `place op= expr;` where `op` is `None` for plain `=`.
    Assign {
        place: Expr,
        op: Option<BinOp>,
        value: Expr,
    },
    /// `expr;` (also `if`/`for`/`while`/block statements, with or without `;`)
    Expr(Expr),
    /// `for var in lo..hi { body }`
    For {
        var: Ident,
        lo: Expr,
        hi: Expr,
        body: Block,
    },
    /// `while cond { body }`
    While {
        cond: Expr,
        body: Block,
    },
    Break,
    Continue,
    /// `return;` or `return expr;`
    Return(Option<Expr>),
    /// A statement the parser could not read; its error was reported.
    Error,
}

/// The left side of `let`.
#[derive(Clone, Debug, PartialEq)]
pub enum Pattern {
    /// `x`
    Name(Ident),
    /// `(a, b, _)`
    Tuple(Vec<Pattern>, Span),
    /// `_`
    Wild(Span),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    /// `^`, right-associative, binds tighter than unary minus.
    Pow,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    Neg,
    Not,
}

/// A floating literal's value, rounded once from its decimal text to each float type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FloatLit {
    /// The nearest `f64`.
    pub value: f64,
    /// The nearest `f32` (infinite when the text is beyond `f32`'s range).
    pub single: f32,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An integer literal (`i64`); the literal text did fit in an `i64`.
    Int(i64),
    /// A floating literal (`f64` unless context says `f32`).
    Float(FloatLit),
    Bool(bool),
    /// A string literal (only meaningful in a few places, e.g. `print`).
    Str(String),
    /// `a`, `a::b::c`
    Path(Vec<Ident>),
    Binary {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    Unary {
        op: UnOp,
        operand: Box<Expr>,
    },
    /// `expr as T`
    Cast {
        expr: Box<Expr>,
        ty: TypeExpr,
    },
    /// `callee(args)`; `callee` is usually a path, but `grad(f)(x)` calls a call.
    Call {
        callee: Box<Expr>,
        args: Vec<Expr>,
    },
    /// `base[i]`, `base[i, j]`
    Index {
        base: Box<Expr>,
        indices: Vec<Expr>,
    },
    /// `base[lo..hi]`, `base[lo..]`, `base[..hi]`, `base[..]`: rows `lo` to `hi − 1`
    Slice {
        base: Box<Expr>,
        lo: Option<Box<Expr>>,
        hi: Option<Box<Expr>>,
    },
    /// `base.name` (`v.x`, `e.v0`)
    Field {
        base: Box<Expr>,
        name: Ident,
    },
    /// `base.0`
    TupleField {
        base: Box<Expr>,
        index: u32,
        index_span: Span,
    },
    /// `(a, b)`; `()` is the unit value. `(a)` is just `a`.
    Tuple(Vec<Expr>),
    /// `[a, b, c]`
    Array(Vec<Expr>),
    /// `[value; count]`
    ArrayRepeat {
        value: Box<Expr>,
        count: Box<Expr>,
    },
    Block(Block),
    /// `if cond { then } else { else_ }`; `else if` nests another `If` inside a block-less else.
    If {
        cond: Box<Expr>,
        then: Block,
        else_: Option<Box<Expr>>,
    },
    /// An expression the parser could not read; its error was reported.
    Error,
}
