//! Back ends: the reference interpreter ([`interp`]) and the code generators.

pub mod cranelift;
pub mod interp;
