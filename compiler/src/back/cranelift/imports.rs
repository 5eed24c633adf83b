//! The run-time routines and libm symbols compiled code calls: their names,
//! their Cranelift signatures, their declaration in the module, and their
//! registration on the [`JITBuilder`].

use std::collections::HashMap;

use cranelift_codegen::ir::{AbiParam, FuncRef, Function, Signature, types};
use cranelift_codegen::isa::CallConv;
use cranelift_jit::JITBuilder;
use cranelift_module::{FuncId, Linkage, Module};

/// A routine compiled code calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Routine {
    /// `mad_rt_apply(ctx, desc: i32, args: ptr, results: ptr)`.
    Apply,
    /// `mad_rt_print(ctx, layout: i32, buf: ptr)`.
    Print,
    /// `mad_rt_print_str(ctx, text: ptr, len: i64)`.
    PrintStr,
    ErrorDivZero,
    /// `(ctx, index: i64, len: i64)`.
    ErrorIndex,
    ErrorRecursion,
    /// `(ctx, got: i64, want: i64)`.
    ErrorExtent,
    /// `(ctx, a: i64, b: i64) -> i64`.
    IPow,
    /// `mad_rt_tape_push(ctx, buf: ptr, n: i64)`.
    TapePush,
    /// `mad_rt_tape_pop(ctx, buf: ptr, n: i64)`.
    TapePop,
    /// `mad_rt_arena_mark(ctx) -> i64`.
    ArenaMark,
    /// `mad_rt_arena_release(ctx, mark: i64, keep: ptr, n: i64)`.
    ArenaRelease,
    /// `mad_rt_matmul_f64(ctx, desc: i32, a: ptr, b: ptr) -> ptr`.
    MatMulF64,
    /// `mad_rt_transpose_f64(ctx, desc: i32, a: ptr) -> ptr`.
    TransposeF64,
    /// `mad_rt_sum_f64(ctx, desc: i32, a: ptr) -> f64`.
    SumF64,
    /// `mad_rt_full_f64(ctx, desc: i32, x: f64, n0: i64, n1: i64, rank: i64) -> ptr`.
    FullF64,
    /// `mad_rt_binary_f64(ctx, desc: i32, code: i32, a: ptr, b: ptr) -> ptr`.
    BinaryF64,
    /// `sincos(x: f64, sin: ptr, cos: ptr)` of the C library.
    SinCos,
    /// `f64 -> f64` libm routine by symbol name.
    Math1(&'static str),
    /// `(f64, f64) -> f64` routine by symbol name.
    Math2(&'static str),
}

const PTR: types::Type = types::I64;

impl Routine {
    pub fn symbol(self) -> &'static str {
        match self {
            Routine::Apply => "mad_rt_apply",
            Routine::Print => "mad_rt_print",
            Routine::PrintStr => "mad_rt_print_str",
            Routine::ErrorDivZero => "mad_rt_error_div_zero",
            Routine::ErrorIndex => "mad_rt_error_index",
            Routine::ErrorRecursion => "mad_rt_error_recursion",
            Routine::ErrorExtent => "mad_rt_error_extent",
            Routine::IPow => "mad_rt_ipow",
            Routine::TapePush => "mad_rt_tape_push",
            Routine::TapePop => "mad_rt_tape_pop",
            Routine::ArenaMark => "mad_rt_arena_mark",
            Routine::ArenaRelease => "mad_rt_arena_release",
            Routine::MatMulF64 => "mad_rt_matmul_f64",
            Routine::TransposeF64 => "mad_rt_transpose_f64",
            Routine::SumF64 => "mad_rt_sum_f64",
            Routine::FullF64 => "mad_rt_full_f64",
            Routine::BinaryF64 => "mad_rt_binary_f64",
            Routine::SinCos => "sincos",
            Routine::Math1(name) | Routine::Math2(name) => name,
        }
    }

    pub fn signature(self, cc: CallConv) -> Signature {
        let mut sig = Signature::new(cc);
        let p = |t| AbiParam::new(t);
        let (params, rets): (Vec<types::Type>, Vec<types::Type>) = match self {
            Routine::Apply => (vec![PTR, types::I32, PTR, PTR], vec![]),
            Routine::Print => (vec![PTR, types::I32, PTR], vec![]),
            Routine::PrintStr | Routine::TapePush | Routine::TapePop => {
                (vec![PTR, PTR, types::I64], vec![])
            }
            Routine::ErrorDivZero | Routine::ErrorRecursion => (vec![PTR], vec![]),
            Routine::ErrorIndex | Routine::ErrorExtent => {
                (vec![PTR, types::I64, types::I64], vec![])
            }
            Routine::IPow => (vec![PTR, types::I64, types::I64], vec![types::I64]),
            Routine::ArenaMark => (vec![PTR], vec![types::I64]),
            Routine::ArenaRelease => (vec![PTR, types::I64, PTR, types::I64], vec![]),
            Routine::MatMulF64 => (vec![PTR, types::I32, PTR, PTR], vec![PTR]),
            Routine::TransposeF64 => (vec![PTR, types::I32, PTR], vec![PTR]),
            Routine::SumF64 => (vec![PTR, types::I32, PTR], vec![types::F64]),
            Routine::FullF64 => (
                vec![PTR, types::I32, types::F64, types::I64, types::I64, types::I64],
                vec![PTR],
            ),
            Routine::BinaryF64 => (vec![PTR, types::I32, types::I32, PTR, PTR], vec![PTR]),
            Routine::SinCos => (vec![types::F64, PTR, PTR], vec![]),
            Routine::Math1(_) => (vec![types::F64], vec![types::F64]),
            Routine::Math2(_) => (vec![types::F64, types::F64], vec![types::F64]),
        };
        sig.params.extend(params.into_iter().map(p));
        sig.returns.extend(rets.into_iter().map(p));
        sig
    }
}

/// Registers every run-time routine and math symbol on the builder.
pub fn register_symbols(jb: &mut JITBuilder) {
    for (name, ptr) in mad_runtime::jit::routines::symbols() {
        jb.symbol(name, ptr);
    }
}

/// Routines declared in a module, imported into functions on first use.
#[derive(Default)]
pub struct Imports {
    declared: HashMap<Routine, FuncId>,
}

impl Imports {
    pub fn func_ref<M: Module>(
        &mut self,
        module: &mut M,
        func: &mut Function,
        cache: &mut HashMap<Routine, FuncRef>,
        r: Routine,
    ) -> Result<FuncRef, String> {
        if let Some(f) = cache.get(&r) {
            return Ok(*f);
        }
        let id = match self.declared.get(&r) {
            Some(id) => *id,
            None => {
                let sig = r.signature(module.isa().default_call_conv());
                let id = module
                    .declare_function(r.symbol(), Linkage::Import, &sig)
                    .map_err(|e| e.to_string())?;
                self.declared.insert(r, id);
                id
            }
        };
        let fr = module.declare_func_in_func(id, func);
        cache.insert(r, fr);
        Ok(fr)
    }
}
