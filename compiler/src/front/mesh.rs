//! Mesh-energy declarations: `dof`, `data`, `param`, `energy`, `residual` and
//! `objective`, checked and described as [`MeshDecls`]. Energy and residual
//! bodies are type-checked and lowered to IR functions of their gathered inputs
//! (see [`TermInput`]).

use super::diagnostics::ErrorKind;
use super::items::{Def, MeshItemKind, ROOT};
use super::lower::{FnCx, Front, TermCx};
use super::types::{StencilKind, SurfaceType};
use crate::ir::{FuncRef, Function, Literal};
use mad_grammar::ast::{self, BinOp, Expr, ExprKind, UnOp};
use mad_grammar::span::Span;

pub use super::lower::term::{InputAt, TermInput};

/// A `dof` or `data` field.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldDecl {
    pub name: String,
    pub stencil: StencilKind,
    pub ty: SurfaceType,
}

/// A `param` with its default value, if any.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamDecl {
    pub name: String,
    pub ty: SurfaceType,
    pub default: Option<Literal>,
}

/// An `energy` (value `f64`) or `residual` (value `ret`) term.
#[derive(Clone, Debug, PartialEq)]
pub struct TermDecl {
    pub name: String,
    pub stencil: StencilKind,
    pub ret: SurfaceType,
    /// The IR function computing the term from `inputs`, in order.
    pub func: FuncRef,
    pub inputs: Vec<TermInput>,
}

impl TermDecl {
    /// The vertex count of a `pair` term: one more than the highest `e.vK` it reads
    /// (a pair term reading `e.v0` and `e.v1` is a vertex–vertex pair).
    pub fn pair_arity(&self) -> usize {
        self.inputs
            .iter()
            .filter_map(|i| match i.at {
                InputAt::Vertex(v) => Some(v as usize + 1),
                _ => None,
            })
            .max()
            .unwrap_or(1)
    }
}

/// The objective as written.
#[derive(Clone, Debug, PartialEq)]
pub enum ObjExpr {
    Energy(String),
    Param(String),
    Num(f64),
    Add(Box<ObjExpr>, Box<ObjExpr>),
    Sub(Box<ObjExpr>, Box<ObjExpr>),
    Mul(Box<ObjExpr>, Box<ObjExpr>),
    Neg(Box<ObjExpr>),
}

/// Every mesh declaration of a program.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshDecls {
    pub dofs: Vec<FieldDecl>,
    pub data: Vec<FieldDecl>,
    pub params: Vec<ParamDecl>,
    pub energies: Vec<TermDecl>,
    pub residuals: Vec<TermDecl>,
    /// `None`: the objective is the sum of all energies.
    pub objective: Option<ObjExpr>,
    /// The file's `solve { ... }` block, if any.
    pub solve: Option<super::solve::SolveSettings>,
    /// Per dof field (same order as `dofs`), its `= INIT`, if written.
    pub dof_inits: Vec<Option<super::state::Init>>,
    /// The `state` fields (data fields recomputed by updates).
    pub states: Vec<super::state::StateDecl>,
    /// The `update` items, in order.
    pub updates: Vec<super::state::UpdateDecl>,
    /// The file's `broadphase ... within ...;` declaration, if any.
    pub broadphase: Option<super::broadphase::Broadphase>,
}

/// Checks every mesh declaration and lowers the term bodies.
pub fn check_mesh(g: &mut Front) -> MeshDecls {
    let mut out = MeshDecls::default();
    for i in 0..g.items.mesh.len() {
        let (name, kind, file, span, item) = {
            let m = &g.items.mesh[i];
            (
                m.name.clone(),
                m.kind.clone(),
                m.file,
                m.span,
                m.item.clone(),
            )
        };
        match kind {
            MeshItemKind::Dof { stencil, ty } => {
                if let Some(st) = stencil
                    && !matches!(st, StencilKind::Vertex | StencilKind::Face)
                {
                    let what = format!("dof `{name}` cannot live on {} elements", st.name());
                    let help = Some("a dof lives on `vertex` or `face`".to_string());
                    g.error(ErrorKind::BadMeshDecl { what, help }, file, span);
                }
                let ok = matches!(
                    ty,
                    SurfaceType::F64 | SurfaceType::Vec(_) | SurfaceType::Error
                );
                if !ok {
                    let what = format!("dof `{name}` cannot have type {ty}");
                    let help = Some(format!("a dof is f64 or vecN, N from 2 to {}", super::types::MAX_FIXED_SIZE));
                    g.error(ErrorKind::BadMeshDecl { what, help }, file, span);
                }
                if let Some(stencil) = stencil {
                    let init = match &item.kind {
                        ast::ItemKind::Dof { init: Some(e), .. } => {
                            super::state::check_init(g, e, stencil, &ty, file)
                        }
                        _ => None,
                    };
                    out.dof_inits.push(init);
                    out.dofs.push(FieldDecl { name, stencil, ty });
                }
            }
            MeshItemKind::Data { stencil, ty } => {
                let ok = ty.is_number()
                    || matches!(
                        ty,
                        SurfaceType::Vec(_) | SurfaceType::Mat(..) | SurfaceType::Error
                    );
                if !ok {
                    let what = format!("data `{name}` cannot have type {ty}");
                    let help = Some("data is a number, a vec or a mat".to_string());
                    g.error(ErrorKind::BadMeshDecl { what, help }, file, span);
                }
                if stencil == Some(StencilKind::Pair) {
                    let what = format!("`{name}` cannot live on pair elements");
                    let help = Some(
                        "pairs come from the host at run time; read vertex data at a pair's \
                         vertices"
                            .to_string(),
                    );
                    g.error(ErrorKind::BadMeshDecl { what, help }, file, span);
                }
                if let Some(stencil) = stencil {
                    if let ast::ItemKind::State { init, .. } = &item.kind {
                        let init = init
                            .as_ref()
                            .and_then(|e| super::state::check_init(g, e, stencil, &ty, file));
                        out.states.push(super::state::StateDecl {
                            data: out.data.len(),
                            init,
                        });
                    }
                    out.data.push(FieldDecl { name, stencil, ty });
                }
            }
            MeshItemKind::Param { ty } => {
                let ok = matches!(ty, SurfaceType::F64 | SurfaceType::I64 | SurfaceType::Error);
                if !ok {
                    let what = format!("param `{name}` cannot have type {ty}");
                    let help = Some("a param is f64 or i64".to_string());
                    g.error(ErrorKind::BadMeshDecl { what, help }, file, span);
                }
                let default = match &item.kind {
                    ast::ItemKind::Param {
                        default: Some(e), ..
                    } if ok && !ty.is_error() => {
                        let v = g.eval_const(e, ty.scalar(), file, ROOT);
                        match v {
                            Some(l) if Some(l.kind()) == ty.scalar() => Some(l),
                            Some(l) => {
                                let found = SurfaceType::from_scalar(l.kind()).to_string();
                                g.error(
                                    ErrorKind::TypeMismatch {
                                        expected: ty.to_string(),
                                        found,
                                    },
                                    file,
                                    e.span,
                                );
                                None
                            }
                            None => None,
                        }
                    }
                    _ => None,
                };
                out.params.push(ParamDecl { name, ty, default });
            }
            MeshItemKind::Energy | MeshItemKind::Residual => {
                let (elem, stencil, body, ret, is_energy) = match &item.kind {
                    ast::ItemKind::Energy {
                        elem,
                        stencil,
                        body,
                        ..
                    } => (
                        elem.clone(),
                        stencil.clone(),
                        body.clone(),
                        SurfaceType::F64,
                        true,
                    ),
                    ast::ItemKind::Residual {
                        elem,
                        stencil,
                        ret,
                        body,
                        ..
                    } => {
                        let r = g.items.resolve_type(ret, file);
                        if !matches!(
                            r,
                            SurfaceType::F64 | SurfaceType::Vec(_) | SurfaceType::Error
                        ) {
                            let what = format!("residual `{name}` cannot have type {r}");
                            let help = Some(format!("a residual is f64 or vecN, N from 2 to {}", super::types::MAX_FIXED_SIZE));
                            g.error(ErrorKind::BadMeshDecl { what, help }, file, ret.span);
                        }
                        (elem.clone(), stencil.clone(), body.clone(), r, false)
                    }
                    _ => continue,
                };
                let Some(st) = g.items.resolve_stencil(&stencil, file) else {
                    continue;
                };
                if !is_energy && matches!(st, StencilKind::Pair | StencilKind::Ring) {
                    let what = format!("residual `{name}` cannot run over {} elements", st.name());
                    let help =
                        Some("a residual runs over vertex, edge, face or diamond".to_string());
                    g.error(ErrorKind::BadMeshDecl { what, help }, file, stencil.span);
                }
                let prefix = if is_energy { "energy" } else { "residual" };
                let term = lower_term_as(g, &name, prefix, &elem, st, &body, &ret, file);
                let (func, inputs) = term;
                let decl = TermDecl {
                    name,
                    stencil: st,
                    ret,
                    func,
                    inputs,
                };
                if is_energy {
                    out.energies.push(decl);
                } else {
                    out.residuals.push(decl);
                }
            }
        }
    }
    let objectives = g.items.objectives.clone();
    for (k, (file, e, span)) in objectives.iter().enumerate() {
        if k > 0 {
            let detail = "there is already an objective".to_string();
            g.error(ErrorKind::BadObjective { detail }, *file, *span);
            continue;
        }
        out.objective = objective(g, e, *file);
        if let Some(o) = &out.objective
            && let Err(detail) = weighted_sum(o).and_then(|d| match d {
                0 => Err("the objective holds no energy".to_string()),
                _ => Ok(()),
            })
        {
            g.error(ErrorKind::BadObjective { detail }, *file, e.span);
            out.objective = None;
        }
    }
    out.solve = super::solve::check(g, &out);
    out.updates = super::state::check_updates(g, &out.dofs, &out.data);
    out.broadphase = super::broadphase::check(g, &out);
    out
}

/// Lowers a term-like body (`prefix`: `energy`, `residual`, `update`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn lower_term_as(
    g: &mut Front,
    name: &str,
    prefix: &'static str,
    elem: &ast::Ident,
    stencil: StencilKind,
    body: &ast::Block,
    ret: &SurfaceType,
    file: usize,
) -> (FuncRef, Vec<TermInput>) {
    let mut func = Function::new(format!("{prefix}::{name}"), &[], ret.ir_type());
    func.source_file = Some(file);
    let term = {
        let mut cx = FnCx::new(g, &mut func, file, ROOT, ret.clone());
        cx.term = Some(TermCx::new(stencil));
        cx.declare_element(&elem.node, stencil, elem.span);
        let v = cx.term_body(body, ret, prefix);
        cx.b.finish(vec![v]);
        cx.term.take()
    };
    let (inputs, values) = match term {
        Some(t) => (t.inputs, t.input_values),
        None => (Vec::new(), Vec::new()),
    };
    func.body.args = values;
    let r = g.module.add_function(func);
    (r, inputs)
}

impl FnCx<'_, '_> {
    /// A term body: like a function body, but a wrong type is E0116.
    fn term_body(
        &mut self,
        body: &ast::Block,
        ret: &SurfaceType,
        term: &'static str,
    ) -> crate::ir::ValueId {
        let before = self.g.items.errors.len();
        let v = self.function_body(body, ret);
        // Re-label the body's return-type error as a term type error.
        for e in &mut self.g.items.errors[before..] {
            if let ErrorKind::ReturnMismatch { expected, found } = &e.kind {
                e.kind = ErrorKind::TermType {
                    term,
                    expected: expected.clone(),
                    found: found.clone(),
                };
            }
        }
        v
    }
}

/// The degree of an objective in the energies (0 or 1), or why it is not a
/// weighted sum of energies (a product of energies, a constant term).
fn weighted_sum(e: &ObjExpr) -> Result<u8, String> {
    Ok(match e {
        ObjExpr::Energy(_) => 1,
        ObjExpr::Param(_) | ObjExpr::Num(_) => 0,
        ObjExpr::Neg(a) => weighted_sum(a)?,
        ObjExpr::Mul(a, b) => match weighted_sum(a)? + weighted_sum(b)? {
            2 => return Err("a product of two energies is not a weighted sum".into()),
            d => d,
        },
        ObjExpr::Add(a, b) | ObjExpr::Sub(a, b) => match (weighted_sum(a)?, weighted_sum(b)?) {
            (x, y) if x == y => x,
            _ => {
                return Err(
                    "a constant term has no effect on derivatives: every term of the sum \
                     needs one energy"
                        .into(),
                );
            }
        },
    })
}

fn objective(g: &mut Front, e: &Expr, file: usize) -> Option<ObjExpr> {
    let bad = |g: &mut Front, span: Span, detail: String| {
        g.error(ErrorKind::BadObjective { detail }, file, span);
        None
    };
    match &e.kind {
        ExprKind::Int(n) => Some(ObjExpr::Num(*n as f64)),
        ExprKind::Float(x) => Some(ObjExpr::Num(x.value)),
        ExprKind::Path(p) if p.len() == 1 => {
            let n = &p[0].node;
            match g
                .items
                .lookup_local_items(ROOT, n)
                .and_then(|d| d.first().copied())
            {
                Some(Def::Mesh(i)) => match g.items.mesh[i].kind {
                    MeshItemKind::Energy => Some(ObjExpr::Energy(n.clone())),
                    MeshItemKind::Param {
                        ty: SurfaceType::F64,
                    } => Some(ObjExpr::Param(n.clone())),
                    _ => bad(g, e.span, format!("`{n}` is not an energy or an f64 param")),
                },
                _ => bad(g, e.span, format!("`{n}` is not an energy or an f64 param")),
            }
        }
        ExprKind::Unary {
            op: UnOp::Neg,
            operand,
        } => Some(ObjExpr::Neg(Box::new(objective(g, operand, file)?))),
        ExprKind::Binary { op, lhs, rhs } if matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul) => {
            let a = objective(g, lhs, file);
            let b = objective(g, rhs, file);
            let (a, b) = (Box::new(a?), Box::new(b?));
            Some(match op {
                BinOp::Add => ObjExpr::Add(a, b),
                BinOp::Sub => ObjExpr::Sub(a, b),
                _ => ObjExpr::Mul(a, b),
            })
        }
        _ => bad(
            g,
            e.span,
            "only energies, f64 params, numbers, `+`, `-` and `*` are allowed".to_string(),
        ),
    }
}
