//! Back ends: code generation from the IR.

pub mod cranelift;
