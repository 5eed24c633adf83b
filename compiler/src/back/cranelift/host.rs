//! The module: builds the `JITModule` (ISA, flags, symbols), compiles every IR function,
//! its trampoline and register entry and the element loops, and hands the entry points
//! over as a [`NativeModule`].

use std::collections::HashMap;

use cranelift_codegen::ir::{InstBuilder, MemFlagsData, UserFuncName};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{FuncId, Linkage, Module, default_libcall_names};

use super::JitError;
use super::abi::{PTR, function_signature, register_entry, trampoline_signature};
use super::batch::batch_signature;
use crate::codegen::element_loop::{BatchSpec, batchable};
use crate::codegen::{CodegenInfo, FunctionInfo};
use super::imports::{Imports, register_symbols};
use super::layout::clif_types;
use super::lower::{FnLower, Tables};
use crate::codegen::layout::flat_layout;
use crate::back::native::abi::{BatchFn, RegisterCall, RegisterEntry, Trampoline};
use crate::back::native::{Entry, NativeModule};
use crate::analysis::op_count;
use crate::ir;

/// The module being built, with the text of each function when asked for.
struct Build {
    module: JITModule,
    imports: Imports,
    tables: Tables,
    user_ids: Vec<FuncId>,
    tramp_ids: Vec<FuncId>,
    /// Each function's register entry, with its argument and result slot
    /// counts and whether it is a plain leaf's body inline ([`RegisterCall::leaf`]).
    reg_ids: Vec<Option<(FuncId, usize, usize, bool)>>,
    batch_ids: Vec<FuncId>,
    clif: Option<String>,
}

fn new_jit_module() -> Result<JITModule, JitError> {
    let mut flags = settings::builder();
    let set = |flags: &mut settings::Builder, k: &str, v: &str| {
        flags.set(k, v).map_err(|e| JitError::Codegen(format!("setting {k}: {e}")))
    };
    set(&mut flags, "opt_level", "speed")?;
    // Cranelift's IR verifier checks the lowering: on in debug builds (the tests), off in
    // release builds, where it would only cost compile time.
    set(&mut flags, "enable_verifier", if cfg!(debug_assertions) { "true" } else { "false" })?;
    set(&mut flags, "use_colocated_libcalls", "false")?;
    set(&mut flags, "is_pic", "false")?;
    set(&mut flags, "enable_multi_ret_implicit_sret", "true")?;
    let isa_builder = cranelift_native::builder().map_err(|e| JitError::Codegen(e.to_string()))?;
    let isa = isa_builder.finish(settings::Flags::new(flags)).map_err(|e| JitError::Codegen(e.to_string()))?;
    if isa.pointer_type() != PTR {
        return Err(JitError::Unsupported("the JIT needs a 64-bit host".into()));
    }
    let mut jb = JITBuilder::with_isa(isa, default_libcall_names());
    register_symbols(&mut jb);
    Ok(JITModule::new(jb))
}

fn module_err(e: cranelift_module::ModuleError) -> JitError {
    JitError::Module(e.to_string())
}

impl Build {
    fn new(ir_module: &ir::Module, info: &CodegenInfo, want_text: bool, batches: &[BatchSpec]) -> Result<Build, JitError> {
        let mut module = new_jit_module()?;
        let cc = module.isa().default_call_conv();
        let mut user_ids = Vec::new();
        let mut tramp_ids = Vec::new();
        for (h, f) in ir_module.functions.iter() {
            let sig = function_signature(f, cc);
            user_ids.push(module.declare_function(&format!("mad_f{}", h.index()), Linkage::Local, &sig).map_err(module_err)?);
            let tsig = trampoline_signature(cc);
            tramp_ids.push(module.declare_function(&format!("mad_t{}", h.index()), Linkage::Local, &tsig).map_err(module_err)?);
        }
        let mut build = Build {
            module,
            imports: Imports::default(),
            tables: Tables::default(),
            user_ids,
            tramp_ids,
            reg_ids: Vec::new(),
            batch_ids: Vec::new(),
            clif: want_text.then(String::new),
        };
        let mut fctx = FunctionBuilderContext::new();
        for (h, f) in ir_module.functions.iter() {
            let fi = info.function(h);
            build.define_function(h.index(), f, &ir_module.functions, fi, &mut fctx)?;
            build.define_trampoline(h.index(), f, &ir_module.functions, fi, &mut fctx)?;
            let reg = build.define_register_entry(h.index(), f, &ir_module.functions, fi, &mut fctx)?;
            build.reg_ids.push(reg);
        }
        for (i, spec) in batches.iter().enumerate() {
            build.define_batch(i, spec, &ir_module.functions, info, &mut fctx)?;
        }
        Ok(build)
    }

    /// A batched loop over the inlined kernel `spec.kernel` ([`super::batch`]).
    fn define_batch(
        &mut self,
        index: usize,
        spec: &BatchSpec,
        funcs: &ir::Arena<ir::Function>,
        info: &CodegenInfo,
        fctx: &mut FunctionBuilderContext,
    ) -> Result<(), JitError> {
        let cc = self.module.isa().default_call_conv();
        let f = funcs.get(spec.kernel).ok_or_else(|| JitError::Unsupported("batched loop of an unknown kernel".into()))?;
        if !batchable(f, spec.kind, spec.k, spec.inputs.len()) {
            return Err(JitError::Unsupported(format!("`{}` cannot run in a batched loop", f.name)));
        }
        let sig = batch_signature(cc);
        let id = self.module.declare_function(&format!("mad_b{index}"), Linkage::Local, &sig).map_err(module_err)?;
        self.batch_ids.push(id);
        let mut ctx = self.module.make_context();
        let config = self.module.isa().frontend_config();
        // The loop over pairs of elements where it pays and the kernel has a lane-wise
        // form; the one-element loop alone otherwise (or where the code generator turns
        // the pair loop down).
        let mut paired = super::batch::worth_pairing(f, spec);
        loop {
            ctx.set_disasm(self.clif.is_some());
            ctx.func.signature = sig.clone();
            ctx.func.name = UserFuncName::user(2, index as u32);
            // A failed attempt leaves its builder state behind: each attempt has its own.
            let mut attempt_fctx = FunctionBuilderContext::new();
            let fctx: &mut FunctionBuilderContext = if paired { &mut attempt_fctx } else { &mut *fctx };
            let lowered = {
                let b = FunctionBuilder::new(&mut ctx.func, fctx);
                let mut lower = self.lowerer(b, funcs, f, info.function(spec.kernel), false);
                let r = lower.lower_batch(spec, paired);
                if r.is_ok() {
                    lower.b.seal_all_blocks();
                    lower.b.finalize(config);
                }
                r
            };
            let defined = lowered.and_then(|()| {
                self.module
                    .define_function(id, &mut ctx)
                    .map_err(|e| JitError::Codegen(format!("batched loop of `{}`: {e:?}", f.name)))
            });
            match defined {
                Ok(()) => break,
                Err(_) if paired => {
                    paired = false;
                    self.module.clear_context(&mut ctx);
                }
                Err(e) => return Err(e),
            }
        }
        if let Some(text) = &mut self.clif {
            // After compilation `ctx.func` is the optimized function.
            text.push_str(&format!("; batched {:?} loop of {} (optimized)\n{}\n", spec.kind, f.name, ctx.func.display()));
            if let Some(vcode) = ctx.compiled_code().and_then(|c| c.vcode.as_ref()) {
                text.push_str(&format!("; machine code\n{vcode}\n"));
            }
        }
        self.module.clear_context(&mut ctx);
        Ok(())
    }

    /// A fresh lowering state for `f` whose Cranelift body `b` builds.
    fn lowerer<'a, 'b>(
        &'a mut self,
        b: FunctionBuilder<'b>,
        funcs: &'a ir::Arena<ir::Function>,
        f: &'a ir::Function,
        info: &'a FunctionInfo,
        releases: bool,
    ) -> FnLower<'a, 'b> {
        FnLower {
            b,
            module: &mut self.module,
            imports: &mut self.imports,
            routines: HashMap::new(),
            user_ids: &self.user_ids,
            module_funcs: funcs,
            user_refs: HashMap::new(),
            f,
            tables: &mut self.tables,
            vals: vec![None; f.values.len()],
            ctx: cranelift_codegen::ir::Value::from_u32(0),
            cur_op: None,
            info,
            releases,
            heap_views: HashMap::new(),
            unchecked: std::collections::HashSet::new(),
            wide: false,
            converting: 0,
            indexed: super::homes::indexed_at_run_time(f),
            homes: HashMap::new(),
        }
    }

    fn define_function(
        &mut self,
        index: usize,
        f: &ir::Function,
        funcs: &ir::Arena<ir::Function>,
        info: &FunctionInfo,
        fctx: &mut FunctionBuilderContext,
    ) -> Result<(), JitError> {
        let cc = self.module.isa().default_call_conv();
        let mut ctx = self.module.make_context();
        ctx.func.signature = function_signature(f, cc);
        ctx.func.name = UserFuncName::user(0, index as u32);
        let config = self.module.isa().frontend_config();
        {
            let b = FunctionBuilder::new(&mut ctx.func, fctx);
            let mut lower = self.lowerer(b, funcs, f, info, true);
            lower.lower_body()?;
            lower.b.seal_all_blocks();
            lower.b.finalize(config);
        }
        if let Some(text) = &mut self.clif {
            text.push_str(&format!("; fn {}\n{}\n", f.name, ctx.func.display()));
        }
        self.module
            .define_function(self.user_ids[index], &mut ctx)
            .map_err(|e| JitError::Codegen(format!("in `{}`: {e:?}", f.name)))?;
        self.module.clear_context(&mut ctx);
        Ok(())
    }

    /// `(ctx, args, results)`: loads the parameters' slots, runs the
    /// function, stores the result's slots. A function of at most
    /// [`INLINE_ENTRY_OPS`] ops runs inline in its trampoline
    /// ([`FnLower::lower_trampoline_body`]); others are called.
    fn define_trampoline(
        &mut self,
        index: usize,
        f: &ir::Function,
        funcs: &ir::Arena<ir::Function>,
        info: &FunctionInfo,
        fctx: &mut FunctionBuilderContext,
    ) -> Result<(), JitError> {
        let cc = self.module.isa().default_call_conv();
        let mut ctx = self.module.make_context();
        ctx.func.signature = trampoline_signature(cc);
        ctx.func.name = UserFuncName::user(1, index as u32);
        let config = self.module.isa().frontend_config();
        if op_count(f, &f.body) <= INLINE_ENTRY_OPS {
            let b = FunctionBuilder::new(&mut ctx.func, fctx);
            let mut lower = self.lowerer(b, funcs, f, info, true);
            lower.lower_trampoline_body()?;
            lower.b.seal_all_blocks();
            lower.b.finalize(config);
        } else {
            let mut b = FunctionBuilder::new(&mut ctx.func, fctx);
            let entry = b.create_block();
            b.append_block_params_for_function_params(entry);
            b.switch_to_block(entry);
            let p = b.block_params(entry).to_vec();
            let (c, args, results) = (p[0], p[1], p[2]);
            let mut call_args = vec![c];
            let param_tys: Vec<_> = f.param_types().iter().flat_map(clif_types).collect();
            for (i, t) in param_tys.iter().enumerate() {
                call_args.push(b.ins().load(*t, MemFlagsData::trusted(), args, 8 * i as i32));
            }
            let fr = self.module.declare_func_in_func(self.user_ids[index], b.func);
            let inst = b.ins().call(fr, &call_args);
            let outs = b.inst_results(inst).to_vec();
            for (i, v) in outs.iter().enumerate() {
                b.ins().store(MemFlagsData::trusted(), *v, results, 8 * i as i32);
            }
            b.ins().return_(&[]);
            b.seal_all_blocks();
            b.finalize(config);
        }
        self.module
            .define_function(self.tramp_ids[index], &mut ctx)
            .map_err(|e| JitError::Codegen(format!("trampoline of `{}`: {e:?}", f.name)))?;
        self.module.clear_context(&mut ctx);
        Ok(())
    }
}

impl Build {
    /// `f`'s register entry, when [`register_entry`] allows one: a small
    /// function's body inline under its own signature (as in its trampoline),
    /// a larger function's compiled code itself (which checks its entry). The
    /// flag says whether it is a plain leaf's body inline ([`RegisterCall::leaf`]).
    fn define_register_entry(
        &mut self,
        index: usize,
        f: &ir::Function,
        funcs: &ir::Arena<ir::Function>,
        info: &FunctionInfo,
        fctx: &mut FunctionBuilderContext,
    ) -> Result<Option<(FuncId, usize, usize, bool)>, JitError> {
        let cc = self.module.isa().default_call_conv();
        let Some((n_args, n_results)) = register_entry(f, cc) else { return Ok(None) };
        if op_count(f, &f.body) > INLINE_ENTRY_OPS {
            return Ok(Some((self.user_ids[index], n_args, n_results, false)));
        }
        let sig = function_signature(f, cc);
        let id = self.module.declare_function(&format!("mad_r{index}"), Linkage::Local, &sig).map_err(module_err)?;
        let mut ctx = self.module.make_context();
        ctx.func.signature = sig;
        ctx.func.name = UserFuncName::user(3, index as u32);
        ctx.set_disasm(self.clif.is_some());
        let config = self.module.isa().frontend_config();
        {
            let b = FunctionBuilder::new(&mut ctx.func, fctx);
            let mut lower = self.lowerer(b, funcs, f, info, true);
            lower.lower_register_entry_body()?;
            lower.b.seal_all_blocks();
            lower.b.finalize(config);
        }
        self.module
            .define_function(id, &mut ctx)
            .map_err(|e| JitError::Codegen(format!("register entry of `{}`: {e:?}", f.name)))?;
        if let Some(text) = &mut self.clif {
            // After compilation `ctx.func` is the optimized function.
            text.push_str(&format!("; register entry of {} (optimized)\n{}\n", f.name, ctx.func.display()));
            if let Some(vcode) = ctx.compiled_code().and_then(|c| c.vcode.as_ref()) {
                text.push_str(&format!("; machine code\n{vcode}\n"));
            }
        }
        self.module.clear_context(&mut ctx);
        Ok(Some((id, n_args, n_results, info.plain_leaf)))
    }
}

/// The most ops (nested regions included) of a function compiled inline into
/// its trampoline, saving a call and the entry checks per host call.
const INLINE_ENTRY_OPS: usize = 400;

/// The CLIF text of every function of the module (before optimization).
pub fn clif_text(module: &ir::Module) -> Result<String, JitError> {
    clif_text_with_batches(module, &[])
}

/// The CLIF text of every function of the module (before optimization) and of
/// the batched loops `batches` (after Cranelift's optimizer).
pub fn clif_text_with_batches(module: &ir::Module, batches: &[BatchSpec]) -> Result<String, JitError> {
    let prepared = crate::codegen::Prepared::of(module);
    let build = Build::new(&prepared.module, &prepared.info, true, batches)?;
    let text = build.clif.clone().unwrap_or_default();
    // The module's code was never finalized; its memory is released with it.
    drop(build);
    Ok(text)
}

/// Compiles every function of `module` (after [`crate::codegen::Prepared::of`]) and the element
/// loops `batches` ([`NativeModule::batch_caller`] takes their index in `batches`).
pub fn compile(module: &ir::Module, batches: &[BatchSpec]) -> Result<NativeModule, JitError> {
    compile_prepared(&crate::codegen::Prepared::of(module), batches)
}

/// Compiles a prepared module and the element loops `batches`.
pub fn compile_prepared(prepared: &crate::codegen::Prepared, batches: &[BatchSpec]) -> Result<NativeModule, JitError> {
    let mut build = Build::new(&prepared.module, &prepared.info, false, batches)?;
    build.module.finalize_definitions().map_err(module_err)?;
    let mut entries = Vec::new();
    for (h, f) in prepared.module.functions.iter() {
        let ptr = build.module.get_finalized_function(build.tramp_ids[h.index()]);
        // SAFETY: the trampoline was defined with `trampoline_signature`, whose
        // C ABI matches `Trampoline`.
        let trampoline: Trampoline = unsafe { std::mem::transmute::<*const u8, Trampoline>(ptr) };
        let registers = build.reg_ids[h.index()]
            .map(|(id, n_args, n_results, leaf)| {
                let ptr = build.module.get_finalized_function(id);
                // SAFETY: a code address; `RawCaller` calls it only through
                // the signature `register_entry` chose for these slot counts.
                let code = unsafe { std::mem::transmute::<*const u8, RegisterEntry>(ptr) };
                RegisterCall { code, n_args, n_results, leaf }
            });
        entries.push(Entry {
            trampoline,
            registers,
            signature: ir::Function::new(f.name.clone(), &f.param_types(), f.ret.clone()),
            params: f.param_types().iter().map(flat_layout).collect(),
            ret: flat_layout(&f.ret),
        });
    }
    let batch_fns = build
        .batch_ids
        .iter()
        .map(|id| {
            let ptr = build.module.get_finalized_function(*id);
            // SAFETY: defined with `batch_signature`, whose C ABI matches `BatchFn`.
            unsafe { std::mem::transmute::<*const u8, BatchFn>(ptr) }
        })
        .collect();
    Ok(NativeModule {
        code: Some(Box::new(CodeMemory(Some(build.module)))),
        entries,
        layouts: build.tables.layouts,
        batches: batch_fns,
        descs: build.tables.descs,
        _strings: build.tables.strings,
        sites: build.tables.sites,
    })
}

/// Cranelift's code memory, freed when the [`NativeModule`] that holds it is dropped.
struct CodeMemory(Option<JITModule>);

impl Drop for CodeMemory {
    fn drop(&mut self) {
        if let Some(m) = self.0.take() {
            // SAFETY: the `NativeModule` drops its entry points before its code, and no
            // caller outlives the module it borrows.
            unsafe { m.free_memory() };
        }
    }
}
