//! Item collection and name resolution at module level: the module tree (the user's
//! file, its nested `mod`s, and `std::{vec, mat, math}`), every item's definition,
//! `use` imports, and lookup of single names and `a::b::c` paths.

use super::diagnostics::{ErrorKind, FrontError};
use super::modfiles::ModuleFiles;
use super::sizes;
use super::types::{StencilKind, SurfaceType, fixed_size_error, named_type};
use crate::ir::FuncRef;
use mad_grammar::ast;
use mad_grammar::span::Span;
use std::collections::HashMap;
use std::sync::Arc;

pub type ModId = usize;

/// What a name in a module refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Def {
    /// Index into [`Items::fns`]; a name may have several (overloads).
    Fn(usize),
    Const(usize),
    Mod(ModId),
    /// Index into [`Items::mesh`].
    Mesh(usize),
}

/// A `solve { ... }` item: file, keyword, entries (name, value), span.
pub type SolveItem = (usize, ast::Ident, Vec<(ast::Ident, ast::Expr)>, Span);

#[derive(Debug)]
pub struct ModuleScope {
    /// `["std", "vec"]`; empty for the user's root module.
    pub path: Vec<String>,
    pub parent: Option<ModId>,
    pub file: usize,
    pub items: HashMap<String, Vec<Def>>,
    pub uses: HashMap<String, Vec<Def>>,
    pub globs: Vec<ModId>,
}

impl ModuleScope {
    pub fn qualify(&self, name: &str) -> String {
        let mut s = String::new();
        for p in &self.path {
            s.push_str(p);
            s.push_str("::");
        }
        s.push_str(name);
        s
    }
}

#[derive(Debug)]
pub struct FnItem {
    /// Qualified name, e.g. `geo::area` or `std::vec::dot`.
    pub qual: String,
    pub module: ModId,
    pub file: usize,
    /// The declaration as written (shared by the instances of a size-generic function,
    /// whose sizes [`FnItem::body_decl`] writes in).
    pub decl: Arc<ast::FnDecl>,
    pub attrs: Vec<ast::Attribute>,
    pub params: Vec<SurfaceType>,
    pub ret: SurfaceType,
    /// Unique name in the IR module (overloads get a `$types` suffix).
    pub ir_name: String,
    /// Defined in the user's file (not the standard library).
    pub user: bool,
    pub span: Span,
    /// Assigned when the function is first needed.
    pub fref: Option<FuncRef>,
    /// The sizes of an overload of a size-generic library function ([`super::sizes`]).
    pub instance: Option<sizes::Instance>,
}

impl FnItem {
    /// `dot(vec3, vec3) -> f64`
    pub fn signature(&self) -> String {
        let ps: Vec<String> = self.params.iter().map(|t| t.to_string()).collect();
        format!("{}({}) -> {}", self.qual, ps.join(", "), self.ret)
    }

    /// How a list of candidates names this overload: its signature, or for an instance of
    /// a size-generic function the whole family, once for all its sizes.
    pub fn description(&self) -> String {
        match &self.instance {
            Some(i) => i.family.to_string(),
            None => self.signature(),
        }
    }

    /// The declaration whose body is lowered: the one written, with an instance's sizes
    /// written in.
    pub fn body_decl(&self) -> Arc<ast::FnDecl> {
        match &self.instance {
            Some(i) => Arc::new(sizes::instantiate(&self.decl, &i.sizes)),
            None => self.decl.clone(),
        }
    }
}

#[derive(Debug)]
pub struct ConstItem {
    pub name: String,
    pub module: ModId,
    pub file: usize,
    pub ty: SurfaceType,
    pub value: ast::Expr,
    pub span: Span,
}

/// A mesh declaration's name, kept for lookup; its checked form lives in `mesh`.
#[derive(Debug)]
pub struct MeshItem {
    pub name: String,
    pub kind: MeshItemKind,
    pub file: usize,
    pub span: Span,
    pub item: ast::Item,
}

#[derive(Clone, Debug, PartialEq)]
pub enum MeshItemKind {
    Dof {
        stencil: Option<StencilKind>,
        ty: SurfaceType,
    },
    Data {
        stencil: Option<StencilKind>,
        ty: SurfaceType,
    },
    Param {
        ty: SurfaceType,
    },
    Energy,
    Residual,
}

/// Everything the module level knows.
#[derive(Debug, Default)]
pub struct Items {
    pub modules: Vec<ModuleScope>,
    pub fns: Vec<FnItem>,
    pub consts: Vec<ConstItem>,
    pub mesh: Vec<MeshItem>,
    /// `objective = ...;` items, in order (at most one is allowed).
    pub objectives: Vec<(usize, ast::Expr, Span)>,
    /// `solve { ... }` items (file, keyword, entries, span), in order (at most one is allowed).
    pub solves: Vec<SolveItem>,
    /// `update NAME(e: STENCIL) { ... }` items (file, item), in order.
    pub updates: Vec<(usize, ast::Item)>,
    /// `broadphase ... within ...;` items (file, module, item), in order (at most one is allowed).
    pub broadphases: Vec<(usize, ModId, ast::Item)>,
    /// Terms (energy/residual items) with their module, in order.
    pub errors: Vec<FrontError>,
    /// The `std` module and its children `vec`, `mat`, `math`.
    pub prelude: Vec<ModId>,
    /// The modules the user's `mod name;` declarations loaded from files.
    pub module_files: ModuleFiles,
}

pub const ROOT: ModId = 0;

impl Items {
    /// The items of a program whose root is `user_file`, with the module files it loaded.
    pub fn new(user_file: usize, module_files: ModuleFiles) -> Items {
        let mut it = Items {
            module_files,
            ..Items::default()
        };
        it.modules.push(ModuleScope {
            path: Vec::new(),
            parent: None,
            file: user_file,
            items: HashMap::new(),
            uses: HashMap::new(),
            globs: Vec::new(),
        });
        it
    }

    pub fn error(&mut self, kind: ErrorKind, file: usize, span: Span) {
        self.errors.push(FrontError { kind, file, span });
    }

    fn new_module(&mut self, name: &str, parent: ModId, file: usize) -> ModId {
        let mut path = self.modules[parent].path.clone();
        path.push(name.to_string());
        self.modules.push(ModuleScope {
            path,
            parent: Some(parent),
            file,
            items: HashMap::new(),
            uses: HashMap::new(),
            globs: Vec::new(),
        });
        let id = self.modules.len() - 1;
        self.modules[parent]
            .items
            .entry(name.to_string())
            .or_default()
            .push(Def::Mod(id));
        id
    }

    /// Adds the standard library module `std::<name>` with the items of `file`.
    pub fn add_std_module(&mut self, name: &str, file_id: usize, file: &ast::File) {
        let std = match self.modules[ROOT].items.get("std").and_then(|d| d.first()) {
            Some(Def::Mod(m)) => *m,
            _ => {
                let m = self.new_module("std", ROOT, file_id);
                self.prelude.push(m);
                m
            }
        };
        let m = self.new_module(name, std, file_id);
        self.prelude.push(m);
        self.collect(m, file_id, &file.items, false);
    }

    /// Registers the items of a module (recursively for nested `mod`s).
    pub fn collect(&mut self, module: ModId, file: usize, items: &[ast::Item], user: bool) {
        for item in items {
            if user && file != self.modules[ROOT].file && is_mesh_decl(&item.kind) {
                let kind = ErrorKind::MeshDeclInModuleFile {
                    item: item_kind_name(&item.kind),
                };
                self.error(kind, file, item.span);
                continue;
            }
            if !matches!(item.kind, ast::ItemKind::Fn(_)) {
                for a in &item.attrs {
                    let kind = if a.name.node == "ad" {
                        ErrorKind::MisplacedAttribute {
                            name: "ad".to_string(),
                            item: item_kind_name(&item.kind),
                        }
                    } else {
                        ErrorKind::UnknownAttribute {
                            name: a.name.node.clone(),
                            help: Some("attributes apply to `fn` items only".to_string()),
                        }
                    };
                    self.error(kind, file, a.span);
                }
            }
            match &item.kind {
                ast::ItemKind::Fn(decl) if !user && sizes::size_vars(&item.attrs).is_some() => {
                    self.collect_sized(module, file, item, decl)
                }
                ast::ItemKind::Fn(decl) => {
                    let params: Vec<SurfaceType> = decl
                        .params
                        .iter()
                        .map(|p| self.resolve_type(&p.ty, file))
                        .collect();
                    let ret = match &decl.ret {
                        Some(t) => self.resolve_type(t, file),
                        None => SurfaceType::unit(),
                    };
                    let mut typed: Vec<(Span, &SurfaceType)> = decl
                        .params
                        .iter()
                        .zip(&params)
                        .map(|(p, t)| (p.ty.span, t))
                        .collect();
                    if let Some(t) = &decl.ret {
                        typed.push((t.span, &ret));
                    }
                    let bad: Vec<Span> = typed
                        .into_iter()
                        .filter(|(_, t)| has_stencil(t))
                        .map(|(s, _)| s)
                        .collect();
                    for span in bad {
                        let detail =
                            "functions cannot take or return element handles; pass the values read with them".to_string();
                        self.error(ErrorKind::HandleMisuse { detail }, file, span);
                    }
                    let f = self.fn_item(module, file, Arc::new(decl.clone()), item.attrs.clone(), user);
                    let idx = self.push_fn(FnItem { params, ret, ..f });
                    self.define(module, &decl.name, Def::Fn(idx), file);
                }
                ast::ItemKind::Mod { name, items } => {
                    let m = self.new_module_checked(name, module, file, file);
                    self.collect(m, file, items, user);
                }
                ast::ItemKind::ModFile { name, .. } => {
                    let loaded = self.module_files.get(file, item).cloned();
                    let items_file = loaded.as_ref().map_or(file, |l| l.file);
                    let m = self.new_module_checked(name, module, file, items_file);
                    match loaded {
                        Some(l) => self.collect(m, l.file, &l.ast.items, user),
                        // Only when the caller did not load the files (`compile` does).
                        None => {
                            let module = name.node.clone();
                            self.error(ErrorKind::ModFileWithoutFile { module }, file, item.span)
                        }
                    }
                }
                ast::ItemKind::Use(_) => {}
                ast::ItemKind::Const { name, ty, value } => {
                    let ty = self.resolve_type(ty, file);
                    let idx = self.consts.len();
                    self.consts.push(ConstItem {
                        name: name.node.clone(),
                        module,
                        file,
                        ty,
                        value: value.clone(),
                        span: name.span,
                    });
                    self.define(module, name, Def::Const(idx), file);
                }
                ast::ItemKind::State { keyword, .. } | ast::ItemKind::Update { keyword, .. }
                    if keyword.node
                        != if matches!(item.kind, ast::ItemKind::State { .. }) {
                            "state"
                        } else {
                            "update"
                        } =>
                {
                    let detail = format!("`{}` is not an item keyword", keyword.node);
                    let help = Some("mesh items start with dof, data, state, param, energy, residual, update, objective or solve".into());
                    self.error(ErrorKind::BadUpdate { detail, help }, file, keyword.span);
                }
                ast::ItemKind::Update { .. } => self.updates.push((file, item.clone())),
                ast::ItemKind::Dof {
                    name, stencil, ty, ..
                }
                | ast::ItemKind::Data { name, stencil, ty }
                | ast::ItemKind::State {
                    name, stencil, ty, ..
                } => {
                    let st = self.resolve_stencil(stencil, file);
                    let ty = self.resolve_type(ty, file);
                    let kind = if matches!(item.kind, ast::ItemKind::Dof { .. }) {
                        MeshItemKind::Dof { stencil: st, ty }
                    } else {
                        MeshItemKind::Data { stencil: st, ty }
                    };
                    self.add_mesh(module, name, kind, file, item);
                }
                ast::ItemKind::Param { name, ty, .. } => {
                    let ty = self.resolve_type(ty, file);
                    self.add_mesh(module, name, MeshItemKind::Param { ty }, file, item);
                }
                ast::ItemKind::Energy { name, .. } => {
                    self.add_mesh(module, name, MeshItemKind::Energy, file, item)
                }
                ast::ItemKind::Residual { name, .. } => {
                    self.add_mesh(module, name, MeshItemKind::Residual, file, item)
                }
                ast::ItemKind::Objective { value } => {
                    self.objectives.push((file, value.clone(), item.span))
                }
                ast::ItemKind::Solve { keyword, entries } => {
                    self.solves
                        .push((file, keyword.clone(), entries.clone(), item.span))
                }
                ast::ItemKind::Broadphase { .. } => {
                    self.broadphases.push((file, module, item.clone()))
                }
            }
        }
        // Imports are resolved after every module's items are known.
    }

    /// A function item of `decl` with no signature types yet and no IR name.
    fn fn_item(
        &self,
        module: ModId,
        file: usize,
        decl: Arc<ast::FnDecl>,
        attrs: Vec<ast::Attribute>,
        user: bool,
    ) -> FnItem {
        FnItem {
            qual: self.modules[module].qualify(&decl.name.node),
            module,
            file,
            span: decl.name.span,
            decl,
            attrs,
            params: Vec::new(),
            ret: SurfaceType::unit(),
            ir_name: String::new(),
            user,
            fref: None,
            instance: None,
        }
    }

    fn push_fn(&mut self, f: FnItem) -> usize {
        self.fns.push(f);
        self.fns.len() - 1
    }

    /// Registers the overloads of a size-generic library function, one per size
    /// ([`sizes`]). They differ in their parameter types by construction, so no duplicate
    /// check is needed among them.
    fn collect_sized(&mut self, module: ModId, file: usize, item: &ast::Item, decl: &ast::FnDecl) {
        let found = sizes::size_vars(&item.attrs)
            .unwrap_or_else(|| Ok(Vec::new()))
            .and_then(|vars| Ok((sizes::instances(decl, &vars)?, vars)));
        let (found, vars) = match found {
            Ok(f) => f,
            Err(detail) => {
                let span = item.attrs.first().map_or(decl.name.span, |a| a.span);
                let kind = ErrorKind::UnknownAttribute {
                    name: sizes::ATTRIBUTE.to_string(),
                    help: Some(detail),
                };
                self.error(kind, file, span);
                return;
            }
        };
        let decl = Arc::new(decl.clone());
        let attrs = sizes::other_attributes(&item.attrs);
        let qual = self.modules[module].qualify(&decl.name.node);
        let family: Arc<str> = sizes::family(&qual, &decl, &vars, &found).into();
        for s in found {
            let params = decl
                .params
                .iter()
                .map(|p| self.resolve_type(&sizes::rewrite::type_expr(&p.ty, &s), file))
                .collect();
            let ret = match &decl.ret {
                Some(t) => self.resolve_type(&sizes::rewrite::type_expr(t, &s), file),
                None => SurfaceType::unit(),
            };
            let instance = Some(sizes::Instance {
                sizes: s,
                family: family.clone(),
            });
            let f = self.fn_item(module, file, decl.clone(), attrs.clone(), false);
            let idx = self.push_fn(FnItem {
                params,
                ret,
                instance,
                ..f
            });
            self.modules[module]
                .items
                .entry(decl.name.node.clone())
                .or_default()
                .push(Def::Fn(idx));
        }
    }

    /// A new module `name` declared in `file`, whose items are in `items_file`.
    fn new_module_checked(
        &mut self,
        name: &ast::Ident,
        parent: ModId,
        file: usize,
        items_file: usize,
    ) -> ModId {
        if let Some(first) = self.first_span_of(parent, &name.node) {
            self.error(
                ErrorKind::Duplicate {
                    name: name.node.clone(),
                    first,
                },
                file,
                name.span,
            );
        }
        self.new_module(&name.node, parent, items_file)
    }

    fn add_mesh(
        &mut self,
        module: ModId,
        name: &ast::Ident,
        kind: MeshItemKind,
        file: usize,
        item: &ast::Item,
    ) {
        let idx = self.mesh.len();
        self.mesh.push(MeshItem {
            name: name.node.clone(),
            kind,
            file,
            span: name.span,
            item: item.clone(),
        });
        self.define(module, name, Def::Mesh(idx), file);
    }

    fn def_span(&self, d: Def) -> Option<Span> {
        match d {
            Def::Fn(i) => Some(self.fns[i].span),
            Def::Const(i) => Some(self.consts[i].span),
            Def::Mesh(i) => Some(self.mesh[i].span),
            Def::Mod(_) => None,
        }
    }

    fn first_span_of(&self, module: ModId, name: &str) -> Option<Span> {
        let defs = self.modules[module].items.get(name)?;
        defs.iter()
            .find_map(|d| self.def_span(*d))
            .or(Some(Span::default()))
            .filter(|_| !defs.is_empty())
    }

    /// Adds a definition, reporting a duplicate unless it is a new overload.
    fn define(&mut self, module: ModId, name: &ast::Ident, def: Def, file: usize) {
        if matches!(def, Def::Fn(_) | Def::Const(_))
            && crate::front::lower::builtins::DIFF_OPERATORS.contains(&name.node.as_str())
        {
            self.error(
                ErrorKind::Reserved {
                    name: name.node.clone(),
                },
                file,
                name.span,
            );
            return;
        }
        let existing = self.modules[module]
            .items
            .get(&name.node)
            .cloned()
            .unwrap_or_default();
        for e in &existing {
            let clash = match (*e, def) {
                (Def::Fn(a), Def::Fn(b)) => self.fns[a].params == self.fns[b].params,
                _ => true,
            };
            if clash {
                let first = self.def_span(*e).unwrap_or_default();
                self.error(
                    ErrorKind::Duplicate {
                        name: name.node.clone(),
                        first,
                    },
                    file,
                    name.span,
                );
                return;
            }
        }
        self.modules[module]
            .items
            .entry(name.node.clone())
            .or_default()
            .push(def);
    }

    /// Gives every function its unique IR name.
    pub fn assign_ir_names(&mut self) {
        let mut count: HashMap<String, usize> = HashMap::new();
        for f in &self.fns {
            *count.entry(f.qual.clone()).or_default() += 1;
        }
        for f in &mut self.fns {
            f.ir_name = if count[&f.qual] > 1 {
                let tys: Vec<String> = f
                    .params
                    .iter()
                    .map(|t| {
                        t.to_string()
                            .chars()
                            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                            .collect()
                    })
                    .collect();
                format!("{}${}", f.qual, tys.join("$"))
            } else {
                f.qual.clone()
            };
        }
    }

    pub fn resolve_stencil(&mut self, name: &ast::Ident, file: usize) -> Option<StencilKind> {
        let k = StencilKind::from_name(&name.node);
        if k.is_none() {
            self.error(
                ErrorKind::UnknownStencil {
                    name: name.node.clone(),
                },
                file,
                name.span,
            );
        }
        k
    }

    /// Reads a type expression, reporting unknown names and invalid array elements.
    pub fn resolve_type(&mut self, t: &ast::TypeExpr, file: usize) -> SurfaceType {
        match &t.kind {
            ast::TypeExprKind::Named(name) => match named_type(name) {
                Some(ty) => ty,
                None => {
                    let kind = match fixed_size_error(name) {
                        Some(detail) => ErrorKind::FixedSizeBound { detail },
                        None => ErrorKind::UnknownType { name: name.clone() },
                    };
                    self.error(kind, file, t.span);
                    SurfaceType::Error
                }
            },
            ast::TypeExprKind::Array(elem, n) => {
                let e = self.resolve_type(elem, file);
                self.check_element(&e, file, elem.span);
                SurfaceType::array(e, *n)
            }
            ast::TypeExprKind::Slice(elem) => {
                let e = self.resolve_type(elem, file);
                if e != SurfaceType::Vector {
                    self.check_element(&e, file, elem.span);
                }
                SurfaceType::slice(e)
            }
            ast::TypeExprKind::Tuple(items) => {
                SurfaceType::Tuple(items.iter().map(|t| self.resolve_type(t, file)).collect())
            }
        }
    }

    fn check_element(&mut self, e: &SurfaceType, file: usize, span: Span) {
        if !e.is_array_element() {
            self.error(ErrorKind::BadElementType { ty: e.to_string() }, file, span);
        }
    }

    /// Resolves every `use` in the given items (of module `module`).
    pub fn resolve_uses(&mut self, module: ModId, file: usize, items: &[ast::Item]) {
        let mut mod_idx = 0;
        let children: Vec<ModId> = self.child_modules_in_order(module);
        for item in items {
            match &item.kind {
                ast::ItemKind::Use(tree) => self.resolve_use(module, file, tree),
                ast::ItemKind::Mod { items, .. } => {
                    if let Some(&child) = children.get(mod_idx) {
                        self.resolve_uses(child, file, items);
                    }
                    mod_idx += 1;
                }
                ast::ItemKind::ModFile { .. } => {
                    let loaded = self.module_files.get(file, item).cloned();
                    if let (Some(&child), Some(l)) = (children.get(mod_idx), loaded) {
                        self.resolve_uses(child, l.file, &l.ast.items);
                    }
                    mod_idx += 1;
                }
                _ => {}
            }
        }
    }

    fn child_modules_in_order(&self, module: ModId) -> Vec<ModId> {
        let mut c: Vec<ModId> = (0..self.modules.len())
            .filter(|&m| self.modules[m].parent == Some(module))
            .collect();
        c.sort();
        c
    }

    fn resolve_use(&mut self, module: ModId, file: usize, tree: &ast::UseTree) {
        if tree.prefix.is_empty() {
            // `use std;`, `use m;`: a module already in scope is a no-op; anything else
            // does not exist as a module here.
            if let ast::UseKind::Single(n) = &tree.kind {
                if self.lookup_module(module, &n.node).is_none() {
                    self.error(ErrorKind::UnresolvedImport { path: n.node.clone() }, file, n.span);
                }
                return;
            }
        }
        let Some(target) = self.resolve_module_path(module, &tree.prefix) else {
            let path: Vec<&str> = tree.prefix.iter().map(|i| i.node.as_str()).collect();
            self.error(
                ErrorKind::UnresolvedImport {
                    path: path.join("::"),
                },
                file,
                tree.span,
            );
            return;
        };
        let names: Vec<&ast::Ident> = match &tree.kind {
            ast::UseKind::Glob => {
                self.modules[module].globs.push(target);
                return;
            }
            ast::UseKind::Single(n) => vec![n],
            ast::UseKind::Group(ns) => ns.iter().collect(),
        };
        for n in names {
            match self.modules[target].items.get(&n.node).cloned() {
                Some(defs) => {
                    // The same item imported twice is one item, not two candidates.
                    let known = self.modules[module].uses.entry(n.node.clone()).or_default();
                    for d in defs {
                        if !known.contains(&d) {
                            known.push(d);
                        }
                    }
                }
                None => {
                    let mut path: Vec<&str> = tree.prefix.iter().map(|i| i.node.as_str()).collect();
                    path.push(&n.node);
                    self.error(
                        ErrorKind::UnresolvedImport {
                            path: path.join("::"),
                        },
                        file,
                        n.span,
                    );
                }
            }
        }
    }

    /// A module path: its first segment is a module visible from `from` (itself, an
    /// enclosing module's child, or `std`), the rest are children.
    pub fn resolve_module_path(&self, from: ModId, path: &[ast::Ident]) -> Option<ModId> {
        let (first, rest) = path.split_first()?;
        let mut m = self.lookup_module(from, &first.node)?;
        for seg in rest {
            m = self.child(m, &seg.node)?;
        }
        Some(m)
    }

    fn child(&self, m: ModId, name: &str) -> Option<ModId> {
        self.modules[m]
            .items
            .get(name)?
            .iter()
            .find_map(|d| match d {
                Def::Mod(c) => Some(*c),
                _ => None,
            })
    }

    fn lookup_module(&self, from: ModId, name: &str) -> Option<ModId> {
        let mut cur = Some(from);
        while let Some(m) = cur {
            if let Some(c) = self.child(m, name) {
                return Some(c);
            }
            if let Some(Def::Mod(c)) = self.modules[m].uses.get(name).and_then(|d| d.first()) {
                return Some(*c);
            }
            cur = self.modules[m].parent;
        }
        None
    }

    /// The definitions a single name has in `from`: its own items, its imports,
    /// glob imports, then enclosing modules (innermost first). Builtins and the
    /// prelude are looked up by the caller after this.
    /// The standard library never sees the user's top-level items: a user `sqrt` does not
    /// change what `std::vec::norm` calls.
    pub fn lookup_local_items(&self, from: ModId, name: &str) -> Option<Vec<Def>> {
        let in_std = self.prelude.contains(&from);
        let mut cur = Some(from);
        while let Some(m) = cur {
            if in_std && m == ROOT {
                break;
            }
            let ms = &self.modules[m];
            if let Some(d) = ms.items.get(name) {
                return Some(d.clone());
            }
            if let Some(d) = ms.uses.get(name) {
                return Some(d.clone());
            }
            // Glob imports: every module's items of that name together (all overloads;
            // the same item reached twice is one), as explicit imports of them would be.
            // An explicit import of the name (above) hides them, as in Rust.
            let mut globbed: Vec<Def> = Vec::new();
            for &g in &ms.globs {
                for &d in self.modules[g].items.get(name).into_iter().flatten() {
                    if !globbed.contains(&d) {
                        globbed.push(d);
                    }
                }
            }
            if !globbed.is_empty() {
                return Some(globbed);
            }
            cur = ms.parent;
        }
        None
    }

    /// The one definition a name used as a value (not called) has: `Err` with each
    /// definition's qualified name when imports bring more than one item that is not a
    /// function (two constants, or a constant and functions) from different modules.
    /// Overloads of one function are one value definition (the caller reports a function
    /// used as a value).
    pub fn value_def(&self, defs: &[Def]) -> Result<Def, Vec<String>> {
        let first = *defs.first().ok_or_else(Vec::new)?;
        if defs.len() == 1 || defs.iter().all(|d| matches!(d, Def::Fn(_))) {
            return Ok(first);
        }
        Err(defs.iter().map(|&d| self.qualified(d)).collect())
    }

    /// A definition's name with its module path (`a::K`, `std::vec::dot`).
    pub fn qualified(&self, d: Def) -> String {
        match d {
            Def::Fn(i) => self.fns[i].qual.clone(),
            Def::Const(i) => self.modules[self.consts[i].module].qualify(&self.consts[i].name),
            Def::Mod(m) => self.modules[m].path.join("::"),
            Def::Mesh(i) => self.mesh[i].name.clone(),
        }
    }

    /// The definitions of `name` in the standard library prelude.
    pub fn lookup_prelude(&self, name: &str) -> Option<Vec<Def>> {
        let mut out = Vec::new();
        for &m in &self.prelude {
            if self.modules[m].path.len() < 2 {
                continue;
            }
            if let Some(d) = self.modules[m].items.get(name) {
                out.extend(d.iter().copied().filter(|d| !matches!(d, Def::Mod(_))));
            }
        }
        (!out.is_empty()).then_some(out)
    }

    /// `a::b::c`: the definitions of `c` in module `a::b`.
    pub fn lookup_path(&self, from: ModId, path: &[ast::Ident]) -> Option<Vec<Def>> {
        let (last, prefix) = path.split_last()?;
        if prefix.is_empty() {
            return self
                .lookup_local_items(from, &last.node)
                .or_else(|| self.lookup_prelude(&last.node));
        }
        let m = self.resolve_module_path(from, prefix)?;
        self.modules[m].items.get(&last.node).cloned()
    }

    /// Every name of a value visible from `from` (for suggestions where a value or function
    /// is expected: modules are left out, since `mat` or `math` written as a value is
    /// another error).
    pub fn visible_names(&self, from: ModId) -> Vec<String> {
        let values = |map: &HashMap<String, Vec<Def>>| -> Vec<String> {
            map.iter()
                .filter(|(_, defs)| defs.iter().any(|d| !matches!(d, Def::Mod(_))))
                .map(|(k, _)| k.clone())
                .collect()
        };
        let mut out = Vec::new();
        let mut cur = Some(from);
        while let Some(m) = cur {
            out.extend(values(&self.modules[m].items));
            out.extend(values(&self.modules[m].uses));
            for &g in &self.modules[m].globs {
                out.extend(values(&self.modules[g].items));
            }
            cur = self.modules[m].parent;
        }
        for &m in &self.prelude {
            out.extend(values(&self.modules[m].items));
        }
        out
    }
}

/// Whether a type is or contains a mesh element handle.
fn has_stencil(t: &SurfaceType) -> bool {
    match t {
        SurfaceType::Stencil(_) => true,
        SurfaceType::Array(e, _) | SurfaceType::Slice(e) => has_stencil(e),
        SurfaceType::Tuple(ts) => ts.iter().any(has_stencil),
        _ => false,
    }
}

/// Whether an item is a mesh declaration (those belong to the program's root file).
fn is_mesh_decl(kind: &ast::ItemKind) -> bool {
    use ast::ItemKind as K;
    !matches!(kind, K::Fn(_) | K::Mod { .. } | K::ModFile { .. } | K::Use(_) | K::Const { .. })
}

/// How messages name an item of this kind (`@ad` does not apply to …).
fn item_kind_name(kind: &ast::ItemKind) -> &'static str {
    use ast::ItemKind as K;
    match kind {
        K::Fn(_) => "a `fn`",
        K::Mod { .. } | K::ModFile { .. } => "a `mod`",
        K::Use(_) => "a `use`",
        K::Const { .. } => "a `const`",
        K::Dof { .. } => "a `dof` field",
        K::Data { .. } => "a `data` field",
        K::Param { .. } => "a `param`",
        K::Energy { .. } => "an `energy` term",
        K::Residual { .. } => "a `residual` term",
        K::Objective { .. } => "the `objective`",
        K::State { .. } => "a `state` field",
        K::Update { .. } => "an `update`",
        K::Solve { .. } => "a `solve` block",
        K::Broadphase { .. } => "a `broadphase` declaration",
    }
}
