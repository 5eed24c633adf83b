//! `mad-grammar`: the lexer (logos), the grammar (lalrpop) and the AST of `.mad` files.

pub mod ast;
pub mod span;
