//! Expressions other than operators, calls and control flow: literals, names,
//! indexing, fields, tuples and arrays.

use super::dynlit::is_dynamic_array;
use super::ops::{has_float_literal, is_literal};
use super::{FnCx, Tv};
use crate::front::diagnostics::{ErrorKind, suggest};
use crate::front::items::Def;
use crate::front::types::{SurfaceType, named_type};
use crate::ir::{Literal, OpKind, Type};
use mad_grammar::ast::{Expr, ExprKind, Ident};
use mad_grammar::span::Span;

impl FnCx<'_, '_> {
    pub fn expr(&mut self, e: &Expr, expected: Option<&SurfaceType>) -> Tv {
        self.b.set_span(e.span);
        match &e.kind {
            ExprKind::Int(n) => match expected {
                Some(SurfaceType::F64) => self.lit(Literal::F64(*n as f64)),
                Some(SurfaceType::F32) => self.lit(Literal::F32(*n as f32)),
                _ => self.lit(Literal::I64(*n)),
            },
            ExprKind::Float(x) => match expected {
                Some(SurfaceType::F32) if x.single.is_infinite() => {
                    self.error(f32_overflow(), e.span);
                    self.poison()
                }
                Some(SurfaceType::F32) => self.lit(Literal::F32(x.single)),
                _ => self.lit(Literal::F64(x.value)),
            },
            ExprKind::Bool(b) => self.lit(Literal::Bool(*b)),
            ExprKind::Str(_) => {
                self.error(ErrorKind::StringValue, e.span);
                self.poison()
            }
            ExprKind::Path(p) => self.path_value(p, e.span),
            ExprKind::Binary { op, lhs, rhs } => self.binary_expr(*op, lhs, rhs, e.span, expected),
            ExprKind::Unary { op, operand } => self.unary_expr(*op, operand, e.span, expected),
            ExprKind::Cast { expr, ty } => self.cast_expr(expr, ty, e.span),
            ExprKind::Call { callee, args } => self.call(callee, args, e.span, expected),
            ExprKind::Index { base, indices } => {
                if let Some(tv) = self.try_mesh_read(base, indices, e.span) {
                    return tv;
                }
                let b = self.expr(base, None);
                if let Some(tv) = self.try_handle_index(&b, indices, e.span) {
                    return tv;
                }
                self.check_const_indices(&b.ty, indices);
                let idx = self.index_values(indices);
                self.b.set_span(e.span);
                self.index_tv(b, &idx, e.span)
            }
            ExprKind::Slice { base, lo, hi } => self.slice_expr(base, lo.as_deref(), hi.as_deref(), e.span),
            ExprKind::Field { base, name } => {
                let b = self.expr(base, None);
                if let SurfaceType::Stencil(_) = b.ty {
                    return self.handle_field(&b, name);
                }
                self.b.set_span(e.span);
                self.vec_field(b, &name.node, name.span).0
            }
            ExprKind::TupleField {
                base,
                index,
                index_span,
            } => {
                let b = self.expr(base, None);
                self.tuple_field(b, *index, *index_span)
            }
            ExprKind::Tuple(xs) => {
                if xs.is_empty() {
                    return self.unit();
                }
                let exp_items = match expected {
                    Some(SurfaceType::Tuple(items)) if items.len() == xs.len() => {
                        Some(items.clone())
                    }
                    _ => None,
                };
                let mut tys = Vec::new();
                let mut vals = Vec::new();
                for (i, x) in xs.iter().enumerate() {
                    let tv = self.expr(x, exp_items.as_ref().map(|it| &it[i]));
                    if let SurfaceType::Stencil(_) = tv.ty {
                        self.handle_escape(x.span);
                    }
                    tys.push(tv.ty);
                    vals.push(tv.v);
                }
                let ty = SurfaceType::Tuple(tys);
                self.b.set_span(e.span);
                let v = self.b.push1(OpKind::Tuple, vals, ty.ir_type());
                Tv { ty, v }
            }
            ExprKind::Array(xs) => self.array_literal(xs, e.span, expected),
            ExprKind::ArrayRepeat { value, count } => {
                self.array_repeat(value, count, e.span, expected)
            }
            ExprKind::Block(b) => self.block(b, expected),
            ExprKind::If { cond, then, else_ } => {
                self.if_expr(e.span, cond, then, else_.as_deref(), expected)
            }
            ExprKind::Error => self.poison(),
        }
    }

    pub fn lit(&mut self, l: Literal) -> Tv {
        let v = self.konst(l);
        Tv {
            ty: SurfaceType::from_scalar(l.kind()),
            v,
        }
    }

    /// Every name a misspelt name could have meant.
    pub fn candidate_names(&self) -> Vec<String> {
        let mut names = self.env.names();
        names.extend(self.g.items.visible_names(self.module));
        names.extend(super::builtins::BUILTINS.iter().map(|s| s.to_string()));
        names
    }

    pub fn unknown_name(&mut self, name: &str, span: Span) {
        let names = self.candidate_names();
        let suggestion = suggest(name, names.iter().map(String::as_str));
        self.error(
            ErrorKind::UnknownName {
                name: name.to_string(),
                suggestion,
            },
            span,
        );
    }

    fn path_value(&mut self, p: &[Ident], span: Span) -> Tv {
        if p.len() == 1
            && let Some(pos) = self.env.lookup(&p[0].node)
        {
            let l = self.env.get(pos);
            return Tv {
                ty: l.ty.clone(),
                v: l.val,
            };
        }
        let name = p
            .iter()
            .map(|i| i.node.as_str())
            .collect::<Vec<_>>()
            .join("::");
        let found = self.g.items.lookup_path(self.module, p).map(|defs| self.g.items.value_def(&defs));
        match found {
            Some(Err(candidates)) => {
                self.error(ErrorKind::AmbiguousName { name, candidates }, span);
                self.poison()
            }
            Some(Ok(def)) => match def {
                Def::Const(i) => self.const_use(i, span),
                Def::Mesh(i) => self.mesh_value(i, span),
                Def::Fn(_) => {
                    self.error(
                        ErrorKind::NotAValue {
                            what: format!("function `{name}`"),
                        },
                        span,
                    );
                    self.poison()
                }
                Def::Mod(_) => {
                    self.error(
                        ErrorKind::NotAValue {
                            what: format!("module `{name}`"),
                        },
                        span,
                    );
                    self.poison()
                }
            },
            None => {
                let last = &p[p.len() - 1].node;
                if p.len() == 1
                    && (super::builtins::BUILTINS.contains(&last.as_str())
                        || named_type(last).is_some())
                {
                    self.error(
                        ErrorKind::NotAValue {
                            what: format!("`{name}`"),
                        },
                        span,
                    );
                } else {
                    self.unknown_name(&name, span);
                }
                self.poison()
            }
        }
    }

    /// A use of a `const` item: its value, inlined.
    fn const_use(&mut self, idx: usize, span: Span) -> Tv {
        let ty = self.g.items.consts[idx].ty.clone();
        match self.g.const_value(idx) {
            Some(l) => {
                self.b.set_span(span);
                let v = self.konst(l);
                Tv { ty, v }
            }
            None => Tv {
                ty: SurfaceType::Error,
                v: self.poison().v,
            },
        }
    }

    pub fn index_values(&mut self, indices: &[Expr]) -> Vec<Tv> {
        let mut out = Vec::new();
        for i in indices {
            let tv = self.expr(i, Some(&SurfaceType::I64));
            if !tv.ty.compatible(&SurfaceType::I64) {
                self.error(
                    ErrorKind::BadIndex {
                        ty: "this value".into(),
                        detail: format!("an index must be i64, found {}", tv.ty),
                    },
                    i.span,
                );
                out.push(Tv {
                    ty: SurfaceType::Error,
                    v: tv.v,
                });
            } else {
                out.push(tv);
            }
        }
        out
    }

    /// Reports literal indices that are negative or past a static length.
    pub fn check_const_indices(&mut self, ty: &SurfaceType, indices: &[Expr]) {
        let mut t = ty.clone();
        let axes = ["row", "column", "third index", "fourth index"];
        for (axis, i) in indices.iter().enumerate() {
            let lit = match &i.kind {
                ExprKind::Int(n) => Some(*n),
                ExprKind::Unary {
                    op: mad_grammar::ast::UnOp::Neg,
                    operand,
                } => match operand.kind {
                    ExprKind::Int(n) => Some(-n),
                    _ => None,
                },
                _ => None,
            };
            if let Some(n) = lit {
                let bad = n < 0 || t.static_len().is_some_and(|len| n as u64 >= len);
                if bad {
                    // Named on the value indexed, and which index when there are several
                    // (`m[0, 2]` of a mat2: the column index 2, not "a vec2").
                    let which = if indices.len() > 1 { format!("{} ", axes[axis.min(3)]) } else { String::new() };
                    let detail = match t.static_len() {
                        Some(len) => format!("{which}index {n} is out of bounds for length {len}"),
                        None => format!("{which}index {n} is negative"),
                    };
                    self.error(
                        ErrorKind::BadIndex {
                            ty: ty.to_string(),
                            detail,
                        },
                        i.span,
                    );
                }
            }
            match t.index_once() {
                Some(n) => t = n,
                None => return,
            }
        }
    }

    /// `base[i, ...]` on lowered operands.
    /// The IR indices of `base[idx…]`: the written ones, and for a one-column matrix indexed
    /// by its row alone (`m[i]`, a single number) the column 0 as well.
    pub fn index_keys(&mut self, base: &SurfaceType, idx: &[Tv]) -> Vec<crate::ir::ValueId> {
        let mut keys: Vec<crate::ir::ValueId> = idx.iter().map(|t| t.v).collect();
        if matches!(base, SurfaceType::Mat(_, 1)) && idx.len() == 1 {
            keys.push(self.i64c(0));
        }
        keys
    }

    pub fn index_tv(&mut self, base: Tv, idx: &[Tv], span: Span) -> Tv {
        if base.ty.is_error() || idx.iter().any(|t| t.ty.is_error()) {
            return self.poison();
        }
        // A one-column matrix: `m[i]` and `m[i, 0]` are the number in row i.
        if matches!(base.ty, SurfaceType::Mat(_, 1)) && (idx.len() == 1 || idx.len() == 2) {
            let mut ops = vec![base.v];
            ops.extend(self.index_keys(&base.ty, idx));
            let v = self.b.push1(OpKind::Index, ops, SurfaceType::F64.ir_type());
            return Tv { ty: SurfaceType::F64, v };
        }
        let mut ty = base.ty.clone();
        for _ in idx {
            match ty.index_once() {
                Some(t) => ty = t,
                None => {
                    let detail = if ty == base.ty {
                        "only vectors, matrices, arrays and slices can be indexed".to_string()
                    } else {
                        format!("too many indices ({})", idx.len())
                    };
                    self.error(
                        ErrorKind::BadIndex {
                            ty: base.ty.to_string(),
                            detail,
                        },
                        span,
                    );
                    return self.poison();
                }
            }
        }
        let mut ops = vec![base.v];
        ops.extend(idx.iter().map(|t| t.v));
        let v = self.b.push1(OpKind::Index, ops, ty.ir_type());
        Tv { ty, v }
    }

    /// `v.x` on a vec: the value and the component's index.
    pub fn vec_field(&mut self, base: Tv, name: &str, span: Span) -> (Tv, Option<u64>) {
        if base.ty.is_error() {
            return (self.poison(), None);
        }
        let k = match name {
            "x" => Some(0u8),
            "y" => Some(1),
            "z" => Some(2),
            "w" => Some(3),
            _ => None,
        };
        match (&base.ty, k) {
            (SurfaceType::Vec(n), Some(k)) if k < *n => {
                let v = self
                    .b
                    .push1(OpKind::Extract(k as u64), vec![base.v], Type::F64);
                (
                    Tv {
                        ty: SurfaceType::F64,
                        v,
                    },
                    Some(k as u64),
                )
            }
            _ => {
                self.error(
                    ErrorKind::UnknownField {
                        field: name.to_string(),
                        ty: base.ty.to_string(),
                    },
                    span,
                );
                (self.poison(), None)
            }
        }
    }

    pub fn tuple_field(&mut self, base: Tv, i: u32, span: Span) -> Tv {
        if base.ty.is_error() {
            return self.poison();
        }
        match &base.ty {
            SurfaceType::Tuple(items) if (i as usize) < items.len() => {
                let ty = items[i as usize].clone();
                let v = self.b.push1(OpKind::TupleGet(i), vec![base.v], ty.ir_type());
                Tv { ty, v }
            }
            other => {
                self.error(
                    ErrorKind::UnknownField {
                        field: i.to_string(),
                        ty: other.to_string(),
                    },
                    span,
                );
                self.poison()
            }
        }
    }

    fn array_literal(&mut self, xs: &[Expr], span: Span, expected: Option<&SurfaceType>) -> Tv {
        if let Some(ty) = expected.filter(|t| is_dynamic_array(t)) {
            return self.dynamic_array_literal(xs, span, ty);
        }
        let elem_hint = expected.and_then(SurfaceType::as_array).map(|(t, _)| t);
        if xs.is_empty() {
            if let Some(SurfaceType::Array(t, 0)) = expected {
                let ty = SurfaceType::Array(t.clone(), 0);
                let v = self.zero(&ty);
                return Tv { ty, v };
            }
            self.error(
                ErrorKind::TypeMismatch {
                    expected: "an array with at least one element".into(),
                    found: "[]".into(),
                },
                span,
            );
            return self.poison();
        }
        // Non-literal elements first (literals have no effects), then literals adapt to them.
        let mut vals: Vec<Option<Tv>> = vec![None; xs.len()];
        let mut elem = elem_hint.clone();
        for (i, x) in xs.iter().enumerate() {
            if !is_literal(x) {
                let tv = self.expr(x, elem.as_ref());
                if elem.is_none() && !tv.ty.is_error() {
                    elem = Some(tv.ty.clone());
                }
                vals[i] = Some(tv);
            }
        }
        if elem.is_none() {
            elem = Some(if xs.iter().any(has_float_literal) {
                SurfaceType::F64
            } else {
                SurfaceType::I64
            });
        }
        let elem = elem.unwrap_or(SurfaceType::Error);
        let mut out = Vec::new();
        for (i, x) in xs.iter().enumerate() {
            let tv = match vals[i].take() {
                Some(tv) => tv,
                None => self.expr(x, Some(&elem)),
            };
            let tv = self.expect(tv, &elem, x.span);
            out.push(tv.v);
        }
        if !elem.is_array_element() {
            self.error(
                ErrorKind::BadElementType {
                    ty: elem.to_string(),
                },
                span,
            );
            return self.poison();
        }
        if let SurfaceType::Stencil(_) = elem {
            self.handle_escape(span);
            return self.poison();
        }
        let ty = SurfaceType::array(elem, xs.len() as u64);
        self.b.set_span(span);
        let v = self.b.push1(OpKind::Pack, out, ty.ir_type());
        Tv { ty, v }
    }

    fn array_repeat(
        &mut self,
        value: &Expr,
        count: &Expr,
        span: Span,
        expected: Option<&SurfaceType>,
    ) -> Tv {
        let n = self.const_i64(count);
        if let Some(ty) = expected.filter(|t| is_dynamic_array(t)) {
            return self.dynamic_array_repeat(value, n, span, ty);
        }
        let elem_hint = expected.and_then(SurfaceType::as_array).map(|(t, _)| t);
        let tv = self.expr(value, elem_hint.as_ref());
        let Some(n) = n else { return self.poison() };
        if tv.ty.is_error() {
            return self.poison();
        }
        if !tv.ty.is_array_element() || matches!(tv.ty, SurfaceType::Stencil(_)) {
            self.error(
                ErrorKind::BadElementType {
                    ty: tv.ty.to_string(),
                },
                value.span,
            );
            return self.poison();
        }
        let ty = SurfaceType::array(tv.ty.clone(), n);
        self.b.set_span(span);
        let v = if tv.ty.scalar().is_some() {
            let c = self.i64c(n as i64);
            self.b.push1(OpKind::Full, vec![tv.v, c], ty.ir_type())
        } else if n == 0 {
            self.zero(&ty)
        } else {
            self.b
                .push1(OpKind::Pack, vec![tv.v; n as usize], ty.ir_type())
        };
        Tv { ty, v }
    }

    /// A compile-time non-negative integer (array lengths).
    pub fn const_i64(&mut self, e: &Expr) -> Option<u64> {
        let module = self.module;
        let file = self.file;
        match self
            .g
            .eval_const(e, Some(crate::ir::ScalarKind::I64), file, module)
        {
            Some(Literal::I64(n)) if n >= 0 => Some(n as u64),
            Some(other) => {
                let found = match other {
                    Literal::I64(n) => format!("{n}"),
                    Literal::F64(_) => "an f64".into(),
                    Literal::F32(_) => "an f32".into(),
                    Literal::Bool(_) => "a bool".into(),
                };
                self.error(
                    ErrorKind::TypeMismatch {
                        expected: "a non-negative i64 length".into(),
                        found,
                    },
                    e.span,
                );
                None
            }
            None => None,
        }
    }
}

/// A float literal in an `f32` context whose value is beyond `f32`'s range (rounds to ±∞): an
/// error, as a literal that overflows `f64` is (§2).
pub(crate) fn f32_overflow() -> ErrorKind {
    // The literal is named by the span: its f64 value, printed, can be a different literal
    // (one just above f32's largest that f64 rounds below the halfway point).
    ErrorKind::TypeMismatch {
        expected: "an f32 literal (at most about 3.4028235e38 in magnitude)".into(),
        found: "a literal that rounds to infinity in f32".into(),
    }
}
