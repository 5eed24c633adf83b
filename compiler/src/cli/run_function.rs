//! `madc run` (and `madc bench --entry`) on a function (`main`, or `--entry NAME`): the arguments after `--` read for
//! its parameters (numbers as text; scalars and arrays from `.npy` files), the call, and
//! its result printed, or written to a `.npy` file with `--out-npy`.
//!
//! Every argument that cannot fill its parameter is an error before the program runs,
//! naming the argument (position and parameter) and what the parameter expects.

use super::commands::report;
use crate::api::{self, Engine, Program};
use crate::front::{FnSig, SurfaceType};
use mad_runtime::Value;
use std::io::Write;
use std::path::Path;

/// Whether a command-line argument names a `.npy` file (by its extension, in any case).
fn is_npy_path(text: &str) -> bool {
    Path::new(text).extension().is_some_and(|e| e.eq_ignore_ascii_case("npy"))
}

/// Parses a command-line number for a scalar parameter of type `ty`. A number written finite
/// that does not fit the float type (`1e400` as an `f64`, `1e39` as an `f32`) is an error,
/// as the same literal in source is (E0101) and as `--set` treats it; `inf`, `-inf` and
/// `nan` spelled out are taken as written.
fn parse_scalar(text: &str, ty: &SurfaceType) -> Result<Value, String> {
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
        SurfaceType::I64 => text.parse::<i64>().map(Value::I64).map_err(|_| bad("an i64")),
        SurfaceType::Bool => text
            .parse::<bool>()
            .map(Value::Bool)
            .map_err(|_| bad("a bool (`true` or `false`)")),
        other => Err(format!(
            "`{text}` is not a .npy file (a path ending in `.npy`), which is how a `{other}` is \
             given; expected a .npy file holding {}",
            api::expected_array(other)
        )),
    }
}

/// The argument `text` for a parameter of type `ty`: a `.npy` file, or a number.
fn argument(text: &str, ty: &SurfaceType) -> Result<Value, String> {
    if is_npy_path(text) {
        api::load_npy_for(text, ty).map_err(|e| e.to_string())
    } else {
        parse_scalar(text, ty)
    }
}

/// `argument 2 (`m: matrix`)`.
fn which(sig: &FnSig, i: usize) -> String {
    format!("argument {} (`{}: {}`)", i + 1, sig.param_names[i], sig.params[i])
}

/// Why the arguments cannot be given to `sig`, before any is read: a parameter no
/// command-line argument can fill, a result `--out-npy` cannot write, a wrong count.
fn check_call(sig: &FnSig, args: &[String], out_npy: Option<&Path>) -> Result<(), String> {
    let entry = &sig.name;
    if let Some(i) = sig.params.iter().position(|ty| !api::takes_npy(ty)) {
        return Err(format!(
            "`{entry}` cannot be run from the command line: {} cannot be given there \
             (signature: {sig}); parameters must be scalars (f64, f32, i64, bool: numbers or \
             .npy files) or arrays (.npy files)",
            which(sig, i)
        ));
    }
    if let (Some(path), SurfaceType::Tuple(items)) = (out_npy, &sig.ret) {
        let what = if items.is_empty() {
            "returns nothing".to_string()
        } else {
            format!("returns a tuple `{}`, and a .npy file holds one array", sig.ret)
        };
        return Err(format!("--out-npy {}: `{entry}` {what} (signature: {sig})", path.display()));
    }
    let (n, given) = (sig.params.len(), args.len());
    if given != n {
        let plural = |k: usize, word: &str| format!("{k} {word}{}", if k == 1 { "" } else { "s" });
        let detail = if given < n {
            let missing: Vec<String> = (given..n).map(|i| which(sig, i)).collect();
            format!("missing {}", missing.join(", "))
        } else {
            let extra: Vec<String> = args[n..].iter().map(|a| format!("`{a}`")).collect();
            format!("extra {}", extra.join(", "))
        };
        return Err(format!(
            "`{entry}` takes {} but {} given after `--` ({detail}; signature: {sig})",
            plural(n, "argument"),
            if given == 1 { "1 was".to_string() } else { format!("{given} were") },
        ));
    }
    Ok(())
}

/// The values of `args` for the parameters of `entry` in `program`, or (having reported why
/// not) the exit code.
fn read_arguments(program: &Program, file: &Path, entry: &str, args: &[String], out_npy: Option<&Path>) -> Result<Vec<Value>, i32> {
    let overloads: Vec<_> = program.functions().iter().filter(|s| s.name == entry).collect();
    let Some(&sig) = overloads.first() else {
        eprintln!("error: {} has no function `{entry}` to run", file.display());
        if entry == "main" {
            eprintln!(
                "help: add `fn main() {{ ... }}`, or choose another function with `--entry NAME`"
            );
        }
        return Err(1);
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
        return Err(1);
    }
    if let Err(m) = check_call(sig, args, out_npy) {
        eprintln!("error: {m}");
        return Err(1);
    }
    let mut values = Vec::with_capacity(args.len());
    for (i, (text, ty)) in args.iter().zip(&sig.params).enumerate() {
        match argument(text, ty) {
            Ok(v) => values.push(v),
            Err(m) => {
                eprintln!("error: {} of `{entry}`: {m}", which(sig, i));
                return Err(1);
            }
        }
    }
    Ok(values)
}

/// `madc bench --entry NAME FILE -- ARGS`: compiles `file`, reads the arguments as `madc run`
/// does, calls `entry` 3 times untimed and `runs` times timed (what it prints is dropped), and
/// prints the median, min and max time of one call.
pub(super) fn bench_function(file: &Path, entry: &str, args: &[String], runs: usize, color: bool) -> i32 {
    if runs == 0 {
        eprintln!("error: --runs 0: the number of timed calls must be at least 1");
        return 1;
    }
    let program = match Program::compile_file(file) {
        Ok(p) => p,
        Err(e) => return report(&e, color),
    };
    let values = match read_arguments(&program, file, entry, args, None) {
        Ok(v) => v,
        Err(code) => return code,
    };
    let mut times = Vec::with_capacity(runs);
    for i in 0..3 + runs {
        let start = std::time::Instant::now();
        let result = program.call_with(Engine::Jit, entry, &values, &mut std::io::sink());
        let elapsed = start.elapsed().as_secs_f64() * 1e3;
        if let Err(e) = result {
            return report(&e, color);
        }
        if i >= 3 {
            times.push(elapsed);
        }
    }
    times.sort_by(f64::total_cmp);
    let median = if runs % 2 == 1 { times[runs / 2] } else { 0.5 * (times[runs / 2 - 1] + times[runs / 2]) };
    let text = format!(
        "median {median:.6} ms\nmin {:.6} ms\nmax {:.6} ms\ncalls/s {:.1}\nruns {runs}\n",
        times[0],
        times[runs - 1],
        1e3 / median
    );
    super::stdout::write(text.as_bytes());
    0
}

/// `madc run` on a compiled program: runs `entry` with `args` read for its parameters; a
/// non-unit result is printed, or written to `out_npy`.
pub(super) fn run_program(
    program: &Program,
    file: &Path,
    entry: &str,
    interp: bool,
    args: &[String],
    out_npy: Option<&Path>,
    color: bool,
) -> i32 {
    let values = match read_arguments(program, file, entry, args, out_npy) {
        Ok(v) => v,
        Err(code) => return code,
    };
    let engine = if interp { Engine::Interpreter } else { Engine::Jit };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let result = program.call_with(engine, entry, &values, &mut out);
    let code = match (result, out_npy) {
        (Ok(v), Some(path)) => match api::save_npy(path, &v) {
            Ok(()) => 0,
            Err(e) => {
                super::stdout::note(out.flush());
                eprintln!("error: --out-npy {e}");
                1
            }
        },
        (Ok(v), None) => {
            if !matches!(&v, Value::Tuple(t) if t.is_empty()) {
                super::stdout::note(writeln!(out, "{v}"));
            }
            0
        }
        (Err(e), _) => {
            super::stdout::note(out.flush());
            report(&e, color)
        }
    };
    super::stdout::note(out.flush());
    code
}
