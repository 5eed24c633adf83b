//! Limits on nesting, so that no input can make the parser, or anything that
//! later walks the tree recursively (including `Drop`), overflow the stack.
//!
//! Two guards work together:
//! - [`prescan`] looks at the tokens before parsing: brackets nested deeper
//!   than [`MAX_DEPTH`], or a run of more than [`MAX_DEPTH`] prefix operators
//!   (`-`, `!`), stop the parse at the top-level item that contains them.
//! - The grammar's actions (see the `actions` module) track the depth of every
//!   node they build and replace a node deeper than [`MAX_DEPTH`] by an error
//!   node, which catches what brackets do not show (long operator chains,
//!   `else if` ladders, call chains `f()()()`).
//!
//! The depth of a leaf is 1; a node is one deeper than its deepest child.
//! Every item of the returned [`crate::ast::File`] has depth at most
//! [`MAX_DEPTH`], so the file itself is at most `MAX_DEPTH + 1` deep.

use std::ops::Range;

use crate::lexer::{SpannedToken, Token};

/// The deepest item (and so expression, block, type or pattern) the parser builds.
pub const MAX_DEPTH: u32 = 255;

/// Where [`prescan`] found nesting past the limit.
#[derive(Clone, Debug, PartialEq)]
pub struct TooDeep {
    /// Index of the first token of the top-level item that holds the offender:
    /// tokens from here on are not parsed.
    pub cut: usize,
    /// Byte range of the offending token.
    pub at: Range<usize>,
}

/// Finds the first token that nests brackets, or continues a run of prefix
/// operators, past [`MAX_DEPTH`].
pub fn prescan(tokens: &[SpannedToken<'_>]) -> Option<TooDeep> {
    let limit = MAX_DEPTH as usize;
    let mut depth = 0usize;
    let mut prefix_run = 0usize;
    let mut item_start = 0usize;
    for (i, (start, tok, end)) in tokens.iter().enumerate() {
        match tok {
            Token::LParen | Token::LBracket | Token::LBrace => depth += 1,
            Token::RParen | Token::RBracket | Token::RBrace => {
                depth = depth.saturating_sub(1);
                if depth == 0 && *tok == Token::RBrace {
                    item_start = i + 1;
                }
            }
            Token::Semi if depth == 0 => item_start = i + 1,
            _ => {}
        }
        if matches!(tok, Token::Minus | Token::Bang) {
            prefix_run += 1;
        } else {
            prefix_run = 0;
        }
        if depth > limit || prefix_run > limit {
            return Some(TooDeep {
                cut: item_start,
                at: *start..*end,
            });
        }
    }
    None
}
