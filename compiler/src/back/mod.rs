//! Back ends and the contract they share.
//!
//! Two kinds of back end, two small traits:
//!
//! - [`Executable`]: compiles a module (with its element loops) to something this process
//!   calls, a [`CompiledModule`]. The reference interpreter ([`interp`]) runs the IR as
//!   written; the Cranelift JIT ([`cranelift`]) produces a [`native::NativeModule`], the
//!   host ABI that every back end compiling for this process produces and that direct,
//!   value and element-loop calls use ([`native`]).
//! - [`Emitter`]: writes a module out as text or bytes for another tool (Cranelift's text
//!   form, [`cranelift::ClifText`]).
//!
//! Back ends that generate code read what the codegen layer ([`crate::codegen`]) computed
//! once per module; none re-derives it. `api` and `energy` see this contract and
//! [`native`], never a back end's own types.

#[cfg(feature = "cranelift")]
pub mod cranelift;
pub mod interp;
pub mod native;
pub mod onnx;

use std::io::Write;

use mad_runtime::{RtError, Value};

use crate::codegen::element_loop::BatchSpec;
use crate::ir::{FuncRef, Module};

/// Where a run-time error happened: a file of the front end's database and a span in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorSite {
    pub file: usize,
    pub span: mad_grammar::span::Span,
}

/// A back end that compiles a module to code this process calls.
pub trait Executable {
    /// What the caller may choose (target features, optimization level, limits).
    type Options: Default;
    /// Why a module could not be compiled.
    type Error: std::error::Error + Send + Sync + 'static;
    /// The compiled module.
    type Module: CompiledModule;

    /// Compiles every function of `module` and the element loops `loops` (a back end that
    /// generates code prepares the module with [`crate::codegen::Prepared::of`] first).
    fn compile(module: &Module, loops: &[BatchSpec], options: &Self::Options) -> Result<Self::Module, Self::Error>;
}

/// A compiled module: calls of its functions with values.
pub trait CompiledModule {
    /// Calls function `f` with `args` (checked against its parameter types); what it prints
    /// goes to `out`. A run-time error comes with where it happened when the failing op
    /// came from source.
    fn call_traced(&self, f: FuncRef, args: &[Value], out: &mut dyn Write) -> Result<Value, (RtError, Option<ErrorSite>)>;
}

/// A back end that writes a module out for another tool.
pub trait Emitter {
    /// What the caller may choose (target, precision, format version).
    type Options: Default;
    /// Why a module could not be written.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Writes `module` and its element loops `loops` to `out`.
    fn emit(module: &Module, loops: &[BatchSpec], options: &Self::Options, out: &mut dyn Write) -> Result<(), Self::Error>;
}

/// Why no native code came out: the native back end's own error, or a build of mad
/// without any native back end (the `cranelift` feature is off).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeError(String);

impl std::fmt::Display for NativeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NativeError {}

impl NativeError {
    /// The error of a build without a native back end.
    pub fn no_native_back_end(what: &str) -> NativeError {
        NativeError(format!(
            "{what} needs a native back end, and this build of mad has none: build it with the feature `cranelift` (on by default)"
        ))
    }
}

/// Compiles `module` and its element loops to native code with the default native back end
/// (Cranelift): what `api` and `energy` call.
pub fn compile_native(module: &Module, loops: &[BatchSpec]) -> Result<native::NativeModule, NativeError> {
    #[cfg(feature = "cranelift")]
    {
        <cranelift::Cranelift as Executable>::compile(module, loops, &Default::default()).map_err(|e| NativeError(e.to_string()))
    }
    #[cfg(not(feature = "cranelift"))]
    {
        let _ = (module, loops);
        Err(NativeError::no_native_back_end("running compiled code"))
    }
}

/// Cranelift's text form of `module` and its element loops after Cranelift's optimizer
/// (`madc emit clif`).
pub fn clif_text(module: &Module, loops: &[BatchSpec]) -> Result<String, NativeError> {
    #[cfg(feature = "cranelift")]
    {
        let mut bytes = Vec::new();
        <cranelift::ClifText as Emitter>::emit(module, loops, &Default::default(), &mut bytes).map_err(|e| NativeError(e.to_string()))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
    #[cfg(not(feature = "cranelift"))]
    {
        let _ = (module, loops);
        Err(NativeError::no_native_back_end("`emit clif`"))
    }
}

impl CompiledModule for native::NativeModule {
    fn call_traced(&self, f: FuncRef, args: &[Value], out: &mut dyn Write) -> Result<Value, (RtError, Option<ErrorSite>)> {
        native::NativeModule::call_traced(self, f, args, out)
    }
}
