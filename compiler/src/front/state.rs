//! Initial values (`dof u: vertex -> vec2 = tutte;`), per-element state
//! (`state R: vertex -> mat3 [= INIT];`) and `update NAME(e: STENCIL) { … }`
//! items: checked here and described as [`Init`], [`StateDecl`] and
//! [`UpdateDecl`] in [`super::MeshDecls`].
//!
//! A state is a data field (it is read exactly like one and lives in
//! `MeshDecls::data`); [`StateDecl`] marks which. An update body is lowered like
//! a term whose value has the target field's type.

use super::diagnostics::ErrorKind;
use super::items::{Def, MeshItemKind, ROOT};
use super::lower::Front;
use super::mesh::{FieldDecl, TermDecl};
use super::types::{StencilKind, SurfaceType};
use mad_grammar::ast::{self, Expr, ExprKind};

/// How a dof or state field gets its first values.
#[derive(Clone, Debug, PartialEq)]
pub enum Init {
    /// The mesh's vertex positions (first components, zero-padded).
    Positions,
    /// All zeros.
    Zeros,
    /// A Tutte embedding of a disk-like mesh (vertex `vec2` fields).
    Tutte,
    /// A mesh file (its positions) or a `.npy` array, relative to the current directory.
    File(String),
}

impl Init {
    /// The names accepted before a file name.
    pub const NAMES: [&'static str; 3] = ["positions", "zeros", "tutte"];

    /// Parses the command-line form (`positions`, `zeros`, `tutte`, else a file name).
    pub fn parse(text: &str) -> Init {
        match text.trim() {
            "positions" => Init::Positions,
            "zeros" => Init::Zeros,
            "tutte" => Init::Tutte,
            f => Init::File(f.to_string()),
        }
    }

    /// Why this initializer cannot fill a field of this stencil and type, if it cannot.
    pub fn unfit(&self, stencil: StencilKind, ty: &SurfaceType) -> Option<String> {
        match self {
            Init::Tutte if stencil != StencilKind::Vertex || *ty != SurfaceType::Vec(2) => {
                Some(format!(
                    "`tutte` fills `vertex -> vec2` fields, not `{} -> {ty}`",
                    stencil.name()
                ))
            }
            Init::Positions
                if stencil != StencilKind::Vertex
                    || !matches!(ty, SurfaceType::F64 | SurfaceType::Vec(_)) =>
            {
                Some(format!(
                    "`positions` fills vertex fields of type f64 or vecN, not `{} -> {ty}`",
                    stencil.name()
                ))
            }
            _ => None,
        }
    }
}

/// A `state` field: data field `data` (an index into `MeshDecls::data`).
#[derive(Clone, Debug, PartialEq)]
pub struct StateDecl {
    pub data: usize,
    /// `None`: zeros.
    pub init: Option<Init>,
}

/// What an `update` recomputes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpdateTarget {
    /// Dof field (index into `MeshDecls::dofs`).
    Dof(usize),
    /// Data field of a state (index into `MeshDecls::data`).
    State(usize),
}

/// An `update NAME(e: STENCIL) { body }`: `term.ret` is the target's type.
#[derive(Clone, Debug, PartialEq)]
pub struct UpdateDecl {
    pub target: UpdateTarget,
    pub term: TermDecl,
}

/// Checks an initializer expression for a field.
pub fn check_init(
    g: &mut Front,
    e: &Expr,
    stencil: StencilKind,
    ty: &SurfaceType,
    file: usize,
) -> Option<Init> {
    let init = match &e.kind {
        ExprKind::Str(s) => Init::File(s.clone()),
        ExprKind::Path(p) if p.len() == 1 && Init::NAMES.contains(&p[0].node.as_str()) => {
            Init::parse(&p[0].node)
        }
        ExprKind::Path(p) if p.len() == 1 => {
            let detail = format!("unknown initializer `{}`", p[0].node);
            let help = Some("an initializer is `positions`, `zeros`, `tutte` or a file name string such as \"start.obj\"".into());
            g.error(ErrorKind::BadInit { detail, help }, file, e.span);
            return None;
        }
        _ => {
            let detail = "an initializer is a name or a file name string".to_string();
            let help = Some(
                "write `positions`, `zeros`, `tutte` or a string such as \"start.npy\"".into(),
            );
            g.error(ErrorKind::BadInit { detail, help }, file, e.span);
            return None;
        }
    };
    if ty.is_error() {
        return None;
    }
    if let Some(detail) = init.unfit(stencil, ty) {
        g.error(ErrorKind::BadInit { detail, help: None }, file, e.span);
        return None;
    }
    Some(init)
}

/// Lowers every `update` item (after the dofs and data are known).
pub fn check_updates(g: &mut Front, dofs: &[FieldDecl], data: &[FieldDecl]) -> Vec<UpdateDecl> {
    let items = std::mem::take(&mut g.items.updates);
    let mut out: Vec<UpdateDecl> = Vec::new();
    for (file, item) in &items {
        let ast::ItemKind::Update {
            name,
            elem,
            stencil,
            body,
            ..
        } = &item.kind
        else {
            continue;
        };
        let bad = |g: &mut Front, detail: String, help: Option<String>, span| {
            g.error(ErrorKind::BadUpdate { detail, help }, *file, span)
        };
        let def = g
            .items
            .lookup_local_items(ROOT, &name.node)
            .and_then(|d| d.first().copied());
        let target = match def {
            Some(Def::Mesh(i)) => match (&g.items.mesh[i].kind, &g.items.mesh[i].item.kind) {
                (MeshItemKind::Dof { .. }, _) => dofs
                    .iter()
                    .position(|d| d.name == name.node)
                    .map(UpdateTarget::Dof),
                (MeshItemKind::Data { .. }, ast::ItemKind::State { .. }) => data
                    .iter()
                    .position(|d| d.name == name.node)
                    .map(UpdateTarget::State),
                _ => {
                    let help = Some(format!(
                        "declare it as `state {}: STENCIL -> T;` to recompute it",
                        name.node
                    ));
                    bad(
                        g,
                        format!("`{}` is not a state or a dof", name.node),
                        help,
                        name.span,
                    );
                    continue;
                }
            },
            _ => {
                bad(
                    g,
                    format!("there is no state or dof named `{}`", name.node),
                    None,
                    name.span,
                );
                continue;
            }
        };
        let Some(target) = target else { continue };
        let field = match target {
            UpdateTarget::Dof(i) => &dofs[i],
            UpdateTarget::State(i) => &data[i],
        };
        let Some(st) = g.items.resolve_stencil(stencil, *file) else {
            continue;
        };
        let fits = st == field.stencil
            || (st == StencilKind::Ring && field.stencil == StencilKind::Vertex);
        if !fits {
            let help = Some(format!(
                "an update of a `{}` field runs on `{}`{}",
                field.stencil.name(),
                field.stencil.name(),
                if field.stencil == StencilKind::Vertex {
                    " or `ring`"
                } else {
                    ""
                }
            ));
            bad(
                g,
                format!(
                    "`{}` lives on {} elements, the update runs on {}",
                    field.name,
                    field.stencil.name(),
                    st.name()
                ),
                help,
                stencil.span,
            );
            continue;
        }
        if out.iter().any(|u| u.target == target) {
            bad(
                g,
                format!("`{}` already has an update", name.node),
                None,
                name.span,
            );
            continue;
        }
        let ret = field.ty.clone();
        let (func, inputs) =
            super::mesh::lower_term_as(g, &name.node, "update", elem, st, body, &ret, *file);
        out.push(UpdateDecl {
            target,
            term: TermDecl {
                name: name.node.clone(),
                stencil: st,
                ret,
                func,
                inputs,
            },
        });
    }
    out
}
