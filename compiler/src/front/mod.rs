//! The compiler's front end: from `.mad` source to a checked, validated IR module.
//!
//! [`compile`] parses the user's file and the standard library ([`compile_file`] also
//! loads the files its `mod name;` declarations name, [`modfiles`]), collects items
//! and resolves imports ([`items`]), type-checks and lowers every function body
//! reachable from the user's program, and every energy and residual body
//! ([`lower`], [`mesh`]), generates the derivatives the differentiation operators
//! ask for ([`derive`](mod@derive)), then validates the IR. Every error found is returned,
//! as codespan-reporting diagnostics with the stable codes of [`diagnostics`].
//!
//! ```
//! use mad::front::{SourceFiles, compile};
//! let mut files = SourceFiles::new();
//! let id = files.add("sq.mad".to_string(), "fn sq(x: f64) -> f64 { x * x }".to_string());
//! let c = compile(&mut files, id).unwrap();
//! assert_eq!(c.functions[0].name, "sq");
//! assert_eq!(c.functions[0].to_string(), "fn sq(x: f64) -> f64");
//! ```

pub mod broadphase;
pub mod derive;
pub mod derive_dense;
pub mod diagnostics;
pub mod explain;
pub mod items;
pub mod locate;
pub mod lower;
pub mod mesh;
pub mod modfiles;
pub mod solve;
pub mod sizes;
pub mod source;
pub mod state;
pub mod stdlib;
pub mod types;

use crate::ir::{self, FuncRef};
use codespan_reporting::diagnostic::Diagnostic;
use codespan_reporting::files::SimpleFiles;
use std::fmt;
use std::path::Path;

pub use diagnostics::{ErrorKind, FrontError};
pub use mesh::{FieldDecl, InputAt, MeshDecls, ObjExpr, ParamDecl, TermDecl, TermInput};
pub use types::{StencilKind, SurfaceType};

/// The source files of one compilation (the user's file, the module files it loads, and
/// the standard library).
pub type SourceFiles = SimpleFiles<String, String>;

/// A user-visible function: its (qualified) name, surface signature and IR function.
#[derive(Clone, Debug, PartialEq)]
pub struct FnSig {
    /// `area`, or `geo::area` for an item of `mod geo`.
    pub name: String,
    /// The parameters' surface types.
    pub params: Vec<SurfaceType>,
    /// The parameters' names, in the same order.
    pub param_names: Vec<String>,
    pub ret: SurfaceType,
    pub func: FuncRef,
}

/// `fn geo::area(a: vec2, b: vec2) -> f64`
impl fmt::Display for FnSig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "fn {}(", self.name)?;
        for (i, (n, t)) in self.param_names.iter().zip(&self.params).enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            write!(f, "{n}: {t}")?;
        }
        write!(f, ")")?;
        if !self.ret.is_unit() {
            write!(f, " -> {}", self.ret)?;
        }
        Ok(())
    }
}

/// The result of a successful compilation.
#[derive(Clone, Debug)]
pub struct Compiled {
    pub module: ir::Module,
    /// The id of the program's root file in the compilation's sources (module files it
    /// loads have other ids).
    pub file: usize,
    /// The user's functions (not the standard library's), in source order.
    pub functions: Vec<FnSig>,
    pub mesh: MeshDecls,
}

impl Compiled {
    /// The user function with this name (the first overload).
    pub fn function(&self, name: &str) -> Option<&FnSig> {
        self.functions.iter().find(|f| f.name == name)
    }
}

/// Compiles the file `file_id` of `files`, a text that came without a file: a `mod name;`
/// in it is error E0134 (see [`compile_file`]). The standard library's sources are
/// added to `files` (so diagnostics in them can be rendered). Returns every
/// parse, name, type and declaration error found.
pub fn compile(
    files: &mut SourceFiles,
    file_id: usize,
) -> Result<Compiled, Vec<Diagnostic<usize>>> {
    compile_at(files, file_id, None)
}

/// Compiles the file `file_id` of `files`, whose text was read from `path`: each
/// `mod name;` loads `name.mad` (`mod name = "p.mad";` the file `p.mad`) from the directory
/// of the file that declares it, and those files are added to `files`. Otherwise as
/// [`compile`].
pub fn compile_file(
    files: &mut SourceFiles,
    file_id: usize,
    path: &Path,
) -> Result<Compiled, Vec<Diagnostic<usize>>> {
    compile_at(files, file_id, Some(path))
}

fn compile_at(
    files: &mut SourceFiles,
    file_id: usize,
    path: Option<&Path>,
) -> Result<Compiled, Vec<Diagnostic<usize>>> {
    let src = match files.get(file_id) {
        Ok(f) => f.source().clone(),
        Err(e) => {
            return Err(vec![
                Diagnostic::error().with_message(format!("no source file {file_id}: {e}")),
            ]);
        }
    };
    let mut diags = Vec::new();
    let (user, parse_diags) = mad_grammar::parse(&src, file_id);
    diags.extend(parse_diags);
    let (module_files, load_diags) = modfiles::load(files, file_id, &user, path);
    diags.extend(load_diags);
    let mut std_files = Vec::new();
    for (module, name, text) in stdlib::MODULES {
        let id = files.add(name.to_string(), text.to_string());
        let (ast, d) = mad_grammar::parse(text, id);
        diags.extend(d);
        std_files.push((module, id, ast));
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    let std_refs: Vec<(&str, usize, &mad_grammar::ast::File)> = std_files
        .iter()
        .map(|(m, id, ast)| (*m, *id, ast))
        .collect();
    check_and_lower(file_id, &user, &module_files, &std_refs)
}

/// Checks and lowers parsed files: the user's, the module files it loaded, and the
/// standard library modules (`(module name, file id, ast)`).
pub fn check_and_lower(
    file_id: usize,
    user: &mad_grammar::ast::File,
    module_files: &modfiles::ModuleFiles,
    std: &[(&str, usize, &mad_grammar::ast::File)],
) -> Result<Compiled, Vec<Diagnostic<usize>>> {
    let mut it = items::Items::new(file_id, module_files.clone());
    it.collect(items::ROOT, file_id, &user.items, true);
    for (name, id, ast) in std {
        it.add_std_module(name, *id, ast);
    }
    it.resolve_uses(items::ROOT, file_id, &user.items);
    for (k, (_, id, ast)) in std.iter().enumerate() {
        if let Some(&m) = it.prelude.get(k + 1) {
            it.resolve_uses(m, *id, &ast.items);
        }
    }
    it.assign_ir_names();
    let mut g = lower::Front::new(it);
    // User functions first, in source order, so their FuncRefs come first.
    let user_fns: Vec<usize> = (0..g.items.fns.len())
        .filter(|&i| g.items.fns[i].user)
        .collect();
    for &i in &user_fns {
        g.fref(i);
    }
    g.worklist.reverse();
    g.drain();
    for i in 0..g.items.consts.len() {
        g.const_value(i);
    }
    let mesh = mesh::check_mesh(&mut g);
    g.drain();
    if g.items.errors.is_empty() {
        derive::generate(&mut g);
        derive::check_sct_terms(&mut g, &mesh);
    }
    if !g.items.errors.is_empty() {
        let mut errs = std::mem::take(&mut g.items.errors);
        errs.sort_by_key(|e| (e.file, e.span.start, e.span.end));
        errs.dedup();
        return Err(errs.iter().map(FrontError::to_diagnostic).collect());
    }
    if !g.bugs.is_empty() {
        return Err(g
            .bugs
            .iter()
            .map(|m| Diagnostic::bug().with_message(m.clone()))
            .collect());
    }
    if let Err(errs) = ir::validate::validate_module(&g.module) {
        return Err(errs
            .iter()
            .map(|e| {
                Diagnostic::bug().with_message(format!(
                    "the front end produced invalid IR: {}: {}",
                    e.function, e.message
                ))
            })
            .collect());
    }
    let functions = user_fns
        .iter()
        .filter_map(|&i| {
            let f = &g.items.fns[i];
            Some(FnSig {
                name: f.qual.clone(),
                params: f.params.clone(),
                param_names: f.decl.params.iter().map(|p| p.name.node.clone()).collect(),
                ret: f.ret.clone(),
                func: f.fref?,
            })
        })
        .collect();
    Ok(Compiled {
        module: g.module,
        file: file_id,
        functions,
        mesh,
    })
}
