//! A builder that appends ops to the region being built, with a stack for
//! nested regions (the body of an `If`, `For`, `While`).
//!
//! ```
//! use mad::ir::{Builder, Function, Type, OpKind, BinaryOp, Literal};
//! let mut f = Function::new("twice", &[Type::F64], Type::F64);
//! let x = f.params()[0];
//! let mut b = Builder::new(&mut f);
//! let two = b.constant(Literal::F64(2.0));
//! let y = b.op1(OpKind::Binary(BinaryOp::Mul), vec![x, two], Type::F64);
//! b.finish(vec![y]);
//! assert_eq!(f.body.ops.len(), 2);
//! ```

use super::function::{Function, OpId, Region, ValueId};
use super::op::{Literal, OpKind};
use super::types::Type;
use mad_grammar::span::Span;

pub struct Builder<'f> {
    pub func: &'f mut Function,
    /// Regions under construction; the last is the current one. The first is the body.
    stack: Vec<Region>,
    span: Span,
}

impl<'f> Builder<'f> {
    /// Starts building `func`'s body (its arguments are kept; its ops are appended to).
    pub fn new(func: &'f mut Function) -> Builder<'f> {
        let body = std::mem::take(&mut func.body);
        Builder {
            func,
            stack: vec![body],
            span: Span::default(),
        }
    }

    /// The span given to the ops created from now on.
    pub fn set_span(&mut self, span: Span) {
        self.span = span;
    }

    pub fn span(&self) -> Span {
        self.span
    }

    /// Appends an op to the current region.
    pub fn op(&mut self, kind: OpKind, operands: Vec<ValueId>, result_types: Vec<Type>) -> OpId {
        let id = self.func.new_op(kind, operands, result_types, self.span);
        self.stack
            .last_mut()
            .expect("builder has a current region")
            .ops
            .push(id);
        id
    }

    /// Appends an op with one result and returns that result.
    pub fn op1(&mut self, kind: OpKind, operands: Vec<ValueId>, ty: Type) -> ValueId {
        let id = self.op(kind, operands, vec![ty]);
        self.func.ops[id].results[0]
    }

    /// Appends an op that owns `regions` (built with [`Builder::begin_region`]).
    pub fn op_with_regions(
        &mut self,
        kind: OpKind,
        operands: Vec<ValueId>,
        result_types: Vec<Type>,
        regions: Vec<Region>,
    ) -> OpId {
        let id = self.op(kind, operands, result_types);
        self.func.ops[id].regions = regions;
        id
    }

    pub fn constant(&mut self, lit: Literal) -> ValueId {
        self.op1(OpKind::Const(lit), vec![], Type::Scalar(lit.kind()))
    }

    pub fn ty(&self, v: ValueId) -> &Type {
        self.func.ty(v)
    }

    /// Opens a nested region with arguments of the given types; returns them.
    pub fn begin_region(&mut self, arg_types: &[Type]) -> Vec<ValueId> {
        let args: Vec<ValueId> = arg_types
            .iter()
            .map(|t| self.func.new_value(t.clone()))
            .collect();
        self.stack.push(Region {
            args: args.clone(),
            ops: Vec::new(),
            yields: Vec::new(),
        });
        args
    }

    /// Closes the current nested region, which yields `yields`.
    pub fn end_region(&mut self, yields: Vec<ValueId>) -> Region {
        assert!(self.stack.len() > 1, "end_region without begin_region");
        let mut r = self.stack.pop().expect("nested region");
        r.yields = yields;
        r
    }

    /// Closes the body, which yields `yields` (one value: the return value).
    pub fn finish(mut self, yields: Vec<ValueId>) {
        assert_eq!(self.stack.len(), 1, "unclosed nested region");
        let mut body = self.stack.pop().expect("body");
        body.yields = yields;
        self.func.body = body;
    }
}
