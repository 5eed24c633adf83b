//! Inside energy and residual bodies: the element `e`, its vertex handles
//! (`e.v0`, `e.nbrs[i]`, a diamond's faces `e.f0`, `e.f1`), and reads of mesh fields (`x[e.v0]`, `rest[e]`, `k`).
//!
//! A term is lowered to an IR function whose parameters are the values it reads,
//! gathered per element by the runtime: one parameter per distinct read, in the
//! order of first use, described by [`TermInput`]. Handles have no run-time
//! value; they are tracked at compile time.

use super::{FnCx, Tv};
use crate::front::diagnostics::ErrorKind;
use crate::front::items::{Def, MeshItemKind};
use crate::front::types::{StencilKind, SurfaceType};
use crate::ir::{OpKind, ValueId};
use mad_grammar::ast::{Expr, ExprKind};
use mad_grammar::span::Span;
use std::collections::HashMap;

/// Where a gathered input is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputAt {
    /// Per-element data of the term's own stencil (`rest[e]`).
    Element,
    /// A vertex field at vertex `v<k>` of the element (`x[e.v1]`).
    Vertex(u8),
    /// A face field at face `f<k>` of a diamond (`u[e.f1]`).
    Face(u8),
    /// A vertex field at every one-ring neighbour, as a slice (`x[e.nbrs[i]]`).
    Neighbours,
    /// The number of one-ring neighbours (`len(e.nbrs)`), an `i64`.
    NeighbourCount,
    /// A `param`.
    Param,
}

/// One parameter of a lowered term function.
#[derive(Clone, Debug, PartialEq)]
pub struct TermInput {
    /// The dof, data or param name (empty for [`InputAt::NeighbourCount`]).
    pub field: String,
    pub at: InputAt,
    /// The parameter's type (`[T]` for [`InputAt::Neighbours`]).
    pub ty: SurfaceType,
}

/// A compile-time element handle.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Handle {
    Elem,
    Vertex(u8),
    Face(u8),
    Nbrs,
    Nbr(ValueId),
}

/// The state of a term body being lowered.
#[derive(Debug)]
pub struct TermCx {
    pub stencil: StencilKind,
    handles: HashMap<ValueId, Handle>,
    pub inputs: Vec<TermInput>,
    /// The parameter value of each input, in the same order.
    pub input_values: Vec<ValueId>,
}

impl TermCx {
    pub fn new(stencil: StencilKind) -> TermCx {
        TermCx {
            stencil,
            handles: HashMap::new(),
            inputs: Vec::new(),
            input_values: Vec::new(),
        }
    }
}

impl FnCx<'_, '_> {
    /// Declares the element variable of a term body.
    pub fn declare_element(&mut self, name: &str, stencil: StencilKind, span: Span) {
        let v = self.i64c(0);
        if let Some(t) = &mut self.term {
            t.handles.insert(v, Handle::Elem);
        }
        let pos = self.declare(name, SurfaceType::Stencil(stencil), false, v, span);
        self.set_role(pos, "element handle");
    }

    fn handle_of(&self, v: ValueId) -> Option<Handle> {
        self.term.as_ref()?.handles.get(&v).copied()
    }

    fn new_handle(&mut self, h: Handle, ty: SurfaceType) -> Tv {
        let v = self.i64c(0);
        if let Some(t) = &mut self.term {
            t.handles.insert(v, h);
        }
        Tv { ty, v }
    }

    pub fn handle_escape(&mut self, span: Span) {
        let detail = "an element handle can only index a dof or data field".to_string();
        self.error(ErrorKind::HandleMisuse { detail }, span);
    }

    /// The parameter for a gathered input (created on first use).
    fn input(&mut self, field: &str, at: InputAt, ty: SurfaceType) -> ValueId {
        let term = self
            .term
            .as_ref()
            .expect("inputs are only read inside terms");
        if let Some(i) = term
            .inputs
            .iter()
            .position(|x| x.field == field && x.at == at)
        {
            return term.input_values[i];
        }
        let v = self.b.func.new_value(ty.ir_type());
        let term = self.term.as_mut().expect("inside a term");
        term.inputs.push(TermInput {
            field: field.to_string(),
            at,
            ty,
        });
        term.input_values.push(v);
        v
    }

    /// `e.v0`, `e.nbrs`, `e.f0`.
    pub fn handle_field(&mut self, base: &Tv, name: &mad_grammar::ast::Ident) -> Tv {
        let h = self.handle_of(base.v);
        let SurfaceType::Stencil(kind) = base.ty else {
            return self.poison();
        };
        if h == Some(Handle::Elem) {
            if let Some(k) = name
                .node
                .strip_prefix('v')
                .and_then(|d| d.parse::<u8>().ok())
                && (k as usize) < kind.vertex_count()
                && name.node.len() == 2
            {
                return self
                    .new_handle(Handle::Vertex(k), SurfaceType::Stencil(StencilKind::Vertex));
            }
            if kind == StencilKind::Diamond && (name.node == "f0" || name.node == "f1") {
                let k = if name.node == "f0" { 0 } else { 1 };
                return self.new_handle(Handle::Face(k), SurfaceType::Stencil(StencilKind::Face));
            }
            if name.node == "nbrs" && kind == StencilKind::Ring {
                let ty = SurfaceType::Slice(Box::new(SurfaceType::Stencil(StencilKind::Vertex)));
                return self.new_handle(Handle::Nbrs, ty);
            }
        }
        self.error(
            ErrorKind::UnknownField {
                field: name.node.clone(),
                ty: base.ty.to_string(),
            },
            name.span,
        );
        self.poison()
    }

    /// `e.nbrs[i]`.
    pub fn try_handle_index(&mut self, base: &Tv, indices: &[Expr], span: Span) -> Option<Tv> {
        if self.handle_of(base.v) != Some(Handle::Nbrs) {
            return None;
        }
        let idx = self.index_values(indices);
        if idx.len() != 1 {
            self.error(
                ErrorKind::BadIndex {
                    ty: base.ty.to_string(),
                    detail: "expected one index".into(),
                },
                span,
            );
            return Some(self.poison());
        }
        Some(self.new_handle(
            Handle::Nbr(idx[0].v),
            SurfaceType::Stencil(StencilKind::Vertex),
        ))
    }

    /// `len(e.nbrs)`.
    pub fn try_ring_len(&mut self, arg: &Expr) -> Option<Tv> {
        let ExprKind::Field { name, .. } = &arg.kind else {
            return None;
        };
        if name.node != "nbrs" || self.term.is_none() {
            return None;
        }
        let tv = self.expr(arg, None);
        if self.handle_of(tv.v) != Some(Handle::Nbrs) {
            return Some(self.poison());
        }
        let v = self.input("", InputAt::NeighbourCount, SurfaceType::I64);
        Some(Tv {
            ty: SurfaceType::I64,
            v,
        })
    }

    fn mesh_field(&self, base: &Expr) -> Option<(usize, String)> {
        let ExprKind::Path(p) = &base.kind else {
            return None;
        };
        if p.len() == 1 && self.env.lookup(&p[0].node).is_some() {
            return None;
        }
        match self.g.items.lookup_path(self.module, p)?.first()? {
            Def::Mesh(i)
                if matches!(
                    self.g.items.mesh[*i].kind,
                    MeshItemKind::Dof { .. } | MeshItemKind::Data { .. }
                ) =>
            {
                Some((*i, p[p.len() - 1].node.clone()))
            }
            _ => None,
        }
    }

    /// `x[e.v0]`, `rest[e]`, `x[e.nbrs[i]]`.
    pub fn try_mesh_read(&mut self, base: &Expr, indices: &[Expr], span: Span) -> Option<Tv> {
        let (i, name) = self.mesh_field(base)?;
        let (stencil, ty) = match &self.g.items.mesh[i].kind {
            MeshItemKind::Dof { stencil, ty } | MeshItemKind::Data { stencil, ty } => {
                (*stencil, ty.clone())
            }
            _ => return None,
        };
        let Some(term_stencil) = self.term.as_ref().map(|t| t.stencil) else {
            self.lower_args_for_errors(indices);
            let detail = format!("`{name}` can only be read inside an energy or residual body");
            self.error(ErrorKind::BadMeshRead { detail }, span);
            return Some(self.poison());
        };
        if indices.len() != 1 {
            self.lower_args_for_errors(indices);
            let detail = format!("`{name}` takes one element handle as its index");
            self.error(ErrorKind::BadMeshRead { detail }, span);
            return Some(self.poison());
        }
        let h = self.expr(&indices[0], None);
        if h.ty.is_error() || stencil.is_none() || ty.is_error() {
            return Some(self.poison());
        }
        let stencil = stencil.unwrap_or(StencilKind::Vertex);
        let handle = self.handle_of(h.v);
        // Face `data` through a diamond's face handles: the element loops gather face dofs
        // there, not face data (§12.2).
        if let (Some(Handle::Face(_)), MeshItemKind::Data { .. }) = (handle, &self.g.items.mesh[i].kind) {
            let detail = format!(
                "face `data` `{name}` cannot be read through a diamond's `e.f0`/`e.f1` (face dofs can); \
                 read it in a `face` term, or keep it per diamond as `diamond` data"
            );
            self.error(ErrorKind::BadMeshRead { detail }, span);
            return Some(self.poison());
        }
        let at = match handle {
            Some(Handle::Vertex(k)) if stencil == StencilKind::Vertex => InputAt::Vertex(k),
            Some(Handle::Nbr(_)) if stencil == StencilKind::Vertex => InputAt::Neighbours,
            Some(Handle::Face(k)) if stencil == StencilKind::Face => InputAt::Face(k),
            Some(Handle::Elem) if stencil == term_stencil => InputAt::Element,
            _ => {
                let detail = if stencil == StencilKind::Vertex {
                    format!(
                        "`{name}` lives on vertices: index it with a vertex handle such as `e.v0` (found {})",
                        h.ty
                    )
                } else if stencil == StencilKind::Face
                    && matches!(self.g.items.mesh[i].kind, MeshItemKind::Data { .. })
                {
                    format!("`{name}` lives on faces: read it as `{name}[e]` in a term on `face` (found {})", h.ty)
                } else if stencil == StencilKind::Face {
                    format!(
                        "`{name}` lives on faces: read it as `{name}[e]` in a term on `face`, or `{name}[e.f0]`, `{name}[e.f1]` in a term on `diamond` (found {})",
                        h.ty
                    )
                } else {
                    format!(
                        "`{name}` lives on {} elements: read it as `{name}[e]` in a term on `{}` (found {})",
                        stencil.name(),
                        stencil.name(),
                        h.ty
                    )
                };
                self.error(ErrorKind::BadMeshRead { detail }, indices[0].span);
                return Some(self.poison());
            }
        };
        self.b.set_span(span);
        Some(match (at, handle) {
            (InputAt::Neighbours, Some(Handle::Nbr(idx))) => {
                let slice_ty = SurfaceType::slice(ty.clone());
                let s = self.input(&name, InputAt::Neighbours, slice_ty);
                let v = self.b.push1(OpKind::Index, vec![s, idx], ty.ir_type());
                Tv { ty, v }
            }
            (at, _) => {
                let v = self.input(&name, at, ty.clone());
                Tv { ty, v }
            }
        })
    }

    /// A bare mesh name used as a value: a `param`, or an error.
    pub fn mesh_value(&mut self, i: usize, span: Span) -> Tv {
        let item = &self.g.items.mesh[i];
        let name = item.name.clone();
        match item.kind.clone() {
            MeshItemKind::Param { ty } => {
                if self.term.is_none() {
                    let detail = format!(
                        "param `{name}` can only be read inside an energy or residual body"
                    );
                    self.error(ErrorKind::BadMeshRead { detail }, span);
                    return self.poison();
                }
                let v = self.input(&name, InputAt::Param, ty.clone());
                Tv { ty, v }
            }
            MeshItemKind::Dof { .. } | MeshItemKind::Data { .. } => {
                let detail =
                    format!("`{name}` must be indexed by an element handle, e.g. `{name}[e.v0]`");
                self.error(ErrorKind::BadMeshRead { detail }, span);
                self.poison()
            }
            MeshItemKind::Energy | MeshItemKind::Residual => {
                self.error(
                    ErrorKind::NotAValue {
                        what: format!("term `{name}`"),
                    },
                    span,
                );
                self.poison()
            }
        }
    }
}
