//! [`EnergyProgram`]: a compiled program's energy and residual terms with their
//! per-element kernels, JIT-compiled once.

use super::term::{self, TermKernels};
use crate::back::native::NativeModule;
use crate::energy::EnergyError;
use crate::front::{Compiled, MeshDecls};
use crate::ir::{Module, OpKind};

/// The kernels of every term of a program, compiled to machine code.
pub struct EnergyProgram {
    pub(crate) module: Module,
    pub(crate) jit: NativeModule,
    pub(crate) decls: MeshDecls,
    pub(crate) energies: Vec<TermKernels>,
    pub(crate) residuals: Vec<TermKernels>,
    /// Per energy term, its batched loops ([`super::batches`]).
    pub(crate) batches: Vec<super::batches::TermBatches>,
    /// The value kernels of the `update` items (order of `decls.updates`).
    pub(crate) updates: Vec<TermKernels>,
    /// The sources the program was compiled from, when known: run-time errors in terms then
    /// show the failing operation's source line ([`EnergyProgram::runtime_error`]).
    pub(crate) files: Option<crate::front::SourceFiles>,
}

// SAFETY: after construction the program is only read. Its JIT module is used
// only through `NativeModule::raw_caller` (entry points and immutable layout
// tables; each caller owns its run-time context); Cranelift's interior
// mutability (symbol caches) is touched only while compiling, inside `new`.
unsafe impl Sync for EnergyProgram {}

impl EnergyProgram {
    /// Builds the kernels of a front-end result.
    pub fn new(compiled: &Compiled) -> Result<EnergyProgram, EnergyError> {
        let mut module = compiled.module.clone();
        let d = &compiled.mesh;
        let mut energies = Vec::new();
        for t in &d.energies {
            energies.push(term::build(
                &mut module,
                t,
                &d.dofs,
                &d.data,
                &d.params,
                true,
            )?);
        }
        let mut residuals = Vec::new();
        for t in &d.residuals {
            residuals.push(term::build(
                &mut module,
                t,
                &d.dofs,
                &d.data,
                &d.params,
                false,
            )?);
        }
        let mut updates = Vec::new();
        for u in &d.updates {
            updates.push(term::build_value(
                &mut module,
                &u.term,
                &d.dofs,
                &d.data,
                &d.params,
            )?);
        }
        let (specs, batches) = super::batches::specs(&module, &energies, d);
        let jit = crate::back::compile_native(&module, &specs).map_err(|e| EnergyError::Backend(e.to_string()))?;
        Ok(EnergyProgram {
            module,
            jit,
            decls: d.clone(),
            energies,
            residuals,
            batches,
            updates,
            files: None,
        })
    }

    /// The error of a kernel that failed: `message` names the term (or update) and the
    /// element, then the error; `site` is where the failing op is in the sources (from
    /// [`crate::back::native::RawCaller::error_site`]), shown when the sources are known.
    pub(crate) fn runtime_error(&self, message: String, site: Option<crate::back::ErrorSite>) -> EnergyError {
        let at = match (&self.files, site) {
            (Some(files), Some(s)) => {
                crate::front::locate::locate_message(files, &format!("run-time error: {message}"), s.file, s.span)
            }
            _ => None,
        };
        EnergyError::Runtime { message, at }
    }

    /// A direct caller of a kernel.
    pub(crate) fn raw_caller(
        &self,
        f: crate::ir::FuncRef,
    ) -> Result<crate::back::native::RawCaller<'_>, mad_runtime::RtError> {
        self.jit.raw_caller(f)
    }

    /// The specs of the batched loops compiled with this program, in order.
    pub fn batch_specs(&self) -> Vec<crate::codegen::element_loop::BatchSpec> {
        super::batches::specs(&self.module, &self.energies, &self.decls).0
    }

    /// The CLIF of the batched loops after Cranelift's optimizer (`madc emit clif`).
    pub fn batch_clif(&self) -> Result<String, EnergyError> {
        let text = crate::back::clif_text(&self.module, &self.batch_specs()).map_err(|e| EnergyError::Backend(e.to_string()))?;
        Ok(match text.find("; batched ") {
            Some(at) => text[at..].to_string(),
            None => String::new(),
        })
    }

    /// The mesh declarations.
    pub fn decls(&self) -> &MeshDecls {
        &self.decls
    }

    /// The terms and updates whose bodies (or the functions they call) `print`, by kind
    /// and name (`energy e`, `update s`). Their kernels run per element, in any order and
    /// on several threads, many times per solve, and write nothing: the CLI warns.
    pub fn printing_terms(&self) -> Vec<String> {
        let prints = |f| {
            crate::analysis::reachable(&self.module, f).into_iter().any(|h| {
                self.module.functions[h]
                    .ops
                    .iter()
                    .any(|(_, op)| matches!(op.kind, OpKind::Print | OpKind::PrintStr(_)))
            })
        };
        let d = &self.decls;
        let terms = d.energies.iter().map(|t| ("energy", t));
        let terms = terms.chain(d.residuals.iter().map(|t| ("residual", t)));
        let terms = terms.chain(d.updates.iter().map(|u| ("update", &u.term)));
        terms.filter(|(_, t)| prints(t.func)).map(|(kind, t)| format!("{kind} `{}`", t.name)).collect()
    }

    /// The IR module with every kernel (`energy::NAME$local$egh`, …).
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// Per energy term, in declaration order: its name, the forward seeds its Hessian
    /// kernel runs over the reverse pass, and its local dof count k. A term that reads its
    /// vertex dofs only through differences runs k − dim seeds (the columns of its first
    /// vertex are the negated sums of the others'); ring terms report 0 and 0.
    pub fn hessian_seeds(&self) -> Vec<(&str, usize, usize)> {
        self.energies
            .iter()
            .map(|t| (t.name.as_str(), t.hess_seeds, t.k))
            .collect()
    }

    /// The energy terms whose Hessian kernels return constant zeros (terms linear in their
    /// dofs, such as a gravity term), in declaration order: Hessian evaluations run their
    /// gradient kernels instead, and Hessian-vector products skip them.
    pub fn linear_terms(&self) -> Vec<&str> {
        self.energies
            .iter()
            .filter(|t| t.hess_zero)
            .map(|t| t.name.as_str())
            .collect()
    }

    /// The names of the energy terms, in declaration order.
    pub fn energy_names(&self) -> Vec<&str> {
        self.energies.iter().map(|t| t.name.as_str()).collect()
    }
}
