//! Modules in other files: `mod name;` loads `name.mad`, and `mod name = "path.mad";` the
//! file it names, both relative to the directory of the file that declares them. Files
//! are found, read, parsed and checked here (a missing or unreadable file, files that load
//! each other, one file loaded twice, a program without a file); the item collector then
//! reads a loaded file's items as if they were written in `mod name { … }`.
//!
//! Each file is added to the compilation's [`SourceFiles`] under a name made from the
//! declaring file's name and the path as written (`examples/modules/main.mad` loading
//! `geometry.mad` names it `examples/modules/geometry.mad`), so diagnostics and run-time
//! errors name the file as the user would reach it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use codespan_reporting::diagnostic::Diagnostic;
use mad_grammar::ast;
use mad_grammar::span::Span;

use super::SourceFiles;
use super::diagnostics::{ErrorKind, FrontError};

/// A module whose items were loaded from a file.
#[derive(Clone, Debug)]
pub struct LoadedModule {
    /// The file's id in the compilation's sources.
    pub file: usize,
    pub ast: Arc<ast::File>,
}

/// Every module loaded from a file, by the `mod` item that declares it.
#[derive(Clone, Debug, Default)]
pub struct ModuleFiles {
    /// By (declaring file, start of the `mod` item's span).
    by_item: HashMap<(usize, u32), LoadedModule>,
}

impl ModuleFiles {
    /// The module that `item` (a `mod name;` of file `file`) loaded, if it was loaded.
    pub fn get(&self, file: usize, item: &ast::Item) -> Option<&LoadedModule> {
        self.by_item.get(&(file, item.span.start))
    }
}

/// A file whose `mod` declarations are followed.
struct Pending {
    file: usize,
    /// Where the file was read from (`None`: the program's text came without a file).
    path: Option<PathBuf>,
    /// The files that loaded this one, root first, ending with this one: (canonical
    /// path, name in the sources).
    chain: Vec<(PathBuf, String)>,
}

/// Loads every module file the program `root` (parsed as `root_ast`, read from `path` when
/// it came from a file) declares, transitively. Returns the loaded modules and every
/// error: the module-file errors E0130–E0134, and the loaded files' own parse errors.
pub fn load(
    files: &mut SourceFiles,
    root: usize,
    root_ast: &ast::File,
    path: Option<&Path>,
) -> (ModuleFiles, Vec<Diagnostic<usize>>) {
    let mut loader = Loader {
        files,
        modules: ModuleFiles::default(),
        first_load: HashMap::new(),
        diags: Vec::new(),
    };
    let chain = match (path, loader.name(root)) {
        (Some(p), Some(name)) => vec![(canonical(p), name)],
        _ => Vec::new(),
    };
    let root = Pending {
        file: root,
        path: path.map(Path::to_path_buf),
        chain,
    };
    // Depth first, in source order.
    let mut stack = loader.follow_all(&root, &root_ast.items);
    while let Some((p, ast)) = stack.pop() {
        let children = loader.follow_all(&p, &ast.items);
        stack.extend(children);
    }
    (loader.modules, loader.diags)
}

/// The `mod name;` items among `items`, in source order, including those inside inline
/// `mod name { … }` blocks (whose files are found next to the file they are written in).
fn mod_file_items<'a>(items: &'a [ast::Item], out: &mut Vec<&'a ast::Item>) {
    for item in items {
        match &item.kind {
            ast::ItemKind::ModFile { .. } => out.push(item),
            ast::ItemKind::Mod { items, .. } => mod_file_items(items, out),
            _ => {}
        }
    }
}

/// A path made absolute and free of `..` and links where the file system allows, so that
/// two ways of writing one file compare equal.
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

struct Loader<'f> {
    files: &'f mut SourceFiles,
    modules: ModuleFiles,
    /// Each loaded file (canonical path) with the declaration that loaded it first.
    first_load: HashMap<PathBuf, (usize, Span)>,
    diags: Vec<Diagnostic<usize>>,
}

impl Loader<'_> {
    fn name(&self, file: usize) -> Option<String> {
        self.files.get(file).ok().map(|f| f.name().clone())
    }

    fn error(&mut self, kind: ErrorKind, file: usize, span: Span) {
        self.diags
            .push(FrontError { kind, file, span }.to_diagnostic());
    }

    /// Loads the files of the `mod name;` declarations among `items` (of file `from`);
    /// returns them in reverse source order (the order to pop them from a stack in).
    fn follow_all(
        &mut self,
        from: &Pending,
        items: &[ast::Item],
    ) -> Vec<(Pending, Arc<ast::File>)> {
        let mut sites = Vec::new();
        mod_file_items(items, &mut sites);
        let mut loaded: Vec<_> = sites
            .into_iter()
            .filter_map(|item| self.follow(from, item))
            .collect();
        loaded.reverse();
        loaded
    }

    /// Loads the file of `item`, a `mod name;` of `from`; returns the loaded file, whose
    /// own declarations are to be followed next, or `None` after reporting why not.
    fn follow(&mut self, from: &Pending, item: &ast::Item) -> Option<(Pending, Arc<ast::File>)> {
        let ast::ItemKind::ModFile { name, path } = &item.kind else {
            return None;
        };
        let module = name.node.clone();
        let Some(dir) = from
            .path
            .as_deref()
            .map(|p| p.parent().unwrap_or(Path::new("")))
        else {
            self.error(
                ErrorKind::ModFileWithoutFile { module },
                from.file,
                item.span,
            );
            return None;
        };
        let (written, at) = match path {
            Some(p) => (p.node.clone(), p.span),
            None => (format!("{module}.mad"), name.span),
        };
        let read_path = dir.join(&written);
        let declaring_name = self.name(from.file).unwrap_or_default();
        let shown = Path::new(&declaring_name)
            .parent()
            .unwrap_or(Path::new(""))
            .join(&written)
            .display()
            .to_string();
        let bytes = match std::fs::read(&read_path) {
            Ok(b) => b,
            Err(e) => {
                let kind = if e.kind() == std::io::ErrorKind::NotFound {
                    let named = path.is_some();
                    ErrorKind::ModFileNotFound {
                        module,
                        path: shown,
                        named,
                    }
                } else {
                    let reason = e.to_string();
                    ErrorKind::ModFileUnreadable {
                        module,
                        path: shown,
                        reason,
                    }
                };
                self.error(kind, from.file, at);
                return None;
            }
        };
        let key = canonical(&read_path);
        if let Some(start) = from.chain.iter().position(|(p, _)| *p == key) {
            let mut chain: Vec<String> =
                from.chain[start..].iter().map(|(_, n)| n.clone()).collect();
            chain.push(shown);
            self.error(ErrorKind::ModFileCycle { chain }, from.file, at);
            return None;
        }
        if let Some(&(first_file, first)) = self.first_load.get(&key) {
            let kind = ErrorKind::ModFileTwice {
                path: shown,
                first_file,
                first,
            };
            self.error(kind, from.file, at);
            return None;
        }
        self.first_load.insert(key.clone(), (from.file, at));
        let (file, bad_utf8) = super::source::add_source(self.files, shown.clone(), bytes);
        if let Some(d) = bad_utf8 {
            self.diags.push(d);
            return None;
        }
        let text = match self.files.get(file) {
            Ok(f) => f.source().clone(),
            Err(_) => return None,
        };
        let (parsed, parse_diags) = mad_grammar::parse(&text, file);
        self.diags.extend(parse_diags);
        let ast = Arc::new(parsed);
        self.modules.by_item.insert(
            (from.file, item.span.start),
            LoadedModule {
                file,
                ast: ast.clone(),
            },
        );
        let mut chain = from.chain.clone();
        chain.push((key, shown));
        let pending = Pending {
            file,
            path: Some(read_path),
            chain,
        };
        Some((pending, ast))
    }
}
