//! The `broadphase KIND[, KIND] within EXPR;` declaration: which contact pairs
//! the runtime's broad phase puts into the pair list of the file's `pair` terms.
//!
//! ```text
//! param dhat: f64 = 0.05;
//! broadphase vertex_face within dhat;       // or `within 0.05`, or `within 2.0 * H`
//! ```
//!
//! Kinds and their tuples: `vertex_vertex` (v, w), `vertex_face` (v, a, b, c),
//! `edge_edge` (a, b, c, d). Pairs sharing a vertex are never produced. Kinds
//! listed together must have tuples of one size (`vertex_vertex` stands alone),
//! because all pair terms share one list. The distance is a positive constant
//! expression or the name of an `f64` param (read when the solve starts, so
//! `--set dhat=…` changes it). Both `broadphase` and `within` are contextual:
//! they stay usable as ordinary names.
//!
//! Errors are E0146: an unknown or repeated kind, a second declaration, a
//! distance that is neither, a file without `pair` terms, or pair terms whose arity
//! (one more than the highest `e.vK` they read) is not the kinds' tuple size.

use super::diagnostics::ErrorKind;
use super::lower::Front;
use super::mesh::MeshDecls;
use super::types::{StencilKind, SurfaceType};
use crate::ir::{Literal, ScalarKind};
use mad_grammar::ast::{ExprKind, ItemKind};

/// A kind of contact pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PairKind {
    VertexVertex,
    VertexFace,
    EdgeEdge,
}

impl PairKind {
    /// The kind named `name` in the language.
    pub fn from_name(name: &str) -> Option<PairKind> {
        match name {
            "vertex_vertex" => Some(PairKind::VertexVertex),
            "vertex_face" => Some(PairKind::VertexFace),
            "edge_edge" => Some(PairKind::EdgeEdge),
            _ => None,
        }
    }

    /// The kind's name in the language.
    pub fn name(self) -> &'static str {
        match self {
            PairKind::VertexVertex => "vertex_vertex",
            PairKind::VertexFace => "vertex_face",
            PairKind::EdgeEdge => "edge_edge",
        }
    }

    /// Vertices per tuple.
    pub fn arity(self) -> usize {
        match self {
            PairKind::VertexVertex => 2,
            PairKind::VertexFace | PairKind::EdgeEdge => 4,
        }
    }
}

/// The contact distance d̂.
#[derive(Clone, Debug, PartialEq)]
pub enum Distance {
    Value(f64),
    /// An `f64` param, read when the solve starts.
    Param(String),
}

/// A checked `broadphase` declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct Broadphase {
    pub kinds: Vec<PairKind>,
    pub distance: Distance,
}

const KINDS: &str = "vertex_vertex, vertex_face, edge_edge";

/// Checks the file's `broadphase` declarations (at most one) against the mesh
/// declarations `decls` (its params and pair terms).
pub fn check(g: &mut Front, decls: &MeshDecls) -> Option<Broadphase> {
    let items = std::mem::take(&mut g.items.broadphases);
    let mut result = None;
    for (k, (file, module, item)) in items.iter().enumerate() {
        let ItemKind::Broadphase {
            keyword,
            kinds,
            within,
            distance,
        } = &item.kind
        else {
            continue;
        };
        let bad = |g: &mut Front, detail: String, help: Option<String>, span| {
            g.error(ErrorKind::BadBroadphase { detail, help }, *file, span)
        };
        if keyword.node != "broadphase" {
            let help = Some(format!(
                "write `broadphase KIND within DISTANCE;` with KIND one of {KINDS}"
            ));
            bad(
                g,
                format!("`{}` does not start a declaration", keyword.node),
                help,
                keyword.span,
            );
            continue;
        }
        if within.node != "within" {
            bad(
                g,
                format!("expected `within`, found `{}`", within.node),
                None,
                within.span,
            );
            continue;
        }
        if k > 0 {
            bad(
                g,
                "there is already a broadphase declaration".into(),
                None,
                item.span,
            );
            continue;
        }
        let mut ok = true;
        let mut parsed: Vec<PairKind> = Vec::new();
        for kind in kinds {
            match PairKind::from_name(&kind.node) {
                Some(p) if parsed.contains(&p) => {
                    bad(
                        g,
                        format!("`{}` is listed twice", kind.node),
                        None,
                        kind.span,
                    );
                    ok = false;
                }
                Some(p) => {
                    if let Some(q) = parsed.first().filter(|q| q.arity() != p.arity()) {
                        let help = Some("all pair terms share one list of tuples of one size; use separate files".into());
                        let detail = format!(
                            "`{}` pairs have {} vertices but the kinds before have {}",
                            kind.node,
                            p.arity(),
                            q.arity()
                        );
                        bad(g, detail, help, kind.span);
                        ok = false;
                    }
                    parsed.push(p);
                }
                None => {
                    bad(
                        g,
                        format!("unknown pair kind `{}`", kind.node),
                        Some(format!("kinds are {KINDS}")),
                        kind.span,
                    );
                    ok = false;
                }
            }
        }
        let param = match &distance.kind {
            ExprKind::Path(p) if p.len() == 1 => decls.params.iter().find(|q| q.name == p[0].node),
            _ => None,
        };
        let dist = match param {
            Some(p) if p.ty == SurfaceType::F64 => Some(Distance::Param(p.name.clone())),
            Some(p) => {
                bad(
                    g,
                    format!("param `{}` is {}, the distance needs an f64", p.name, p.ty),
                    None,
                    distance.span,
                );
                None
            }
            // A name that is neither a param nor an item: say so (not "not a constant").
            None if matches!(&distance.kind, ExprKind::Path(p) if p.len() == 1 && g.items.lookup_path(*module, p).is_none()) => {
                let ExprKind::Path(p) = &distance.kind else { unreachable!("matched just above") };
                let name = p[0].node.clone();
                let suggestion = super::diagnostics::suggest(&name, decls.params.iter().map(|q| q.name.as_str()));
                g.error(ErrorKind::UnknownName { name, suggestion }, *file, distance.span);
                None
            }
            None => match g.eval_const(distance, Some(ScalarKind::F64), *file, *module) {
                Some(Literal::F64(x)) if x > 0.0 && x.is_finite() => Some(Distance::Value(x)),
                Some(_) => {
                    bad(
                        g,
                        "the distance must be a positive finite number".into(),
                        None,
                        distance.span,
                    );
                    None
                }
                None => None,
            },
        };
        // The pair list's tuples have the largest arity among the pair terms (§12.1); the
        // broad phase must produce tuples of that size.
        let arity = decls
            .energies
            .iter()
            .filter(|t| t.stencil == StencilKind::Pair)
            .map(|t| t.pair_arity())
            .max();
        if let (true, Some(a), Some(p)) = (ok, arity, parsed.first())
            && a != p.arity()
        {
            let reads = if a == 1 { "only `e.v0`".to_string() } else { format!("up to `e.v{}`", a - 1) };
            let help = Some(match p.arity() {
                2 => "a `vertex_vertex` pair term reads `e.v0` and `e.v1`".to_string(),
                _ => format!("a `{}` pair term reads `e.v0` … `e.v3`", p.name()),
            });
            bad(
                g,
                format!(
                    "`{}` pairs have {} vertices, but the pair terms read {reads} ({a} per pair)",
                    p.name(),
                    p.arity()
                ),
                help,
                kinds[0].span,
            );
            ok = false;
        }
        if arity.is_none() {
            let help =
                Some("declare an `energy NAME(e: pair) { ... }` term for the pairs to feed".into());
            bad(
                g,
                "the file has no `pair` energy term".into(),
                help,
                keyword.span,
            );
            ok = false;
        }
        if let (true, Some(distance)) = (ok, dist) {
            result = Some(Broadphase {
                kinds: parsed,
                distance,
            });
        }
    }
    result
}
