//! mad: a compiler and JIT runtime for a differentiable language of mesh energies.

pub mod back;
pub mod ir;
pub mod ad;
pub mod passes;
