//! The subcommands of `madc`. Each returns the process exit code:
//! 0 on success, 1 when the program does not compile (or a file cannot be read,
//! or the command line is wrong for the program), 2 when it fails at run time.

use crate::api::{self, Diagnostics, Engine, Error, Program};
use crate::front::{self, SurfaceType};
use crate::ir;
use mad_runtime::Value;
use std::io::Write;
use std::path::Path;

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

/// Loads and runs the front end only.
fn front_end(file: &Path) -> Result<(front::Compiled, front::SourceFiles), Error> {
    let bytes = std::fs::read(file)
        .map_err(|e| Error::Io(format!("cannot read {}: {e}", file.display())))?;
    let (mut files, id) = api::load_source(file.display().to_string(), bytes)?;
    match front::compile(&mut files, id) {
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
    let (compiled, _files) = match front_end(file) {
        Ok(c) => c,
        Err(e) => return report(&e, color),
    };
    let source = match std::fs::read(file) {
        Ok(b) => String::from_utf8_lossy(api::without_bom(&b)).into_owned(),
        Err(e) => {
            return report(
                &Error::Io(format!("cannot read {}: {e}", file.display())),
                color,
            );
        }
    };
    print!("{}", crate::front::explain::explain(&compiled, &source));
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

/// Parses a command-line argument for a parameter of type `ty`. A number written finite
/// that does not fit the float type (`1e400` as an `f64`, `1e39` as an `f32`) is an error,
/// as the same literal in source is (E0101) and as `--set` treats it; `inf`, `-inf` and
/// `nan` spelled out are taken as written.
fn parse_arg(text: &str, ty: &SurfaceType) -> Result<Value, String> {
    let bad = |what: &str| format!("`{text}` is not {what}");
    let spelled_inf = text.trim_start_matches(['+', '-']).to_ascii_lowercase().starts_with("inf");
    let in_range = |infinite: bool, ty: &str| {
        if infinite && !spelled_inf {
            Err(format!("`{text}` is out of the range of {ty} (write `inf` for an infinite value)"))
        } else {
            Ok(())
        }
    };
    match ty {
        SurfaceType::F64 => {
            let x = text.parse::<f64>().map_err(|_| bad("an f64"))?;
            in_range(x.is_infinite(), "f64")?;
            Ok(Value::F64(x))
        }
        SurfaceType::F32 => {
            let x = text.parse::<f32>().map_err(|_| bad("an f32"))?;
            in_range(x.is_infinite(), "f32")?;
            Ok(Value::F32(x))
        }
        SurfaceType::I64 => text
            .parse::<i64>()
            .map(Value::I64)
            .map_err(|_| bad("an i64")),
        SurfaceType::Bool => text
            .parse::<bool>()
            .map(Value::Bool)
            .map_err(|_| bad("a bool (`true` or `false`)")),
        other => Err(format!(
            "a parameter of type `{other}` cannot be given on the command line"
        )),
    }
}

/// `madc run` on a compiled program: runs `entry` with `args` parsed for its
/// parameters and prints a non-unit result.
pub(super) fn run_program(
    program: &Program,
    file: &Path,
    entry: &str,
    interp: bool,
    args: &[String],
    color: bool,
) -> i32 {
    let overloads: Vec<_> = program.functions().iter().filter(|s| s.name == entry).collect();
    let Some(&sig) = overloads.first() else {
        eprintln!("error: {} has no function `{entry}` to run", file.display());
        if entry == "main" {
            eprintln!(
                "help: add `fn main() {{ ... }}`, or choose another function with `--entry NAME`"
            );
        }
        return 1;
    };
    // Command-line text does not say which overload it is for (`3` reads as an i64 and as
    // an f64): an overloaded name is not an entry point.
    if overloads.len() > 1 {
        eprintln!("error: `{entry}` is overloaded, so it cannot be run from the command line:");
        for s in &overloads {
            eprintln!("  {s}");
        }
        eprintln!(
            "help: add a function with a name of its own that calls the overload you mean, \
             and run it with `--entry NAME`"
        );
        return 1;
    }
    // A parameter no command-line text can fill is the problem, whatever the count.
    if let Some(ty) = sig
        .params
        .iter()
        .find(|ty| !matches!(ty, SurfaceType::F64 | SurfaceType::F32 | SurfaceType::I64 | SurfaceType::Bool))
    {
        eprintln!(
            "error: `{entry}` cannot be run from the command line: a parameter of type `{ty}` \
             cannot be given there (signature: {sig}); parameters must be f64, f32, i64 or bool"
        );
        return 1;
    }
    if args.len() != sig.params.len() {
        eprintln!(
            "error: `{entry}` takes {} argument(s) but {} were given after `--` (signature: {sig})",
            sig.params.len(),
            args.len()
        );
        return 1;
    }
    let mut values = Vec::with_capacity(args.len());
    for (text, ty) in args.iter().zip(&sig.params) {
        match parse_arg(text, ty) {
            Ok(v) => values.push(v),
            Err(m) => {
                eprintln!("error: bad argument for `{entry}`: {m}");
                return 1;
            }
        }
    }
    let engine = if interp {
        Engine::Interpreter
    } else {
        Engine::Jit
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let result = program.call_with(engine, entry, &values, &mut out);
    let code = match result {
        Ok(v) => {
            if !matches!(&v, Value::Tuple(t) if t.is_empty()) {
                super::stdout::note(writeln!(out, "{v}"));
            }
            0
        }
        Err(e) => {
            super::stdout::note(out.flush());
            report(&e, color)
        }
    };
    super::stdout::note(out.flush());
    code
}
