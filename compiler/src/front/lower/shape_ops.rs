//! The shape operations of the language, on tensors of any element type: slices
//! `t[lo..hi]` (rows of the first axis, `tensor.slice`), `concat(a, b, …)` (stacking along
//! the first axis, `tensor.concat`) and `reshape(t, n)` / `reshape(t, r, c)` (the row-major
//! elements under a new shape, `tensor.reshape`). Their results are always dynamic
//! (`vector`, `matrix`, `[T]`); their arguments may be fixed-size or dynamic.

use super::{FnCx, Tv};
use crate::front::diagnostics::ErrorKind;
use crate::front::types::SurfaceType;
use crate::ir::{OpKind, Type};
use mad_grammar::ast::{Expr, ExprKind, UnOp};
use mad_grammar::span::Span;

/// The dynamic array type of the rows of `t`: `[row]` in canonical form (`vec3`, `vector`
/// and `[f64; 3]` rows of f64 give `vector`; `mat2x3` and `matrix` give `matrix`).
fn rows_type(t: &SurfaceType) -> Option<SurfaceType> {
    let row = t.index_once()?;
    // Rows that are fixed-size vectors stack into a `matrix` with the dynamic ones.
    let row = match row {
        SurfaceType::Vec(_) => SurfaceType::Vector,
        r => r,
    };
    Some(SurfaceType::slice(row))
}

/// The value of an integer literal, negated or not.
fn int_literal(e: &Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Int(n) => Some(*n),
        ExprKind::Unary { op: UnOp::Neg, operand } => int_literal(operand).map(|n| -n),
        _ => None,
    }
}

/// The rank of `t`'s IR type (0 for non-tensors).
fn rank(t: &SurfaceType) -> usize {
    match t.ir_type() {
        Type::Tensor { shape, .. } => shape.len(),
        _ => 0,
    }
}

impl FnCx<'_, '_> {
    /// `base[lo..hi]`; a missing `lo` is 0, a missing `hi` the length.
    pub fn slice_expr(&mut self, base: &Expr, lo: Option<&Expr>, hi: Option<&Expr>, span: Span) -> Tv {
        let b = self.expr(base, None);
        let bounds: Vec<Option<Tv>> = [lo, hi]
            .into_iter()
            .map(|e| e.map(|e| self.index_values(std::slice::from_ref(e)).remove(0)))
            .collect();
        if b.ty.is_error() || bounds.iter().flatten().any(|t| t.ty.is_error()) {
            return self.poison();
        }
        let Some(ty) = rows_type(&b.ty).filter(|r| rank(r) == rank(&b.ty)) else {
            let detail = if b.ty.index_once().is_some() {
                "a one-column matrix cannot be sliced (its rows are numbers): slice a `vector` of them".to_string()
            } else {
                "only vectors, matrices, arrays and slices can be sliced".to_string()
            };
            self.error(ErrorKind::BadIndex { ty: b.ty.to_string(), detail }, span);
            return self.poison();
        };
        for e in [lo, hi].into_iter().flatten() {
            if let Some(n) = int_literal(e)
                && (n < 0 || b.ty.static_len().is_some_and(|len| n as u64 > len))
            {
                let detail = match b.ty.static_len() {
                    Some(len) => format!("slice bound {n} is out of bounds for length {len}"),
                    None => format!("slice bound {n} is negative"),
                };
                self.error(ErrorKind::BadIndex { ty: b.ty.to_string(), detail }, e.span);
                return self.poison();
            }
        }
        self.b.set_span(span);
        let lo = match &bounds[0] {
            Some(t) => t.v,
            None => self.i64c(0),
        };
        let hi = match &bounds[1] {
            Some(t) => t.v,
            None => self.b.push1(OpKind::DimOf(0), vec![b.v], Type::I64),
        };
        let v = self.b.push1(OpKind::Slice, vec![b.v, lo, hi], ty.ir_type());
        Tv { ty, v }
    }

    /// `concat(a, b, …)`: one or more arguments whose rows have one type.
    pub fn concat_builtin(&mut self, args: &[Expr], span: Span) -> Tv {
        if args.is_empty() {
            self.error(ErrorKind::ArgCount { name: "concat".into(), expected: "1 or more".into(), found: 0 }, span);
            return self.poison();
        }
        let xs: Vec<Tv> = args.iter().map(|a| self.expr(a, None)).collect();
        if xs.iter().any(|x| x.ty.is_error()) {
            return self.poison();
        }
        let types: Vec<SurfaceType> = xs.iter().map(|x| x.ty.clone()).collect();
        let Some(ty) = rows_type(&types[0]).filter(|r| rank(r) == rank(&types[0])) else {
            return self.bad_shape_builtin("concat", &types, span);
        };
        if types.iter().any(|t| rows_type(t).as_ref() != Some(&ty) || rank(t) != rank(&ty)) {
            return self.bad_shape_builtin("concat", &types, span);
        }
        self.b.set_span(span);
        let v = self.b.push1(OpKind::Concat, xs.iter().map(|x| x.v).collect(), ty.ir_type());
        Tv { ty, v }
    }

    /// `reshape(t, n)` (a `vector`, or `[k]` for elements of kind k) and `reshape(t, r, c)`
    /// (a `matrix`, or `[[k]]`): `t`'s elements in row-major order.
    pub fn reshape_builtin(&mut self, args: &[Expr], span: Span) -> Tv {
        if !(2..=3).contains(&args.len()) {
            self.lower_args_for_errors(args);
            self.error(ErrorKind::ArgCount { name: "reshape".into(), expected: "2 or 3".into(), found: args.len() }, span);
            return self.poison();
        }
        let x = self.expr(&args[0], None);
        let dims: Vec<Tv> = args[1..]
            .iter()
            .map(|a| {
                let d = self.expr(a, Some(&SurfaceType::I64));
                if d.ty.compatible(&SurfaceType::I64) {
                    d
                } else {
                    self.expect(d, &SurfaceType::I64, a.span);
                    Tv { ty: SurfaceType::Error, v: self.poison().v }
                }
            })
            .collect();
        if x.ty.is_error() || dims.iter().any(|d| d.ty.is_error()) {
            return self.poison();
        }
        let Some(k) = x.ty.elem_kind().filter(|_| x.ty.is_tensor()) else {
            let mut tys = vec![x.ty];
            tys.extend(dims.iter().map(|d| d.ty.clone()));
            return self.bad_shape_builtin("reshape", &tys, span);
        };
        let mut ty = SurfaceType::slice(SurfaceType::from_scalar(k));
        if dims.len() == 2 {
            ty = SurfaceType::slice(ty);
        }
        self.b.set_span(span);
        let mut ops = vec![x.v];
        ops.extend(dims.iter().map(|d| d.v));
        let v = self.b.push1(OpKind::Reshape, ops, ty.ir_type());
        Tv { ty, v }
    }

    fn bad_shape_builtin(&mut self, name: &str, tys: &[SurfaceType], span: Span) -> Tv {
        let args = tys.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", ");
        let candidates = match name {
            "concat" => vec![
                "concat(T, …) -> vector for T = vector, vecN, [f64; N] (mixed)".to_string(),
                "concat(T, …) -> matrix for T = matrix, matRxC (mixed; rows of one length at run time)".to_string(),
                "concat([T], …) -> [T] for arrays and slices of one element type".to_string(),
            ],
            _ => vec![
                "reshape(T, i64) -> vector (or [k] for a tensor of kind k)".to_string(),
                "reshape(T, i64, i64) -> matrix (or [[k]])".to_string(),
            ],
        };
        self.error(ErrorKind::NoOverload { name: name.to_string(), args, candidates }, span);
        self.poison()
    }
}
