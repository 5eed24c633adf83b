//! Calls: user and standard-library functions (with overload resolution),
//! vec/mat constructors (`vec3(..)`, `mat2(..)`, `mat2::cols(..)`,
//! `mat2::rows(..)`, `mat3::identity()`), and dispatch to builtins.

use super::ops::is_literal;
use super::{FnCx, Tv};
use crate::front::diagnostics::ErrorKind;
use crate::front::items::Def;
use crate::front::types::{SurfaceType, fixed_size_error, vec_mat_type};
use crate::ir::{Literal, OpKind};
use mad_grammar::ast::{Expr, ExprKind};
use mad_grammar::span::Span;

/// How well a literal argument fits a parameter type: `Some(0)` exactly, `Some(1)`
/// after adapting an integer literal to a float, `None` not at all.
fn literal_fit(e: &Expr, t: &SurfaceType) -> Option<u32> {
    let float = super::ops::has_float_literal(e);
    match t {
        SurfaceType::I64 if !float => Some(0),
        SurfaceType::F64 if float => Some(0),
        SurfaceType::F64 | SurfaceType::F32 => Some(1),
        SurfaceType::Error => Some(0),
        _ => None,
    }
}

impl FnCx<'_, '_> {
    pub fn call(
        &mut self,
        callee: &Expr,
        args: &[Expr],
        span: Span,
        expected: Option<&SurfaceType>,
    ) -> Tv {
        let path = match &callee.kind {
            ExprKind::Path(p) => p,
            ExprKind::Call {
                callee: op,
                args: op_args,
            } if matches!(&op.kind, ExprKind::Path(p) if p.len() == 1 && self.is_diff_operator(&p[0].node)) =>
            {
                let ExprKind::Path(p) = &op.kind else {
                    return self.poison();
                };
                return self.diff_call(&p[0].node, op_args, callee.span, args, span);
            }
            ExprKind::Call { .. } => {
                let c = self.expr(callee, None);
                self.lower_args_for_errors(args);
                if !c.ty.is_error() {
                    self.error(
                        ErrorKind::NotCallable {
                            what: format!("a value of type {}", c.ty),
                        },
                        callee.span,
                    );
                }
                return self.poison();
            }
            _ => {
                let c = self.expr(callee, None);
                self.lower_args_for_errors(args);
                if !c.ty.is_error() {
                    self.error(
                        ErrorKind::NotCallable {
                            what: format!("a value of type {}", c.ty),
                        },
                        callee.span,
                    );
                }
                return self.poison();
            }
        };
        let name = path
            .iter()
            .map(|i| i.node.as_str())
            .collect::<Vec<_>>()
            .join("::");
        if path.len() == 1 {
            let n = path[0].node.as_str();
            if let Some(pos) = self.env.lookup(n) {
                let ty = self.env.get(pos).ty.clone();
                self.lower_args_for_errors(args);
                self.error(
                    ErrorKind::NotCallable {
                        what: format!("`{n}` (a variable of type {ty})"),
                    },
                    callee.span,
                );
                return self.poison();
            }
            if let Some(defs) = self.g.items.lookup_local_items(self.module, n) {
                // A `use` of a library function keeps the prelude's overload set
                // (the builtin `transpose` also takes a `matrix`).
                let library = defs
                    .iter()
                    .all(|d| matches!(d, Def::Fn(f) if !self.g.items.fns[*f].user));
                if !(library && super::builtins::BUILTINS.contains(&n)) {
                    return self.call_defs(&defs, &name, args, span, callee.span);
                }
            }
            if super::builtins::DIFF_OPERATORS.contains(&n) {
                let detail = format!("`{n}(f)` is a function: call it, as in `{n}(f)(x)`");
                self.error(
                    ErrorKind::NotDiffTarget {
                        op: n.to_string(),
                        detail,
                    },
                    span,
                );
                return self.poison();
            }
            if super::builtins::BUILTINS.contains(&n) {
                return self.builtin(n, args, span, callee.span, expected);
            }
            if let Some(t) = vec_mat_type(n) {
                return self.construct(&t, "", args, span, callee.span);
            }
            if let Some(defs) = self.g.items.lookup_prelude(n) {
                return self.call_defs(&defs, &name, args, span, callee.span);
            }
            self.lower_args_for_errors(args);
            self.unknown_callee(n, callee.span);
            return self.poison();
        }
        if path.len() == 2
            && let Some(t @ SurfaceType::Mat(..)) = vec_mat_type(&path[0].node)
        {
            return self.construct(&t, &path[1].node, args, span, path[1].span);
        }
        if path.len() == 2 && fixed_size_error(&path[0].node).is_some() {
            self.lower_args_for_errors(args);
            self.unknown_callee(&path[0].node, path[0].span);
            return self.poison();
        }
        match self.g.items.lookup_path(self.module, path) {
            Some(defs) => self.call_defs(&defs, &name, args, span, callee.span),
            None => {
                self.lower_args_for_errors(args);
                self.unknown_name(&name, callee.span);
                self.poison()
            }
        }
    }

    /// An unknown name in the place of a function: a vector or matrix constructor of a size
    /// there is none of (`vec17(...)`) says which sizes there are.
    fn unknown_callee(&mut self, name: &str, span: Span) {
        match fixed_size_error(name) {
            Some(detail) => self.error(ErrorKind::FixedSizeBound { detail }, span),
            None => self.unknown_name(name, span),
        }
    }

    /// Lowers arguments only to report the errors inside them.
    pub fn lower_args_for_errors(&mut self, args: &[Expr]) {
        for a in args {
            if !matches!(a.kind, ExprKind::Str(_)) {
                self.expr(a, None);
            }
        }
    }

    pub(super) fn call_defs(
        &mut self,
        defs: &[Def],
        name: &str,
        args: &[Expr],
        span: Span,
        callee_span: Span,
    ) -> Tv {
        let fns: Vec<usize> = defs
            .iter()
            .filter_map(|d| match d {
                Def::Fn(i) => Some(*i),
                _ => None,
            })
            .collect();
        if fns.is_empty() {
            self.lower_args_for_errors(args);
            let what = match defs.first() {
                Some(Def::Const(_)) => format!("constant `{name}`"),
                Some(Def::Mod(_)) => format!("module `{name}`"),
                _ => format!("`{name}`"),
            };
            self.error(ErrorKind::NotCallable { what }, callee_span);
            return self.poison();
        }
        let chosen = if fns.len() == 1 {
            let f = fns[0];
            let params = self.g.items.fns[f].params.clone();
            if params.len() != args.len() {
                self.lower_args_for_errors(args);
                self.error(
                    ErrorKind::ArgCount {
                        name: name.to_string(),
                        expected: params.len().to_string(),
                        found: args.len(),
                    },
                    span,
                );
                return self.poison();
            }
            let mut vals = Vec::new();
            let mut poisoned = false;
            for (a, p) in args.iter().zip(&params) {
                let tv = self.expr(a, Some(p));
                poisoned |= tv.ty.is_error();
                let tv = self.expect(tv, p, a.span);
                vals.push(tv.v);
            }
            if poisoned {
                return self.poison();
            }
            (f, vals)
        } else {
            match self.resolve_overload(&fns, name, args, span) {
                Some(c) => c,
                None => return self.poison(),
            }
        };
        let (f, vals) = chosen;
        let ret = self.g.items.fns[f].ret.clone();
        let fref = self.g.fref(f);
        self.b.set_span(span);
        let v = self.b.push1(OpKind::Call(fref), vals, ret.ir_type());
        Tv { ty: ret, v }
    }

    /// Picks the overload whose parameter types match; literal arguments adapt.
    fn resolve_overload(
        &mut self,
        fns: &[usize],
        name: &str,
        args: &[Expr],
        span: Span,
    ) -> Option<(usize, Vec<crate::ir::ValueId>)> {
        let params: Vec<Vec<SurfaceType>> = fns
            .iter()
            .map(|&f| self.g.items.fns[f].params.clone())
            .collect();
        let descs = |cx: &Self| -> Vec<String> {
            fns.iter()
                .map(|&f| cx.g.items.fns[f].description())
                .collect()
        };
        let (k, vals) = self.pick_overload(&params, &descs, name, args, span)?;
        Some((fns[k], vals))
    }

    /// Picks among candidate parameter lists the one the arguments match; literal
    /// arguments adapt. Returns its position and the lowered arguments. `descs` describes
    /// the candidates for an error (the same description twice is listed once: the
    /// overloads of a size-generic function share theirs).
    pub fn pick_overload(
        &mut self,
        cands: &[Vec<SurfaceType>],
        descs: &dyn Fn(&Self) -> Vec<String>,
        name: &str,
        args: &[Expr],
        span: Span,
    ) -> Option<(usize, Vec<crate::ir::ValueId>)> {
        let mut pre: Vec<Option<Tv>> = Vec::new();
        for a in args {
            pre.push(if is_literal(a) {
                None
            } else {
                Some(self.expr(a, None))
            });
        }
        if pre.iter().flatten().any(|t| t.ty.is_error()) {
            return None;
        }
        // Step 1: literals at their default types; step 2: literals adapt. The first step
        // with exactly one match picks it; more than one match is ambiguous.
        let mut exact = Vec::new();
        let mut adapted = Vec::new();
        for (f, params) in cands.iter().enumerate() {
            if params.len() != args.len() {
                continue;
            }
            let mut cost = 0;
            let mut ok = true;
            for ((a, p), tv) in args.iter().zip(params).zip(&pre) {
                match tv {
                    Some(tv) => ok &= tv.ty.compatible(p),
                    None => match literal_fit(a, p) {
                        Some(c) => cost += c,
                        None => ok = false,
                    },
                }
            }
            if ok {
                if cost == 0 {
                    exact.push(f)
                } else {
                    adapted.push(f)
                }
            }
        }
        let arg_tys: Vec<String> = pre
            .iter()
            .zip(args)
            .map(|(t, a)| match t {
                Some(t) => t.ty.to_string(),
                None if super::ops::has_float_literal(a) => "f64".into(),
                None => "i64".into(),
            })
            .collect();
        let matches = if exact.is_empty() { adapted } else { exact };
        if matches.len() > 1 {
            let all = descs(self);
            let mut candidates: Vec<String> = matches.iter().map(|&f| all[f].clone()).collect();
            candidates.sort();
            candidates.dedup();
            self.error(
                ErrorKind::AmbiguousCall {
                    name: name.to_string(),
                    args: arg_tys.join(", "),
                    candidates,
                },
                span,
            );
            return None;
        }
        let Some(&f) = matches.first() else {
            let mut candidates = descs(self);
            candidates.sort();
            candidates.dedup();
            self.error(
                ErrorKind::NoOverload {
                    name: name.to_string(),
                    args: arg_tys.join(", "),
                    candidates,
                },
                span,
            );
            return None;
        };
        let params = cands[f].clone();
        let mut vals = Vec::new();
        for ((a, p), tv) in args.iter().zip(&params).zip(pre) {
            vals.push(match tv {
                Some(tv) => tv.v,
                None => self.expr(a, Some(p)).v,
            });
        }
        Some((f, vals))
    }

    /// Lowers arguments that must all be `ty`; `None` after an error.
    fn typed_args(&mut self, args: &[Expr], ty: &SurfaceType) -> Option<Vec<crate::ir::ValueId>> {
        let mut vals = Vec::new();
        let mut ok = true;
        for a in args {
            let tv = self.expr(a, Some(ty));
            ok &= !tv.ty.is_error();
            if !tv.ty.compatible(ty) {
                ok = false;
            }
            let tv = self.expect(tv, ty, a.span);
            vals.push(tv.v);
        }
        ok.then_some(vals)
    }

    /// `vec3(a, b, c)`, `mat2(a, b, c, d)`, `mat2::cols(..)`, `mat2::rows(..)`, `mat3::identity()`.
    fn construct(
        &mut self,
        t: &SurfaceType,
        ctor: &str,
        args: &[Expr],
        span: Span,
        name_span: Span,
    ) -> Tv {
        let count_err = |cx: &mut Self, n: usize| {
            cx.lower_args_for_errors(args);
            let name = if ctor.is_empty() {
                t.to_string()
            } else {
                format!("{t}::{ctor}")
            };
            cx.error(
                ErrorKind::ArgCount {
                    name,
                    expected: n.to_string(),
                    found: args.len(),
                },
                span,
            );
            cx.poison()
        };
        match (t, ctor) {
            (SurfaceType::Vec(n), "") => {
                if args.len() != *n as usize {
                    return count_err(self, *n as usize);
                }
                let Some(vals) = self.typed_args(args, &SurfaceType::F64) else {
                    return self.poison();
                };
                self.b.set_span(span);
                let v = self.b.push1(OpKind::Pack, vals, t.ir_type());
                Tv { ty: t.clone(), v }
            }
            (SurfaceType::Mat(r, c), "") => {
                let (r, c) = (*r as usize, *c as usize);
                if args.len() != r * c {
                    return count_err(self, r * c);
                }
                let Some(vals) = self.typed_args(args, &SurfaceType::F64) else {
                    return self.poison();
                };
                self.b.set_span(span);
                let row_ty = SurfaceType::Array(Box::new(SurfaceType::F64), c as u64).ir_type();
                let rows: Vec<_> = vals
                    .chunks(c)
                    .map(|ch| self.b.push1(OpKind::Pack, ch.to_vec(), row_ty.clone()))
                    .collect();
                let v = self.b.push1(OpKind::Pack, rows, t.ir_type());
                Tv { ty: t.clone(), v }
            }
            (SurfaceType::Mat(r, c), "rows" | "cols") => {
                let rows = ctor == "rows";
                let (n, len) = if rows { (*r, *c) } else { (*c, *r) };
                if args.len() != n as usize {
                    return count_err(self, n as usize);
                }
                let part = if len >= 2 {
                    SurfaceType::Vec(len)
                } else {
                    SurfaceType::F64
                };
                let Some(vals) = self.typed_args(args, &part) else {
                    return self.poison();
                };
                self.b.set_span(span);
                let packed_ty = if len >= 2 {
                    SurfaceType::Mat(n, len).ir_type()
                } else {
                    SurfaceType::Array(Box::new(SurfaceType::F64), n as u64).ir_type()
                };
                let mut v = self.b.push1(OpKind::Pack, vals, packed_ty);
                if len < 2 {
                    // One-element rows or columns: make the packed numbers a `[n, 1]` matrix.
                    let ones: Vec<_> = (0..n)
                        .map(|i| {
                            let idx = self.i64c(i as i64);
                            let x = self
                                .b
                                .push1(OpKind::Index, vec![v, idx], crate::ir::Type::F64);
                            self.b.push1(
                                OpKind::Pack,
                                vec![x],
                                SurfaceType::Array(Box::new(SurfaceType::F64), 1).ir_type(),
                            )
                        })
                        .collect();
                    v = self
                        .b
                        .push1(OpKind::Pack, ones, SurfaceType::Mat(n, 1).ir_type());
                }
                if !rows {
                    v = self.b.push1(OpKind::Transpose, vec![v], t.ir_type());
                }
                Tv { ty: t.clone(), v }
            }
            (SurfaceType::Mat(r, c), "identity") => {
                if !args.is_empty() {
                    return count_err(self, 0);
                }
                self.b.set_span(span);
                let (r, c) = (*r as usize, *c as usize);
                let row_ty = SurfaceType::Array(Box::new(SurfaceType::F64), c as u64).ir_type();
                let mut rows = Vec::new();
                for i in 0..r {
                    let xs: Vec<_> = (0..c)
                        .map(|j| self.konst(Literal::F64(if i == j { 1.0 } else { 0.0 })))
                        .collect();
                    rows.push(self.b.push1(OpKind::Pack, xs, row_ty.clone()));
                }
                let v = self.b.push1(OpKind::Pack, rows, t.ir_type());
                Tv { ty: t.clone(), v }
            }
            _ => {
                self.lower_args_for_errors(args);
                let name = format!("{t}::{ctor}");
                let names = ["rows", "cols", "identity"];
                let suggestion = crate::front::diagnostics::suggest(ctor, names);
                self.error(ErrorKind::UnknownName { name, suggestion }, name_span);
                self.poison()
            }
        }
    }
}
