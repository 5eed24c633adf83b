//! The Cranelift back end: compiles IR modules to machine code for the host
//! (JIT) and runs them.
//!
//! Target-independent facts (value layouts, in-place inserts, release and poll points,
//! loop versions, leaf functions, `sin`/`cos` pairs, element-loop specs) come from
//! [`crate::codegen`]; the files here lower them.
//!
//! - [`layout`]: the Cranelift types of a value's slots.
//! - [`abi`]: function and trampoline signatures (hidden context parameter first).
//! - [`lower`]: per-function state, op dispatch, heap-op sites;
//!   [`scalar`]: scalar instruction selection; [`tensor`]: inline small-tensor ops;
//!   [`sincos`]: `sin` and `cos` of one value in one call.
//! - [`control`]: `If`/`For`/`While`, calls, the depth/stack check at entry.
//! - [`direct`]: heap-tensor ops of `f64` called as typed routines;
//!   [`heap`]: inline heap-tensor reads; [`inplace`]: in-place updates of
//!   loop-carried accumulators; [`release`]: freeing loop trips' temporaries;
//!   [`invariant`]: values computed once in front of a loop stay there;
//!   [`version`]: loops whose induction-variable reads are checked once.
//! - [`tape`]: `tape.push` / `tape.pop` through the context's tape.
//! - [`imports`]: run-time routines and math symbols.
//! - [`host`]: [`compile`] (a [`crate::back::native::NativeModule`], the host ABI every
//!   native back end produces) and [`clif_text`].
//!
//! Run-time errors never trap: the first one is recorded in the context, execution
//! continues with safe values (loops in [`crate::codegen::FunctionInfo::polls`] stop
//! early; other `for` loops finish their trips), and the call returns it.

pub mod abi;
pub mod batch;
pub mod control;
pub mod direct;
pub mod heap;
pub mod homes;
pub mod host;
pub mod imports;
pub mod inplace;
pub mod invariant;
pub mod layout;
pub mod lower;
pub mod release;
pub mod scalar;
pub mod sincos;
pub mod tape;
pub mod tensor;
pub mod version;

use std::fmt;

pub use host::{clif_text, clif_text_with_batches, compile, compile_prepared};

/// Why a module could not be compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JitError {
    /// An IR construct this back end does not compile (ill-typed or malformed IR).
    Unsupported(String),
    /// Cranelift rejected the generated code or the host.
    Codegen(String),
    /// Declaring or linking a function failed.
    Module(String),
}

impl fmt::Display for JitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JitError::Unsupported(m) => write!(f, "cannot compile: {m}"),
            JitError::Codegen(m) => write!(f, "code generation failed: {m}"),
            JitError::Module(m) => write!(f, "module error: {m}"),
        }
    }
}

impl std::error::Error for JitError {}

/// The Cranelift JIT as an executable back end ([`crate::back::Executable`]).
pub struct Cranelift;

/// The Cranelift back end's options (none yet: it compiles for the host, `opt_level=speed`).
#[derive(Clone, Debug, Default)]
pub struct Options {}

impl crate::back::Executable for Cranelift {
    type Options = Options;
    type Error = JitError;
    type Module = crate::back::native::NativeModule;

    fn compile(
        module: &crate::ir::Module,
        loops: &[crate::codegen::element_loop::BatchSpec],
        _options: &Options,
    ) -> Result<Self::Module, JitError> {
        compile(module, loops)
    }
}

/// Cranelift's text form as an emitter ([`crate::back::Emitter`], `madc emit clif`): every
/// function before optimization, then each element loop after it.
pub struct ClifText;

impl crate::back::Emitter for ClifText {
    type Options = Options;
    type Error = JitError;

    fn emit(
        module: &crate::ir::Module,
        loops: &[crate::codegen::element_loop::BatchSpec],
        _options: &Options,
        out: &mut dyn std::io::Write,
    ) -> Result<(), JitError> {
        let text = clif_text_with_batches(module, loops)?;
        out.write_all(text.as_bytes()).map_err(|e| JitError::Module(format!("cannot write: {e}")))
    }
}
