//! Clean-up passes.
