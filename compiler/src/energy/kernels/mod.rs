//! Compile time: from a front-end result ([`crate::front::Compiled`]) to the IR kernels of
//! every term, the element-loop specs of the batched loops and the JIT-compiled
//! [`EnergyProgram`].
//!
//! - [`term`]: per term its kernels ([`TermKernels`]: value, gradient, Hessian, HVP,
//!   mixed, Jacobian) over the element's local dof vector, and where each other input
//!   comes from ([`Source`]);
//! - [`derive`](mod@derive): the derivative kernels, thin wrappers around [`crate::ad`];
//! - [`ring`]: the kernels of `ring` terms, one set for every valence;
//! - [`inline`] and [`fold`]: kernel preparation (inlining, structural zeros);
//! - [`batches`]: which terms run as compiled batched loops ([`TermBatches`]);
//! - [`sizes`]: slots per field type and faces per stencil, read by both sides;
//! - [`program`]: [`EnergyProgram`], all of the above compiled once.
//!
//! Nothing here reads a mesh or runs a kernel: that is `energy::eval`, which imports
//! from here and never the other way.

pub mod batches;
pub mod derive;
pub mod fold;
pub mod inline;
pub mod program;
pub mod ring;
pub mod sizes;
pub mod term;

pub use batches::TermBatches;
pub use program::EnergyProgram;
pub use term::{Source, TermKernels};
