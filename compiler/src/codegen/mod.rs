//! The codegen layer: what every back end needs to know about a module beyond the IR
//! itself, computed once per module ([`CodegenInfo`]) so that no back end re-derives it.
//!
//! - [`layout`]: which slots a value of each type occupies (scalars, scalarized small
//!   tensors, heap-tensor pointers, flattened tuples).
//! - [`inplace`]: tensor inserts that may write into their operand.
//! - [`release`]: loops whose trips free their heap temporaries.
//! - [`versions`]: loops whose induction-variable reads can be checked once.
//! - [`poll`]: loops that test the recorded run-time error after every trip.
//! - [`leaf`]: functions that call no compiled function.
//! - [`sincos`]: `sin` and `cos` of one operand, computed together.
//! - [`element_loop`]: mesh element loops (gather → kernel → scatter) as data.
//!
//! [`Prepared::of`] runs the passes code generation wants ([`crate::passes::for_codegen`])
//! and computes the side table of the result.

pub mod element_loop;
pub mod inplace;
pub mod layout;
pub mod leaf;
pub mod poll;
pub mod release;
pub mod sincos;
pub mod versions;

use std::collections::{HashMap, HashSet};

use crate::analysis::for_each_op;
use crate::ir::{self, FuncRef, OpId, OpKind};

/// What a back end reads about one function.
pub struct FunctionInfo {
    /// Inserts lowered as in-place stores, and the tensors they write ([`inplace`]).
    pub inplace: inplace::InPlace,
    /// `scf.for` ops whose trips free their heap temporaries ([`release`]).
    pub release: HashSet<OpId>,
    /// `scf.for` ops whose trips test the recorded error first ([`poll`]).
    pub polls: HashSet<OpId>,
    /// `scf.for` ops with reads whose bounds one test in front of the loop proves ([`versions`]).
    pub versions: HashMap<OpId, versions::Plan>,
    /// The first op of each `sin`/`cos` pair of one operand in one region → the other ([`sincos`]).
    pub sincos: HashMap<OpId, OpId>,
    /// The function calls no compiled function ([`leaf::calls_nothing`]).
    pub calls_nothing: bool,
    /// ... and has no heap values and no tape ops ([`leaf::is_plain_leaf`]).
    pub plain_leaf: bool,
}

/// The side table of a module: one [`FunctionInfo`] per function, indexed by its handle.
pub struct CodegenInfo {
    functions: Vec<FunctionInfo>,
}

impl CodegenInfo {
    /// Computes the side table of `module` (as code generation will see it).
    pub fn of(module: &ir::Module) -> CodegenInfo {
        let summary = release::Summary::of(&module.functions);
        let functions = module.functions.iter().map(|(_, f)| FunctionInfo::of(f, &summary)).collect();
        CodegenInfo { functions }
    }

    /// The facts of function `f`.
    ///
    /// # Panics
    /// When `f` is not a function of the module this table was computed for.
    pub fn function(&self, f: FuncRef) -> &FunctionInfo {
        &self.functions[f.index()]
    }
}

impl FunctionInfo {
    fn of(f: &ir::Function, summary: &release::Summary) -> FunctionInfo {
        let mut polls = HashSet::new();
        let mut versions = HashMap::new();
        let mut sincos = sincos::pairs(f, &f.body.ops);
        for_each_op(f, &f.body, &mut |id, op| {
            if op.kind == OpKind::For
                && let Some(body) = op.regions.first()
            {
                if poll::needs_poll(f, body) {
                    polls.insert(id);
                }
                if let Some(plan) = versions::plan(f, op) {
                    versions.insert(id, plan);
                }
            }
            for r in &op.regions {
                sincos.extend(sincos::pairs(f, &r.ops));
            }
        });
        FunctionInfo {
            inplace: inplace::analyze(f),
            release: summary.loops_to_release(f),
            polls,
            versions,
            sincos,
            calls_nothing: leaf::calls_nothing(f),
            plain_leaf: leaf::is_plain_leaf(f),
        }
    }
}

/// A module ready for a back end: the IR after [`crate::passes::for_codegen`] and its
/// side table.
pub struct Prepared {
    pub module: ir::Module,
    pub info: CodegenInfo,
}

impl Prepared {
    /// Prepares `module` for code generation.
    pub fn of(module: &ir::Module) -> Prepared {
        let module = crate::passes::for_codegen(module);
        let info = CodegenInfo::of(&module);
        Prepared { module, info }
    }
}
