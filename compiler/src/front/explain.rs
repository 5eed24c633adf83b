//! `madc explain` of a whole file: every user function's AD mode plan
//! ([`crate::ad::explain`]), then the file's mesh terms and updates.

use std::fmt::Write;

/// What `madc explain` prints for a compiled file whose source text is `source`:
/// each user function's signature, then its regions; then each `energy` term's body the
/// same way (its gradient is taken by the same reverse mode, its Hessian by forward mode
/// over it); each `residual` term (its Jacobian is taken by forward mode, one seed per
/// unknown of the element, with no reverse pass); then each `update`, whose body is
/// evaluated without derivatives.
pub fn explain(compiled: &super::Compiled, source: &str) -> String {
    let mut out = String::new();
    for sig in &compiled.functions {
        let _ = writeln!(out, "{sig}");
        out.push_str(&crate::ad::explain::explain_function(&compiled.module, sig.func, source));
    }
    let mesh = &compiled.mesh;
    for t in &mesh.energies {
        let _ = writeln!(out, "energy {}(e: {})", t.name, t.stencil.name());
        out.push_str(&crate::ad::explain::explain_function(&compiled.module, t.func, source));
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
