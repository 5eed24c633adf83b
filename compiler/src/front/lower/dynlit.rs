//! Array literals and repeats whose context is a dynamic type (`let v: vector = [1.0, 2.0];`,
//! `let m: matrix = [[1, 2], [3, 4]];`, `let m: matrix = [r, r];` with `r: vector`,
//! `let s: [vec3] = [v; 4];`): the value is built as a
//! dynamic tensor of the literal's length, filled element by element (a repeat of a scalar
//! is one `full`, of many rows a loop).

use super::{FnCx, Tv, zero_lit};
use crate::front::diagnostics::ErrorKind;
use crate::front::types::SurfaceType;
use crate::ir::{Dim, OpKind, Type, ValueId};
use mad_grammar::ast::{Expr, ExprKind};
use mad_grammar::span::Span;

/// The most rows of a repeat `[row; n]` written one op each; longer repeats loop.
const UNROLLED_ROWS: u64 = 16;

/// Whether `ty` is a dynamic array type that an array literal can build.
pub fn is_dynamic_array(ty: &SurfaceType) -> bool {
    matches!(
        ty,
        SurfaceType::Vector | SurfaceType::Matrix | SurfaceType::Slice(_)
    )
}

impl FnCx<'_, '_> {
    /// `[x0, x1, ...]` where a dynamic array type `ty` is expected.
    pub fn dynamic_array_literal(&mut self, xs: &[Expr], span: Span, ty: &SurfaceType) -> Tv {
        let Some(elem) = ty.index_once() else {
            return self.poison();
        };
        // The rows of a `matrix` are fixed-size arrays or `vector`s; their type (and length)
        // comes from the first row.
        let mut row = (elem != SurfaceType::Vector).then_some(elem);
        let mut vals = Vec::new();
        for x in xs {
            let hint = match (&row, &x.kind) {
                (Some(t), _) => Some(t.clone()),
                (None, ExprKind::Array(ys)) => {
                    Some(SurfaceType::array(SurfaceType::F64, ys.len() as u64))
                }
                _ => None,
            };
            let tv = self.expr(x, hint.as_ref());
            let tv = match &row {
                Some(t) => self.expect(tv, t, x.span),
                None => {
                    if !tv.ty.is_error()
                        && tv.ty != SurfaceType::Vector
                        && !matches!(tv.ty.as_array(), Some((SurfaceType::F64, _)))
                    {
                        let found = tv.ty.to_string();
                        self.error(
                            ErrorKind::TypeMismatch {
                                expected: "a row of f64".into(),
                                found,
                            },
                            x.span,
                        );
                        return self.poison();
                    }
                    row = Some(tv.ty.clone());
                    tv
                }
            };
            vals.push(tv.v);
        }
        let row = row.unwrap_or(SurfaceType::Array(Box::new(SurfaceType::F64), 0));
        if row.contains_error() {
            return self.poison();
        }
        self.b.set_span(span);
        let v = self.fill_dynamic(ty, &row, &vals);
        Tv { ty: ty.clone(), v }
    }

    /// `[value; n]` where a dynamic array type `ty` is expected: a `full` for scalar elements,
    /// rows written one by one up to `UNROLLED_ROWS` and by a loop beyond.
    pub fn dynamic_array_repeat(
        &mut self,
        value: &Expr,
        n: Option<u64>,
        span: Span,
        ty: &SurfaceType,
    ) -> Tv {
        let Some(elem) = ty.index_once() else {
            return self.poison();
        };
        let hint = (elem != SurfaceType::Vector).then_some(elem);
        // A `matrix` row written as an array literal is a row of f64, as in a matrix literal
        // (its integer literals adapt).
        let row_hint = match (&hint, &value.kind) {
            (Some(t), _) => Some(t.clone()),
            (None, ExprKind::Array(ys)) => Some(SurfaceType::array(SurfaceType::F64, ys.len() as u64)),
            _ => None,
        };
        let tv = self.expr(value, row_hint.as_ref());
        let tv = match &hint {
            Some(t) => self.expect(tv, t, value.span),
            None if tv.ty.is_error()
                || tv.ty == SurfaceType::Vector
                || matches!(tv.ty.as_array(), Some((SurfaceType::F64, _))) =>
            {
                tv
            }
            None => {
                let found = tv.ty.to_string();
                self.error(
                    ErrorKind::TypeMismatch {
                        expected: "a row of f64".into(),
                        found,
                    },
                    value.span,
                );
                return self.poison();
            }
        };
        let Some(n) = n else { return self.poison() };
        if tv.ty.contains_error() {
            return self.poison();
        }
        self.b.set_span(span);
        let irt = ty.ir_type();
        let count = self.i64c(n as i64);
        let v = if !matches!(tv.ty.ir_type(), Type::Tensor { .. }) {
            // Scalars: one `full` of the value (no op per element).
            self.b.push1(OpKind::Full, vec![tv.v, count], irt)
        } else if n <= UNROLLED_ROWS {
            // The row's extents even for n = 0 (`[r; 0]` has `cols` = `len(r)`, as `zeros(0, k)`).
            let mut acc = self.full_dynamic(ty, &tv.ty, count, Some(tv.v));
            for i in 0..n {
                let idx = self.i64c(i as i64);
                acc = self.b.push1(OpKind::Insert, vec![acc, tv.v, idx], irt.clone());
            }
            acc
        } else {
            // Rows: a loop that writes the row n times (a repeat's n is a constant, but it
            // may be large: one op per row would grow the program with it).
            let start = self.full_dynamic(ty, &tv.ty, count, Some(tv.v));
            // Up to the rows the tensor has: none when it could not be made (too large),
            // whose error then ends the run without n idle iterations.
            let rows = self.b.push1(OpKind::DimOf(0), vec![start], Type::I64);
            let zero = self.i64c(0);
            let args = self.b.begin_region(&[Type::I64, irt.clone()]);
            let next = self.b.push1(OpKind::Insert, vec![args[1], tv.v, args[0]], irt.clone());
            let body = self.b.end_region(vec![next]);
            let op = self.b.push_with_regions(OpKind::For, vec![zero, rows, start], vec![irt], vec![body]);
            self.b.func.ops[op].results[0]
        };
        Tv { ty: ty.clone(), v }
    }

    /// A dynamic tensor of type `ty` with one element (of fixed type `elem`) per value: one
    /// `tensor.pack` of scalars or fixed-size rows (linear in the literal's length), else
    /// (`vector` rows, whose lengths are known at run time) the rows written one by one.
    fn fill_dynamic(&mut self, ty: &SurfaceType, elem: &SurfaceType, vals: &[ValueId]) -> ValueId {
        let irt = ty.ir_type();
        let fixed_rows = match elem.ir_type() {
            Type::Scalar(_) => true,
            t @ Type::Tensor { .. } => Type::fixed_shape(&t).is_some(),
            Type::Tuple(_) => false,
        };
        if fixed_rows && !vals.is_empty() {
            return self.b.push1(OpKind::Pack, vals.to_vec(), irt);
        }
        let count = self.i64c(vals.len() as i64);
        let mut acc = self.full_dynamic(ty, elem, count, vals.first().copied());
        for (i, &x) in vals.iter().enumerate() {
            let idx = self.i64c(i as i64);
            acc = self.b.push1(OpKind::Insert, vec![acc, x, idx], irt.clone());
        }
        acc
    }

    /// A dynamic tensor of type `ty` of `count` zero elements of fixed type `elem`, a
    /// `vector` row as long as `first` (0 without it).
    fn full_dynamic(&mut self, ty: &SurfaceType, elem: &SurfaceType, count: ValueId, first: Option<ValueId>) -> ValueId {
        let irt = ty.ir_type();
        let kind = ty.elem_kind().unwrap_or(crate::ir::ScalarKind::F64);
        let mut ops = vec![self.konst(zero_lit(kind)), count];
        if let Type::Tensor { shape, .. } = elem.ir_type() {
            for (axis, d) in shape.into_iter().enumerate() {
                let n = match (d, first) {
                    (Dim::Fixed(n), _) => self.i64c(n as i64),
                    // `vector` rows: the first row's length; a row of another length is a
                    // shape mismatch when it is written in.
                    (_, Some(first)) => self.b.push1(OpKind::DimOf(axis as u32), vec![first], Type::I64),
                    (_, None) => self.i64c(0),
                };
                ops.push(n);
            }
        }
        self.b.push1(OpKind::Full, ops, irt)
    }
}
