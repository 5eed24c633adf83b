//! The embedding API: compile mad source in a Rust host and call its functions
//! with native Rust values.
//!
//! ```
//! use mad::Program;
//!
//! let prog = Program::compile_str(
//!     "demo.mad",
//!     "fn hypot2(a: f64, b: f64) -> f64 { sqrt(a^2 + b^2) }
//!      fn scale(v: vec3, s: f64) -> vec3 { v * s }",
//! )?;
//!
//! // Typed lookup: the Rust signature is checked against the mad one once.
//! let hypot2 = prog.function::<(f64, f64), f64>("hypot2")?;
//! assert_eq!(hypot2.call((3.0, 4.0))?, 5.0);
//!
//! // Fixed-size arrays stand for vec2..vec16 (and `[f64; N]`).
//! let scale = prog.function::<([f64; 3], f64), [f64; 3]>("scale")?;
//! assert_eq!(scale.call(([1.0, 2.0, 3.0], 2.0))?, [2.0, 4.0, 6.0]);
//!
//! // A signature mismatch is an error, not a panic.
//! assert!(prog.function::<(i64,), f64>("hypot2").is_err());
//! # Ok::<(), mad::Error>(())
//! ```
//!
//! [`Matrix`] stands for `matrix` parameters and results; [`load_npy_for`] reads a `.npy`
//! file for a parameter's type and [`save_npy`] writes a result, as `madc run` does.

mod convert;
mod energy;
mod error;
mod matrix;
mod npy;

pub use error::{load_source, locate_message, render, without_bom};

pub use convert::{Args, FromValue, IntoValue};
pub use error::{DiagnosticItem, Diagnostics, Error, SourceLocation};
pub use matrix::Matrix;
pub use npy::{expected_array, fit_array, load_npy_for, save_npy, takes_npy};

use crate::back::interp::{InterpModule, Interpreter};
use crate::back::native::NativeModule;
use crate::back::CompiledModule;
use crate::front::{self, Compiled, FnSig, SourceFiles};
use crate::ir;
use mad_runtime::Value;
use std::io::Write;
use std::marker::PhantomData;
use std::path::Path;

/// Which engine executes calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Engine {
    /// Cranelift JIT-compiled native code (the default).
    #[default]
    Jit,
    /// The reference interpreter of the IR.
    Interpreter,
}

/// A compiled `.mad` program, JIT-compiled and ready to call.
pub struct Program {
    files: SourceFiles,
    compiled: Compiled,
    jit: NativeModule,
}

impl Program {
    /// Compiles source text; `name` is the file name used in diagnostics. The text has no
    /// file, so it cannot declare modules in other files (`mod name;` is error E0134).
    pub fn compile_str(name: &str, source: &str) -> Result<Program, Error> {
        let mut files = SourceFiles::new();
        let id = files.add(name.to_string(), source.to_string());
        Program::compile_files(files, id, None)
    }

    /// Reads and compiles a file, with the module files its `mod name;` declarations load
    /// (found relative to the file that declares them). Bytes that are not UTF-8 are a
    /// diagnostic pointing at the first bad byte.
    pub fn compile_file(path: impl AsRef<Path>) -> Result<Program, Error> {
        let path = path.as_ref();
        let bytes = std::fs::read(path)
            .map_err(|e| Error::Io(format!("cannot read {}: {e}", path.display())))?;
        let (files, id) = error::load_source(path.display().to_string(), bytes)?;
        Program::compile_files(files, id, Some(path))
    }

    /// Compiles file `id` of `files`, read from `path` when it came from a file.
    fn compile_files(
        mut files: SourceFiles,
        id: usize,
        path: Option<&Path>,
    ) -> Result<Program, Error> {
        let compiled = match path {
            Some(path) => front::compile_file(&mut files, id, path),
            None => front::compile(&mut files, id),
        };
        let compiled = match compiled {
            Ok(c) => c,
            Err(diagnostics) => return Err(Error::Compile(Diagnostics::new(files, diagnostics))),
        };
        let jit = crate::back::compile_native(&compiled.module, &[]).map_err(|e| Error::Backend(e.to_string()))?;
        Ok(Program { files, compiled, jit })
    }

    /// The IR of the whole program (user functions and the standard library it uses).
    pub fn module(&self) -> &ir::Module {
        &self.compiled.module
    }

    /// The compiled machine code (for direct calls: [`NativeModule::raw_caller`]).
    pub fn jit(&self) -> &NativeModule {
        &self.jit
    }

    /// The IR function of a user function by name.
    pub fn func_ref(&self, name: &str) -> Result<ir::FuncRef, Error> {
        self.lookup(name).map(|s| s.func)
    }

    /// The front end's result: signatures, mesh declarations.
    pub fn compiled(&self) -> &Compiled {
        &self.compiled
    }

    /// The sources (the user's file, the module files it loads and the standard library),
    /// for rendering diagnostics.
    pub fn files(&self) -> &SourceFiles {
        &self.files
    }

    /// The user-visible functions, in source order.
    pub fn functions(&self) -> &[FnSig] {
        &self.compiled.functions
    }

    /// Every overload of `name`, in source order (at least one).
    fn overloads(&self, name: &str) -> Result<Vec<&FnSig>, Error> {
        let all: Vec<&FnSig> = self.compiled.functions.iter().filter(|s| s.name == name).collect();
        if all.is_empty() {
            self.lookup(name)?;
        }
        Ok(all)
    }

    /// The one overload of `name` that `fits` accepts; with several overloads and none that
    /// fits, an error listing them (with one, that overload's own error).
    fn pick<'s>(
        &'s self,
        name: &str,
        fits: impl Fn(&FnSig) -> Result<(), Error>,
        wanted: impl FnOnce() -> String,
    ) -> Result<&'s FnSig, Error> {
        let all = self.overloads(name)?;
        let mut first_err = None;
        for sig in &all {
            match fits(sig) {
                Ok(()) => return Ok(sig),
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        if all.len() == 1 {
            return Err(first_err.expect("one overload tried"));
        }
        Err(Error::NoOverload {
            name: name.to_string(),
            overloads: all.iter().map(|s| s.to_string()).collect(),
            found: wanted(),
        })
    }

    fn lookup(&self, name: &str) -> Result<&FnSig, Error> {
        self.compiled
            .functions
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| {
                let mut names: Vec<String> = self
                    .compiled
                    .functions
                    .iter()
                    .map(|s| s.name.clone())
                    .collect();
                names.sort();
                names.dedup();
                Error::NoSuchFunction {
                    name: name.to_string(),
                    available: names,
                }
            })
    }

    /// Calls a function with dynamically typed values; `print` writes to standard output.
    /// An overloaded name calls the first overload (in source order) whose parameter types
    /// the values fit.
    pub fn call(&self, name: &str, args: &[Value]) -> Result<Value, Error> {
        let stdout = std::io::stdout();
        let mut lock = stdout.lock();
        self.call_with(Engine::Jit, name, args, &mut lock)
    }

    /// Calls a function on the chosen engine; `print` writes to `out`.
    pub fn call_with(
        &self,
        engine: Engine,
        name: &str,
        args: &[Value],
        out: &mut dyn Write,
    ) -> Result<Value, Error> {
        let sig = self.pick(
            name,
            |sig| convert::check_values(sig, args),
            || format!("the arguments ({})", args.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ")),
        )?;
        self.call_ref(engine, sig.func, args, out)
    }

    fn call_ref(
        &self,
        engine: Engine,
        f: ir::FuncRef,
        args: &[Value],
        out: &mut dyn Write,
    ) -> Result<Value, Error> {
        // Output that cannot be written is an I/O error ("cannot write the output: …"), not a
        // run-time error of the program: the program ran.
        let output_error = |e: std::io::Error| Error::Io(format!("cannot write the output: {e}"));
        let interp = InterpModule::borrowed(&self.compiled.module, Interpreter::default());
        let module: &dyn CompiledModule = match engine {
            Engine::Jit => &self.jit,
            Engine::Interpreter => &interp,
        };
        let mut printed = Vec::new();
        let result = module.call_traced(f, args, &mut printed);
        out.write_all(&printed).map_err(output_error)?;
        result.map_err(|(error, site)| {
            let at = site.and_then(|s| error::locate(&self.files, &error, s.file, s.span));
            Error::Runtime { error, at }
        })
    }

    /// Looks up a function whose mad signature matches the Rust types `A -> R` (among the
    /// overloads of `name`, the first in source order that does).
    pub fn function<A: Args, R: FromValue>(
        &self,
        name: &str,
    ) -> Result<TypedFunction<'_, A, R>, Error> {
        let sig = self.pick(name, convert::check_signature::<A, R>, || format!("the Rust types `{}`", convert::rust_signature::<A, R>()))?;
        Ok(TypedFunction {
            program: self,
            func: sig.func,
            _marker: PhantomData,
        })
    }
}

/// A function of a [`Program`] with a checked Rust signature `A -> R`.
pub struct TypedFunction<'p, A, R> {
    program: &'p Program,
    func: ir::FuncRef,
    _marker: PhantomData<fn(A) -> R>,
}

impl<A: Args, R: FromValue> TypedFunction<'_, A, R> {
    /// Calls the JIT-compiled function; `print` writes to standard output.
    pub fn call(&self, args: A) -> Result<R, Error> {
        let stdout = std::io::stdout();
        let mut lock = stdout.lock();
        self.call_with_output(args, &mut lock)
    }

    /// Calls the JIT-compiled function; `print` writes to `out`.
    pub fn call_with_output(&self, args: A, out: &mut dyn Write) -> Result<R, Error> {
        let values = args.into_values();
        let v = self
            .program
            .call_ref(Engine::Jit, self.func, &values, out)?;
        R::from_value(v).ok_or_else(|| {
            Error::runtime(mad_runtime::RtError::Other(
                "unexpected result shape".into(),
            ))
        })
    }
}
