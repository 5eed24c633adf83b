//! The IR builder: appends ops to the region being built, with a stack for nested regions
//! (the bodies of `If`, `For`, `While`), infers result types from the op table
//! ([`Builder::infer`]), and can reopen a finished region to append to it. The front end
//! builds into a function it borrows; differentiation ([`crate::ad`]'s emitter) and other
//! generators build a function they own.
//!
//! ```
//! use mad::ir::{Builder, Function, Type, OpKind, BinaryOp, Literal};
//! let mut f = Function::new("twice", &[Type::F64], Type::F64);
//! let x = f.params()[0];
//! let mut b = Builder::new(&mut f);
//! let two = b.constant(Literal::F64(2.0));
//! let y = b.infer(OpKind::Binary(BinaryOp::Mul), vec![x, two]).unwrap();
//! assert_eq!(b.ty(y), &Type::F64);
//! b.finish(vec![y]);
//! assert_eq!(f.body.ops.len(), 2);
//! ```

use std::borrow::BorrowMut;

use super::function::{Function, Module, OpId, Region, ValueId};
use super::op::{Literal, OpKind};
use super::types::Type;
use super::validate::result_types;
use mad_grammar::span::Span;

/// Builds the body of a function `F` (owned: `Function`, or borrowed: `&mut Function`).
pub struct Builder<F: BorrowMut<Function>> {
    pub func: F,
    /// Regions under construction; the last is the current one. The first is the body.
    stack: Vec<Region>,
    span: Span,
    /// The module result types are inferred against (no functions: calls declare theirs).
    empty: Module,
}

impl<F: BorrowMut<Function>> Builder<F> {
    /// Starts building `func`'s body (its arguments are kept; its ops are appended to).
    pub fn new(mut func: F) -> Builder<F> {
        let body = std::mem::take(&mut func.borrow_mut().body);
        Builder {
            func,
            stack: vec![body],
            span: Span::default(),
            empty: Module::new(),
        }
    }

    fn f(&mut self) -> &mut Function {
        self.func.borrow_mut()
    }

    /// The span given to the ops created from now on.
    pub fn set_span(&mut self, span: Span) {
        self.span = span;
    }

    pub fn span(&self) -> Span {
        self.span
    }

    /// Appends an op with declared result types to the current region.
    pub fn push(&mut self, kind: OpKind, operands: Vec<ValueId>, result_types: Vec<Type>) -> OpId {
        let span = self.span;
        let id = self.f().new_op(kind, operands, result_types, span);
        if let Some(r) = self.stack.last_mut() {
            r.ops.push(id);
        }
        id
    }

    /// Appends an op with one declared result type and returns that result.
    pub fn push1(&mut self, kind: OpKind, operands: Vec<ValueId>, ty: Type) -> ValueId {
        let id = self.push(kind, operands, vec![ty]);
        self.func.borrow().ops[id].results[0]
    }

    /// Appends an op that owns `regions` (built with [`Builder::begin_region`]).
    pub fn push_with_regions(
        &mut self,
        kind: OpKind,
        operands: Vec<ValueId>,
        result_types: Vec<Type>,
        regions: Vec<Region>,
    ) -> OpId {
        let id = self.push(kind, operands, result_types);
        self.f().ops[id].regions = regions;
        id
    }

    /// Appends a one-result op whose type the op table infers from the operands' (not for
    /// `call` or `scf.*`, which declare theirs); the error says why the operands do not fit.
    pub fn infer(&mut self, kind: OpKind, operands: Vec<ValueId>) -> Result<ValueId, String> {
        let tys: Vec<Type> = operands.iter().map(|&v| self.ty(v).clone()).collect();
        let out = result_types(&kind, &tys, &self.empty)?;
        let ty = out.into_iter().next().ok_or_else(|| format!("`{}` has no result", kind.name()))?;
        Ok(self.push1(kind, operands, ty))
    }

    /// The results of op `op`.
    pub fn results(&self, op: OpId) -> Vec<ValueId> {
        self.func.borrow().ops[op].results.clone()
    }

    pub fn constant(&mut self, lit: Literal) -> ValueId {
        self.push1(OpKind::Const(lit), vec![], Type::Scalar(lit.kind()))
    }

    pub fn ty(&self, v: ValueId) -> &Type {
        self.func.borrow().ty(v)
    }

    /// Opens a nested region with arguments of the given types; returns them.
    pub fn begin_region(&mut self, arg_types: &[Type]) -> Vec<ValueId> {
        let args: Vec<ValueId> = arg_types.iter().map(|t| self.f().new_value(t.clone())).collect();
        self.stack.push(Region {
            args: args.clone(),
            ops: Vec::new(),
            yields: Vec::new(),
        });
        args
    }

    /// Makes a finished region current again (to append ops to it).
    pub fn reopen(&mut self, region: Region) {
        self.stack.push(region);
    }

    /// Closes the current nested region, which yields `yields`.
    pub fn end_region(&mut self, yields: Vec<ValueId>) -> Region {
        let mut r = self.stack.pop().unwrap_or_default();
        r.yields = yields;
        r
    }

    /// The innermost region being built and the regions around it (the body first).
    pub fn open_regions(&self) -> &[Region] {
        &self.stack
    }

    /// Closes the body, which yields `yields` (one value: the return value).
    pub fn finish(mut self, yields: Vec<ValueId>) -> F {
        let mut body = self.stack.pop().unwrap_or_default();
        body.yields = yields;
        self.f().body = body;
        self.func
    }
}
