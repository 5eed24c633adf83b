//! The parser's entry point: lex, check nesting, parse, collect diagnostics.

use codespan_reporting::diagnostic::Diagnostic;

use crate::actions::{Ctx, is_boundary};
use crate::ast::File;
use crate::grammar::FileParser;
use crate::lexer::{self, Token};
use crate::{diag, nesting};

/// Parses one source file.
///
/// Always returns a file: the items that parsed (items with errors inside
/// them keep [`crate::ast::ExprKind::Error`] / [`crate::ast::StmtKind::Error`]
/// nodes where the error was; items that could not be read at all are left
/// out), together with every diagnostic found, in source order. The file is
/// well-formed only if no diagnostic is returned.
pub fn parse(src: &str, file_id: usize) -> (File, Vec<Diagnostic<usize>>) {
    let (mut tokens, mut diags) = lexer::lex(src, file_id);
    if let Some(deep) = nesting::prescan(&tokens) {
        diags.push(diag::too_deep(deep.at.clone(), src, file_id));
        tokens.truncate(deep.cut);
    }
    let boundaries = tokens
        .iter()
        .filter(|t| is_boundary(&t.1))
        .map(|t| t.0)
        .collect();
    let mut lex_errors: Vec<usize> = diags
        .iter()
        .filter_map(|d| d.labels.first().map(|l| l.range.start))
        .collect();
    lex_errors.sort_unstable();
    let mut ctx = Ctx::new(src, file_id, boundaries, lex_errors);
    let input = tokens.into_iter().map(Ok::<(usize, Token<'_>, usize), ()>);
    if let Err(err) = FileParser::new().parse(&mut ctx, input) {
        ctx.parse_error(err);
    }
    diags.append(&mut ctx.diags);
    diags.sort_by_key(|d| d.labels.first().map_or(usize::MAX, |l| l.range.start));
    (File { items: ctx.items }, diags)
}
