//! The reference interpreter: runs IR directly on [`mad_runtime::Value`]s.
//!
//! It is the semantics every other back end is tested against. Elementwise scalar
//! semantics come from [`mad_runtime::ops`], and the tensor ops (`tensor.pack`, `full`,
//! `extract`, `index`, `insert`, `dim`, `matmul`, `transpose`, `sum`) from
//! [`mad_runtime::jit::tensor::apply`]: the routines compiled code calls on heap tensors,
//! so every back end shares one definition of them (reductions sequential, left to right,
//! no fused multiply-add). Every failure is an [`RtError`], never a panic, even on a
//! module that does not validate.
//!
//! ```
//! use mad::ir::parse::parse_module;
//! use mad::back::interp;
//! use mad_runtime::Value;
//! let m = parse_module("func @sq(%x: f64) -> f64 {\n  %y = mul %x, %x : f64\n  return %y\n}\n").unwrap();
//! let f = m.find("sq").unwrap();
//! let y = interp::call(&m, f, &[Value::F64(3.0)], &mut std::io::sink()).unwrap();
//! assert_eq!(y, Value::F64(9.0));
//! ```
//!
//! # Stack use
//!
//! The interpreter recurses on the host stack: once per IR call and once per nested
//! region. [`Interpreter::max_call_depth`] bounds the call depth, so too deep a
//! recursion returns [`RtError::RecursionLimit`] instead of overflowing the stack.
//! In a debug build one call level whose recursive call sits inside an `scf.if`
//! takes about 7 KiB of stack. The default, [`DEFAULT_MAX_CALL_DEPTH`] (12 000),
//! therefore needs a thread with a 256 MiB stack
//! (`std::thread::Builder::new().stack_size(256 << 20)`): there a recursion of
//! depth 10 000 runs, with room for a few more nested regions per level, and a
//! deeper one stops with `RecursionLimit`. The main thread's 8 MiB stack holds
//! about a thousand such levels: lower the limit when running on a small stack.

mod call;
mod control;
mod elementwise;
mod eval;
mod frame;
mod tape;

use crate::back::ErrorSite;
use crate::ir::{FuncRef, Module};
use mad_runtime::{RtError, Value};

pub use tape::last_use as last_tape_use;
pub use tape::set_last_use as set_last_tape_use;

/// The default bound on nested calls.
pub const DEFAULT_MAX_CALL_DEPTH: usize = 12_000;

/// The stack a thread running the interpreter at [`DEFAULT_MAX_CALL_DEPTH`] needs (module
/// docs): what [`InterpModule`] gives the thread it runs a call on.
pub const STACK_SIZE: usize = 256 << 20;

/// Interpreter options.
#[derive(Clone, Debug)]
pub struct Interpreter {
    /// Calls nested deeper than this fail with [`RtError::RecursionLimit`].
    pub max_call_depth: usize,
}

impl Default for Interpreter {
    fn default() -> Self {
        Interpreter {
            max_call_depth: DEFAULT_MAX_CALL_DEPTH,
        }
    }
}

impl Interpreter {
    pub fn new() -> Interpreter {
        Interpreter::default()
    }

    pub fn with_max_call_depth(mut self, depth: usize) -> Interpreter {
        self.max_call_depth = depth;
        self
    }

    /// Runs `f` on `args`; `print` writes to `out`. Wrong argument count or types
    /// give `RtError::Other`.
    pub fn call(
        &self,
        module: &Module,
        f: FuncRef,
        args: &[Value],
        out: &mut dyn std::io::Write,
    ) -> Result<Value, RtError> {
        self.call_traced(module, f, args, out).map_err(|(e, _)| e)
    }

    /// As [`Interpreter::call`], and on error also where it happened: the
    /// innermost op that came from source.
    pub fn call_traced(
        &self,
        module: &Module,
        f: FuncRef,
        args: &[Value],
        out: &mut dyn std::io::Write,
    ) -> Result<Value, (RtError, Option<ErrorSite>)> {
        let func = module.functions.get(f).ok_or_else(|| {
            (
                RtError::Other(format!("function #{} does not exist", f.index())),
                None,
            )
        })?;
        crate::ir::check_args(func, args).map_err(|m| (RtError::Other(m), None))?;
        let mut m = Machine {
            module,
            out,
            depth: 0,
            max_depth: self.max_call_depth,
            site: None,
            tape: tape::take_cached(),
            inplace: std::collections::HashMap::new(),
        };
        let result = m.call_function(f, args.to_vec());
        tape::give_back(m.tape);
        result.map_err(|e| (e, m.site))
    }
}

/// Runs `f` on `args` with the default options.
pub fn call(
    module: &Module,
    f: FuncRef,
    args: &[Value],
    out: &mut dyn std::io::Write,
) -> Result<Value, RtError> {
    Interpreter::default().call(module, f, args, out)
}

/// The state of one run.
struct Machine<'a> {
    module: &'a Module,
    out: &'a mut dyn std::io::Write,
    depth: usize,
    max_depth: usize,
    /// Where the first error happened, once known.
    site: Option<ErrorSite>,
    /// The reverse-mode tape of this run (see [`tape`]).
    tape: mad_runtime::tape::Tape,
    /// Per function called, its in-place inserts (computed at its first call).
    inplace: std::collections::HashMap<FuncRef, std::rc::Rc<crate::codegen::inplace::InPlace>>,
}

/// A module ready for the interpreter ([`crate::back::Executable`]): the IR as written (the
/// reference runs what the front end and the passes produced, not the code generators'
/// preparation of it).
pub struct InterpModule<M: std::borrow::Borrow<Module> = Module> {
    module: M,
    options: Interpreter,
}

impl<'m> InterpModule<&'m Module> {
    /// The interpreter over a module the caller keeps (no copy).
    pub fn borrowed(module: &'m Module, options: Interpreter) -> InterpModule<&'m Module> {
        InterpModule { module, options }
    }
}

impl crate::back::Executable for Interpreter {
    type Options = Interpreter;
    type Error = std::convert::Infallible;
    type Module = InterpModule;

    fn compile(
        module: &Module,
        _loops: &[crate::codegen::element_loop::BatchSpec],
        options: &Interpreter,
    ) -> Result<InterpModule, std::convert::Infallible> {
        Ok(InterpModule { module: module.clone(), options: options.clone() })
    }
}

impl<M: std::borrow::Borrow<Module>> crate::back::CompiledModule for InterpModule<M> {
    /// Runs the call on a thread of its own with the stack the interpreter's call depth needs
    /// ([`STACK_SIZE`], as the JIT runs on one), so that deep recursion is the run-time error
    /// "recursion is too deep" whatever the caller's stack; its output is written to `out`
    /// when it returns, and its tape use is kept for [`last_tape_use`] on the calling thread.
    fn call_traced(
        &self,
        f: FuncRef,
        args: &[Value],
        out: &mut dyn std::io::Write,
    ) -> Result<Value, (RtError, Option<ErrorSite>)> {
        let (module, options) = (self.module.borrow(), &self.options);
        let run = move || {
            let mut printed = Vec::new();
            let r = options.call_traced(module, f, args, &mut printed);
            (r, printed, last_tape_use())
        };
        let joined = std::thread::scope(|s| {
            std::thread::Builder::new()
                .name("mad-interp".into())
                .stack_size(STACK_SIZE)
                .spawn_scoped(s, run)
                .map(|h| h.join())
        });
        let internal = |m: String| (RtError::Other(m), None);
        match joined {
            Ok(Ok((r, printed, tape_use))) => {
                set_last_tape_use(tape_use);
                out.write_all(&printed).map_err(|e| internal(format!("cannot write output: {e}")))?;
                r
            }
            Ok(Err(_)) => Err(internal("internal error: the interpreter panicked".into())),
            Err(e) => Err(internal(format!("cannot start the interpreter's thread: {e}"))),
        }
    }
}
