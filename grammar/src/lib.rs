//! `mad-grammar`: the lexer (logos), the grammar (lalrpop) and the AST of `.mad` files.
//!
//! The entry point is [`parse()`]: it always returns a [`ast::File`] (possibly
//! partial) together with every diagnostic it found, and never panics, hangs
//! or overflows the stack, whatever the input (see [`nesting`]).

mod actions;
pub mod ast;
mod diag;
pub mod lexer;
pub mod nesting;
pub mod parse;
pub mod span;

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, unused_parens, unused_qualifications)]
    grammar
);

pub use parse::parse;
