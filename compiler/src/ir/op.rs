//! The op table: every operation the IR knows.
//!
//! Each back end, the validator, the interpreter and (later) the AD rule table
//! match on [`OpKind`] exhaustively, without a wildcard arm, so a new op does not
//! compile until every one of them handles it.
//!
//! Operand and result conventions (the validator enforces them):
//!
//! | op | operands | regions | results |
//! |---|---|---|---|
//! | `Const` | — | — | the literal's scalar |
//! | `Unary(op)` | `x` (scalar or tensor) | — | same type as `x` (elementwise) |
//! | `Binary(op)` | `a, b`: same type, or one scalar and one tensor of that kind (broadcast) | — | the tensor/scalar type; `bool` kind for comparisons |
//! | `Select` | `cond: bool` or a bool tensor of the branches' shape (elementwise), `a, b` (same type) | — | type of `a` |
//! | `Cast(k)` | `x` scalar or tensor | — | same shape, kind `k` |
//! | `Pack` | `n ≥ 1` values of one type `T` (scalar or tensor) | — | `tensor<[n] ++ shape(T)>` |
//! | `Full` | `value: scalar`, then one `i64` extent per result axis | — | the op's declared result type (a tensor of that rank) |
//! | `Extract(i)` | `t: tensor` | — | `t[i]` on axis 0 (static index, checked by the validator when the extent is fixed) |
//! | `Index` | `t: tensor`, `k ≥ 1` `i64` indices | — | `t` with its first `k` axes removed (scalar if none remain); out of bounds is a run-time error |
//! | `Insert` | `t: tensor`, `v`, `k ≥ 1` `i64` indices | — | a copy of `t` with `t[i..] = v` |
//! | `DimOf(axis)` | `t: tensor` | — | `i64` extent of `axis` |
//! | `MatMul` | `[…, m,k] x […, k,n]` or `[…, m,k] x [k]` (float; batch extents broadcast as numpy's `matmul`) | — | `[…, m,n]` or `[…, m]` |
//! | `Transpose` | `t: tensor` of rank 2 | — | `[n, m]` |
//! | `Sum` | `t: tensor` (numeric) | — | scalar of its kind |
//! | `Slice` | `t, lo: i64, hi: i64` | — | rows `lo..hi` of axis 0 |
//! | `Concat` | tensors of one kind and row shape | — | stacked along axis 0 |
//! | `Reshape` | `t`, then one `i64` extent per result axis | — | `t`'s elements under that shape |
//! | `Permute(perm)` | `t: tensor` of rank `perm.len()` | — | `t` with axis `i` taken from axis `perm[i]` |
//! | `Broadcast` | `t: tensor`, then one `i64` extent per result axis (at least `t`'s rank) | — | declared: `t` stretched to the extents (numpy rules) |
//! | `ReduceTo(r)` | `t: tensor` (numeric), then one `i64` extent per result axis (at most `t`'s rank) | — | declared: `t` folded down to the extents by `r` (`tensor.sum_to`, `tensor.max_to`, `tensor.min_to`) |
//! | `Tuple` | any values | — | tuple of their types |
//! | `TupleGet(i)` | `t: tuple` | — | field `i` |
//! | `Call(f)` | `f`'s parameters | — | `f`'s return type |
//! | `Print` | one value | — | unit; writes the value and a newline to the program's output |
//! | `PrintStr(s)` | — | — | unit; writes the text `s` and a newline (text form: `print.str @"text"`) |
//! | `If` | `cond: bool` | then, else (no args; each yields the results) | declared |
//! | `For` | `lo: i64, hi: i64, init...` | body (args `i: i64, carried...`; yields carried) | final carried values |
//! | `While` | `init...` | cond (args carried; yields one `bool`), body (args carried; yields carried) | final carried values |
//! | `TapePush` | `n ≥ 1` values of any types | — | none; pushes the values on the run-time tape (text form: `tape.push %a, %b : ()`) |
//! | `TapePop` | — | — | the declared types (`n ≥ 1`); pops the values of the matching `tape.pop` (text form: `%a, %b = tape.pop : (f64, i64)`) |
//!
//! A `For` runs its body for `i = lo, lo+1, …, hi-1` (not at all if `lo >= hi`).
//! A `While` evaluates `cond` on the carried values before each iteration.
//!
//! The tape ops are the bookkeeping of reverse mode through regions whose
//! structure is known only at run time (reverse mode's tape regions). The tape is a
//! LIFO stack owned by the run-time context and reset between evaluations: a
//! `tape.pop : (T1, …, Tn)` returns the values of the most recent unmatched
//! `tape.push` of the same types (popping from an empty tape, or with other types
//! than were pushed, is a run-time error in the interpreter; the compiler only
//! emits matched pairs). They have an effect: CSE never merges them and DCE never
//! removes them or a control-flow op that contains them. They are not
//! differentiable values: forward mode pushes and pops tangents beside the
//! values; reverse mode of a function that already uses the tape is refused.

use super::function::FuncRef;
use super::types::ScalarKind;
pub use mad_runtime::jit::broadcast::Reduce;
pub use mad_runtime::{BinaryOp, UnaryOp};

/// A scalar literal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Literal {
    F64(f64),
    F32(f32),
    I64(i64),
    Bool(bool),
}

impl Literal {
    pub fn kind(self) -> ScalarKind {
        match self {
            Literal::F64(_) => ScalarKind::F64,
            Literal::F32(_) => ScalarKind::F32,
            Literal::I64(_) => ScalarKind::I64,
            Literal::Bool(_) => ScalarKind::Bool,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum OpKind {
    Const(Literal),
    Unary(UnaryOp),
    Binary(BinaryOp),
    Select,
    Cast(ScalarKind),
    Pack,
    Full,
    Extract(u64),
    Index,
    Insert,
    DimOf(u32),
    MatMul,
    Transpose,
    Sum,
    /// Rows `lo..hi` of the first axis of a tensor: operands `(t, lo, hi)`, `lo` and `hi`
    /// `i64` with `0 <= lo <= hi <= len` (a run-time error otherwise).
    Slice,
    /// Tensors of one kind, rank and trailing extents stacked along their first axis.
    Concat,
    /// A tensor's row-major elements under a new shape: operands `(t, d₀, …)`, the
    /// extents `i64` whose product must be `t`'s element count.
    Reshape,
    /// The axes of a tensor reordered: axis `i` of the result is axis `perm[i]` of the
    /// operand (`tensor.permute[2, 0, 1]`).
    Permute(Vec<u32>),
    /// Numpy broadcasting: operands `(t, d₀, …)`, `t` stretched to the `i64` extents
    /// (right-aligned; each extent of `t` is 1 or the target's, a run-time error
    /// otherwise). The result type is declared (like `tensor.full`'s).
    Broadcast,
    /// Operands `(t, d₀, …)`: `t` folded down to the `i64` extents by the same rule as
    /// `Broadcast`'s (sum: its transpose; max, min). The result type is declared.
    ReduceTo(Reduce),
    Tuple,
    TupleGet(u32),
    Call(FuncRef),
    Print,
    /// Prints a string constant (`print("text")` in the language).
    PrintStr(String),
    If,
    For,
    While,
    /// Pushes its operands on the run-time tape.
    TapePush,
    /// Pops values of its result types from the run-time tape.
    TapePop,
}

impl OpKind {
    /// Every op of the IR, one of each (every unary and binary op separately; `Call` of
    /// function #0, `PrintStr` of an empty text): the list a test checks for samples on
    /// every back end and for derivative tests. A new variant does not compile until it
    /// is listed here.
    pub fn catalog() -> Vec<OpKind> {
        let listed = |k: &OpKind| match k {
            OpKind::Const(_)
            | OpKind::Unary(_)
            | OpKind::Binary(_)
            | OpKind::Select
            | OpKind::Cast(_)
            | OpKind::Pack
            | OpKind::Full
            | OpKind::Extract(_)
            | OpKind::Index
            | OpKind::Insert
            | OpKind::DimOf(_)
            | OpKind::MatMul
            | OpKind::Transpose
            | OpKind::Sum
            | OpKind::Slice
            | OpKind::Concat
            | OpKind::Reshape
            | OpKind::Permute(_)
            | OpKind::Broadcast
            | OpKind::ReduceTo(_)
            | OpKind::Tuple
            | OpKind::TupleGet(_)
            | OpKind::Call(_)
            | OpKind::Print
            | OpKind::PrintStr(_)
            | OpKind::If
            | OpKind::For
            | OpKind::While
            | OpKind::TapePush
            | OpKind::TapePop => true,
        };
        let mut all = vec![OpKind::Const(Literal::F64(0.0))];
        all.extend(UnaryOp::ALL.into_iter().map(OpKind::Unary));
        all.extend(BinaryOp::ALL.into_iter().map(OpKind::Binary));
        all.extend(Reduce::ALL.into_iter().map(OpKind::ReduceTo));
        all.extend([
            OpKind::Select,
            OpKind::Cast(ScalarKind::F64),
            OpKind::Pack,
            OpKind::Full,
            OpKind::Extract(0),
            OpKind::Index,
            OpKind::Insert,
            OpKind::DimOf(0),
            OpKind::MatMul,
            OpKind::Transpose,
            OpKind::Sum,
            OpKind::Slice,
            OpKind::Concat,
            OpKind::Reshape,
            OpKind::Permute(vec![1, 0]),
            OpKind::Broadcast,
            OpKind::Tuple,
            OpKind::TupleGet(0),
            OpKind::Call(FuncRef::from_index(0)),
            OpKind::Print,
            OpKind::PrintStr(String::new()),
            OpKind::If,
            OpKind::For,
            OpKind::While,
            OpKind::TapePush,
            OpKind::TapePop,
        ]);
        debug_assert!(all.iter().all(listed));
        all
    }

    /// The op's name in the text form (`add`, `const`, `tensor.pack`, `scf.for`, …).
    pub fn name(&self) -> &'static str {
        match self {
            OpKind::Const(_) => "const",
            OpKind::Unary(op) => op.name(),
            OpKind::Binary(op) => op.name(),
            OpKind::Select => "select",
            OpKind::Cast(_) => "cast",
            OpKind::Pack => "tensor.pack",
            OpKind::Full => "tensor.full",
            OpKind::Extract(_) => "tensor.extract",
            OpKind::Index => "tensor.index",
            OpKind::Insert => "tensor.insert",
            OpKind::DimOf(_) => "tensor.dim",
            OpKind::MatMul => "tensor.matmul",
            OpKind::Transpose => "tensor.transpose",
            OpKind::Sum => "tensor.sum",
            OpKind::Slice => "tensor.slice",
            OpKind::Concat => "tensor.concat",
            OpKind::Reshape => "tensor.reshape",
            OpKind::Permute(_) => "tensor.permute",
            OpKind::Broadcast => "tensor.broadcast",
            OpKind::ReduceTo(r) => r.name(),
            OpKind::Tuple => "tuple",
            OpKind::TupleGet(_) => "tuple.get",
            OpKind::Call(_) => "call",
            OpKind::Print => "print",
            OpKind::PrintStr(_) => "print.str",
            OpKind::If => "scf.if",
            OpKind::For => "scf.for",
            OpKind::While => "scf.while",
            OpKind::TapePush => "tape.push",
            OpKind::TapePop => "tape.pop",
        }
    }

    /// How many regions the op carries.
    pub fn region_count(&self) -> usize {
        match self {
            OpKind::If | OpKind::While => 2,
            OpKind::For => 1,
            _ => 0,
        }
    }

    /// Ops with an effect beyond their results (never removed by DCE).
    pub fn has_side_effect(&self) -> bool {
        matches!(
            self,
            OpKind::Print
                | OpKind::PrintStr(_)
                | OpKind::Call(_)
                | OpKind::TapePush
                | OpKind::TapePop
        )
    }

    /// The run-time tape ops.
    pub fn is_tape(&self) -> bool {
        matches!(self, OpKind::TapePush | OpKind::TapePop)
    }
}
