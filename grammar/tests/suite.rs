//! Every integration test of the grammar, one module per file of this folder, in one test binary.

#[allow(dead_code)]
mod common;
mod diagnostics;
mod forms;
mod lexer;
mod nesting;
mod precedence;
mod robustness;
