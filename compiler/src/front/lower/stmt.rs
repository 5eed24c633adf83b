//! Blocks and statements: `let` with patterns, assignment to mutable variables
//! and to their elements (`v[i] = e`, `m[i, j] += e`, `v.x = e`, `t.0 = e`), which
//! rebuilds the value with `Insert` (tensors are values).

use super::control::{self, Exits};
use super::{FnCx, Tv};
use crate::front::diagnostics::ErrorKind;
use crate::front::types::SurfaceType;
use crate::ir::{OpKind, ValueId};
use mad_grammar::ast::{BinOp, Block, Expr, ExprKind, Pattern, Stmt, StmtKind};
use mad_grammar::span::Span;

/// One step from a variable to the assigned element.
enum Proj<'x> {
    Index(&'x [Expr], Span),
    Field(&'x str, Span),
    Tuple(u32, Span),
}

impl FnCx<'_, '_> {
    pub fn block(&mut self, blk: &Block, expected: Option<&SurfaceType>) -> Tv {
        self.env.push();
        let r = self.stmts(&blk.stmts, blk.tail.as_deref(), expected);
        self.env.pop();
        r
    }

    /// Statements then the tail; after a statement that may exit, the rest is guarded.
    pub fn stmts(
        &mut self,
        stmts: &[Stmt],
        tail: Option<&Expr>,
        expected: Option<&SurfaceType>,
    ) -> Tv {
        for (i, s) in stmts.iter().enumerate() {
            self.stmt(s);
            let rest = &stmts[i + 1..];
            if rest.is_empty() && tail.is_none() {
                break;
            }
            let mut ex = Exits::default();
            control::exits_stmt(s, 0, &mut ex);
            if ex.any() {
                return self.guarded_rest(rest, tail, expected);
            }
        }
        match tail {
            Some(e) => self.expr(e, expected),
            None => self.unit(),
        }
    }

    pub fn stmt(&mut self, s: &Stmt) {
        self.b.set_span(s.span);
        match &s.kind {
            StmtKind::Let {
                pat,
                mutable,
                ty,
                value,
            } => {
                let declared = ty.as_ref().map(|t| self.g.items.resolve_type(t, self.file));
                let tv = self.expr(value, declared.as_ref());
                let tv = match &declared {
                    Some(d) => self.expect(tv, d, value.span),
                    None => tv,
                };
                if matches!(tv.ty, SurfaceType::Str) {
                    self.error(ErrorKind::StringValue, value.span);
                }
                self.duplicate_bindings(pat);
                self.bind_pattern(pat, tv, *mutable);
            }
            StmtKind::Assign { place, op, value } => self.assign(place, *op, value),
            StmtKind::Expr(e) => {
                self.expr(e, None);
            }
            StmtKind::For { var, lo, hi, body } => self.for_loop(var, lo, hi, body),
            StmtKind::While { cond, body } => self.while_loop(cond, body),
            StmtKind::Break => self.break_or_continue(true, s.span),
            StmtKind::Continue => self.break_or_continue(false, s.span),
            StmtKind::Return(e) => self.return_stmt(e.as_ref(), s.span),
            StmtKind::Error => {}
        }
    }

    /// E0111 for a name a pattern binds more than once (`let (a, a) = t;`): the later
    /// binding would hide the earlier one silently.
    fn duplicate_bindings(&mut self, pat: &Pattern) {
        fn names<'p>(pat: &'p Pattern, out: &mut Vec<&'p mad_grammar::ast::Ident>) {
            match pat {
                Pattern::Name(n) => out.push(n),
                Pattern::Wild(_) => {}
                Pattern::Tuple(pats, _) => pats.iter().for_each(|p| names(p, out)),
            }
        }
        let mut all = Vec::new();
        names(pat, &mut all);
        self.report_duplicates(all.iter().map(|n| (n.node.as_str(), n.span)));
    }

    /// E0111 for every name of `names` (in source order) that an earlier one repeats.
    pub(super) fn report_duplicates<'n>(&mut self, names: impl IntoIterator<Item = (&'n str, Span)>) {
        let mut seen: Vec<(&str, Span)> = Vec::new();
        for (name, span) in names {
            match seen.iter().find(|(n, _)| *n == name) {
                Some(&(_, first)) => self.error(ErrorKind::Duplicate { name: name.to_string(), first }, span),
                None => seen.push((name, span)),
            }
        }
    }

    fn bind_pattern(&mut self, pat: &Pattern, tv: Tv, mutable: bool) {
        match pat {
            Pattern::Name(n) => {
                self.declare(&n.node, tv.ty, mutable, tv.v, n.span);
            }
            Pattern::Wild(_) => {}
            Pattern::Tuple(pats, span) => {
                let items = match &tv.ty {
                    SurfaceType::Tuple(items) if items.len() == pats.len() => items.clone(),
                    SurfaceType::Error => vec![SurfaceType::Error; pats.len()],
                    other => {
                        let expected = format!("a tuple of {} elements", pats.len());
                        self.error(
                            ErrorKind::PatternMismatch {
                                expected,
                                found: other.to_string(),
                            },
                            *span,
                        );
                        vec![SurfaceType::Error; pats.len()]
                    }
                };
                for (i, (p, ty)) in pats.iter().zip(items).enumerate() {
                    let v = if ty.is_error() {
                        self.poison().v
                    } else {
                        self.b
                            .push1(OpKind::TupleGet(i as u32), vec![tv.v], ty.ir_type())
                    };
                    self.bind_pattern(p, Tv { ty, v }, mutable);
                }
            }
        }
    }

    fn assign(&mut self, place: &Expr, op: Option<BinOp>, value: &Expr) {
        // Split the place into a root variable and projections.
        let mut projs: Vec<Proj> = Vec::new();
        let mut cur = place;
        let root = loop {
            match &cur.kind {
                ExprKind::Index { base, indices } => {
                    projs.push(Proj::Index(indices, cur.span));
                    cur = base;
                }
                ExprKind::Field { base, name } => {
                    projs.push(Proj::Field(&name.node, name.span));
                    cur = base;
                }
                ExprKind::TupleField {
                    base,
                    index,
                    index_span,
                } => {
                    projs.push(Proj::Tuple(*index, *index_span));
                    cur = base;
                }
                ExprKind::Path(p) if p.len() == 1 => break &p[0],
                _ => {
                    self.error(ErrorKind::BadAssignTarget, place.span);
                    self.expr(value, None);
                    return;
                }
            }
        };
        projs.reverse();
        let Some(pos) = self.env.lookup(&root.node) else {
            // A constant, `param` or mesh field: read-only. (Anything else is reported by
            // reading the place: an unknown name, a function.)
            match self.global_role(root) {
                Some(what) => self.error(
                    ErrorKind::AssignImmutable {
                        name: root.node.clone(),
                        declared: None,
                        what,
                    },
                    place.span,
                ),
                None => {
                    self.expr(place, None);
                }
            }
            self.expr(value, None);
            return;
        };
        let local = self.env.get(pos).clone();
        if !local.mutable {
            let declared = Some(local.span).filter(|s| *s != Span::default());
            self.error(
                ErrorKind::AssignImmutable {
                    name: root.node.clone(),
                    declared,
                    what: local.role,
                },
                place.span,
            );
            if matches!(local.ty, SurfaceType::Stencil(_)) {
                // An element handle has no parts to write: reading `e.v0` as a place
                // would only add errors about it.
                self.expr(value, None);
                return;
            }
        }
        // Read down the projections, remembering each intermediate value.
        let mut chain: Vec<Tv> = vec![Tv {
            ty: local.ty.clone(),
            v: local.val,
        }];
        let mut keys: Vec<Vec<ValueId>> = Vec::new();
        for p in &projs {
            let base = chain.last().cloned().expect("chain starts with the root");
            let (tv, key) = match p {
                Proj::Index(idx, span) => {
                    let idx_vals = self.index_values(idx);
                    self.b.set_span(*span);
                    let key = self.index_keys(&base.ty, &idx_vals);
                    let tv = self.index_tv(base, &idx_vals, *span);
                    (tv, key)
                }
                Proj::Field(name, span) => {
                    let (tv, k) = self.vec_field(base, name, *span);
                    let key = k.map(|k| vec![self.i64c(k as i64)]).unwrap_or_default();
                    (tv, key)
                }
                Proj::Tuple(i, span) => (self.tuple_field(base, *i, *span), vec![]),
            };
            chain.push(tv);
            keys.push(key);
        }
        let target = chain.last().cloned().expect("chain starts with the root");
        let mut new = match op {
            None => {
                let tv = self.expr(value, Some(&target.ty));
                self.expect(tv, &target.ty, value.span)
            }
            Some(op) => {
                let r = self.binary_with_lhs(op, target.clone(), value, place.span.to(value.span));
                self.expect(r, &target.ty, value.span)
            }
        };
        // Write back up the chain.
        for (k, p) in projs.iter().enumerate().rev() {
            let base = chain[k].clone();
            if base.ty.is_error() || new.ty.is_error() {
                new = Tv {
                    ty: base.ty,
                    v: base.v,
                };
                continue;
            }
            let v = match p {
                Proj::Index(_, span) | Proj::Field(_, span) => {
                    let mut ops = vec![base.v, new.v];
                    ops.extend(keys[k].iter().copied());
                    // A write out of bounds points at the place written (`m[i]`).
                    self.b.set_span(*span);
                    self.b.push1(OpKind::Insert, ops, base.ty.ir_type())
                }
                Proj::Tuple(i, _) => {
                    let items = match &base.ty {
                        SurfaceType::Tuple(items) => items.clone(),
                        _ => {
                            new = base;
                            continue;
                        }
                    };
                    let mut vals = Vec::new();
                    for (j, t) in items.iter().enumerate() {
                        if j == *i as usize {
                            vals.push(new.v);
                        } else {
                            vals.push(self.b.push1(
                                OpKind::TupleGet(j as u32),
                                vec![base.v],
                                t.ir_type(),
                            ));
                        }
                    }
                    self.b.push1(OpKind::Tuple, vals, base.ty.ir_type())
                }
            };
            new = Tv { ty: base.ty, v };
        }
        if local.mutable {
            self.env.set(pos, new.v);
        }
    }
}

impl FnCx<'_, '_> {
    /// What a name that is not a local refers to, if it is something a body reads but
    /// cannot write: a constant, a `param`, or a mesh field.
    fn global_role(&self, name: &mad_grammar::ast::Ident) -> Option<&'static str> {
        use crate::front::items::{Def, MeshItemKind};
        let defs = self.g.items.lookup_path(self.module, std::slice::from_ref(name))?;
        match defs.first()? {
            Def::Const(_) => Some("constant"),
            Def::Mesh(i) => match self.g.items.mesh[*i].kind {
                MeshItemKind::Dof { .. } => Some("dof field"),
                // A `state` is a data field that an `update` computes.
                MeshItemKind::Data { .. } if matches!(self.g.items.mesh[*i].item.kind, mad_grammar::ast::ItemKind::State { .. }) => {
                    Some("state field")
                }
                MeshItemKind::Data { .. } => Some("data field"),
                MeshItemKind::Param { .. } => Some("param"),
                MeshItemKind::Energy | MeshItemKind::Residual => None,
            },
            Def::Fn(_) | Def::Mod(_) => None,
        }
    }
}
