//! The subcommands of `madc`. Each returns the process exit code:
//! 0 on success, 1 when the program does not compile (or a file cannot be read,
//! or the command line is wrong for the program), 2 when it fails at run time.

use crate::api::{self, Diagnostics, Error};
use crate::front::{self, SurfaceType};
use crate::ir;
use std::path::Path;

/// Prints an error as `madc` reports it; returns the exit code (2 for a run-time error, else 1).
pub(super) fn report(err: &Error, color: bool) -> i32 {
    match err {
        Error::Compile(d) => {
            eprint!("{}", d.render(color));
            let n = d.diagnostics.len();
            eprintln!(
                "error: could not compile: {n} error{}",
                if n == 1 { "" } else { "s" }
            );
        }
        Error::Runtime { error, at } => {
            match at {
                Some(at) => eprint!("{}", at.snippet),
                None => eprintln!("error: run-time error: {error}"),
            }
            return 2;
        }
        other => eprintln!("error: {other}"),
    }
    1
}

/// Loads and runs the front end only (loading the module files `file` declares).
pub(super) fn front_end(file: &Path) -> Result<(front::Compiled, front::SourceFiles), Error> {
    let bytes = std::fs::read(file)
        .map_err(|e| Error::Io(format!("cannot read {}: {e}", file.display())))?;
    let (mut files, id) = api::load_source(file.display().to_string(), bytes)?;
    match front::compile_file(&mut files, id, file) {
        Ok(c) => Ok((c, files)),
        Err(d) => Err(Error::Compile(Diagnostics::new(files, d))),
    }
}

pub fn check(file: &Path, color: bool) -> i32 {
    match front_end(file) {
        Ok(_) => 0,
        Err(e) => report(&e, color),
    }
}

/// `madc explain FILE`: the differentiation mode of every region of every user function.
pub fn explain(file: &Path, color: bool) -> i32 {
    let (compiled, files) = match front_end(file) {
        Ok(c) => c,
        Err(e) => return report(&e, color),
    };
    print!("{}", crate::front::explain::explain(&compiled, &files));
    0
}

pub fn emit(kind: super::EmitKind, file: &Path, color: bool) -> i32 {
    let (compiled, _files) = match front_end(file) {
        Ok(c) => c,
        Err(e) => return report(&e, color),
    };
    let text = match kind {
        super::EmitKind::Ir => ir::print::print_module(&compiled.module),
        super::EmitKind::Clif => {
            let mut text = match crate::back::clif_text(&compiled.module, &[]) {
                Ok(t) => t,
                Err(e) => return report(&Error::Backend(e.to_string()), color),
            };
            // Energy files: also the batched element loops of their terms.
            if !compiled.mesh.energies.is_empty() {
                match crate::energy::EnergyProgram::new(&compiled).and_then(|p| p.batch_clif()) {
                    Ok(t) => text.push_str(&t),
                    Err(e) => return report(&Error::Backend(e.to_string()), color),
                }
            }
            text
        }
    };
    print!("{text}");
    0
}

/// `madc emit ir --grad NAME FILE` (and `--hessian`, `--jvp`, `--vjp`): the cleaned
/// IR of a derivative of user function NAME.
pub fn emit_derivative(
    kind: super::EmitKind,
    file: &Path,
    name: &str,
    which: crate::ad::show::Derivative,
    color: bool,
) -> i32 {
    if kind != super::EmitKind::Ir {
        eprintln!("error: --grad, --hessian, --jvp and --vjp only apply to `madc emit ir`");
        return 1;
    }
    let (mut compiled, _files) = match front_end(file) {
        Ok(c) => c,
        Err(e) => return report(&e, color),
    };
    let overloads: Vec<_> = compiled
        .functions
        .iter()
        .filter(|s| s.name == name)
        .map(|s| (s.func, s.to_string(), s.ret.clone()))
        .collect();
    if overloads.is_empty() {
        eprintln!("error: {} has no function `{name}`", file.display());
        return 1;
    }
    // An overloaded name: the derivative of every overload that has one.
    let mut text = String::new();
    let mut errors = Vec::new();
    use crate::ad::show::Derivative;
    for (f, sig, ret) in &overloads {
        // The result type, in the source's words, for the operators that need an `f64`.
        let op = match which {
            Derivative::Grad => Some("grad"),
            Derivative::Hessian => Some("hessian"),
            _ => None,
        };
        if let Some(op) = op
            && *ret != SurfaceType::F64
        {
            errors.push(format!("`{op}` needs a function returning f64, and `{sig}` returns {ret}"));
            continue;
        }
        match crate::ad::show::derivative_ir(&mut compiled.module, *f, which) {
            Ok(t) => text.push_str(&t),
            Err(e) => errors.push(format!("cannot differentiate `{sig}`: {e}")),
        }
    }
    if text.is_empty() {
        for e in errors {
            eprintln!("error: {e}");
        }
        return 1;
    }
    print!("{text}");
    0
}
