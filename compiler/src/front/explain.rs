//! `madc explain` of a whole file: every user function's AD mode plan
//! ([`crate::ad::explain`]), then the file's mesh terms and updates.

use std::fmt::Write;

use super::SourceFiles;
use crate::ir::FuncRef;

/// What `madc explain` prints for a compiled program whose sources are `files`: each user
/// function's signature (followed by `(in FILE)` for a function of a module file, whose
/// positions are then in that file), then its regions; then each `energy` term's body the
/// same way (its gradient is taken by the same reverse mode, its Hessian by forward mode
/// over it); each `residual` term (its Jacobian is taken by forward mode, one seed per
/// unknown of the element, with no reverse pass); then each `update`, whose body is
/// evaluated without derivatives.
pub fn explain(compiled: &super::Compiled, files: &SourceFiles) -> String {
    let mut out = String::new();
    for sig in &compiled.functions {
        let _ = write!(out, "{sig}");
        out.push_str(&regions(compiled, files, sig.func));
    }
    let mesh = &compiled.mesh;
    for t in &mesh.energies {
        let _ = write!(out, "energy {}(e: {})", t.name, t.stencil.name());
        out.push_str(&regions(compiled, files, t.func));
    }
    for t in &mesh.residuals {
        let _ = writeln!(out, "residual {}(e: {})", t.name, t.stencil.name());
        out.push_str(
            "  forward mode: the Jacobian column by column, one seed per unknown of the element \
             (loops and ifs carry tangents; no tape)\n",
        );
    }
    for u in &mesh.updates {
        let _ = writeln!(out, "update {}(e: {})", u.term.name, u.term.stencil.name());
        out.push_str("  evaluated without derivatives (updates are constant to differentiation)\n");
    }
    out
}

/// The end of a function's header line (its file, when that is not the root file) and
/// its regions, placed in the text of the file its spans point into.
fn regions(compiled: &super::Compiled, files: &SourceFiles, f: FuncRef) -> String {
    let file = compiled.module.functions[f]
        .source_file
        .unwrap_or(compiled.file);
    let (name, source) = match files.get(file) {
        Ok(sf) => (sf.name().as_str(), sf.source().as_str()),
        Err(_) => ("", ""),
    };
    let mut out = String::new();
    if file != compiled.file {
        let _ = write!(out, " (in {name})");
    }
    out.push('\n');
    out.push_str(&crate::ad::explain::explain_function(
        &compiled.module,
        f,
        source,
    ));
    out
}
