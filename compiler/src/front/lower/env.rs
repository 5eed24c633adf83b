//! Lexical scopes of local variables. A mutable variable's current SSA value is
//! updated in place on assignment; control-flow lowering snapshots and restores
//! the values of the variables it carries.

use super::super::types::SurfaceType;
use crate::ir::ValueId;
use mad_grammar::span::Span;

#[derive(Clone, Debug)]
pub struct Local {
    pub name: String,
    pub ty: SurfaceType,
    pub mutable: bool,
    pub val: ValueId,
    pub span: Span,
    /// What the name is, for messages: `variable`, `parameter`, `loop variable` or
    /// `element handle`.
    pub role: &'static str,
}

/// The position of a local: (scope depth, index in scope).
pub type Pos = (usize, usize);

#[derive(Debug, Default)]
pub struct Env {
    scopes: Vec<Vec<Local>>,
}

impl Env {
    pub fn push(&mut self) {
        self.scopes.push(Vec::new());
    }

    pub fn pop(&mut self) {
        self.scopes.pop();
    }

    pub fn declare(&mut self, local: Local) -> Pos {
        if self.scopes.is_empty() {
            self.push();
        }
        let d = self.scopes.len() - 1;
        self.scopes[d].push(local);
        (d, self.scopes[d].len() - 1)
    }

    /// The innermost local with this name.
    pub fn lookup(&self, name: &str) -> Option<Pos> {
        for (d, scope) in self.scopes.iter().enumerate().rev() {
            if let Some(i) = scope.iter().rposition(|l| l.name == name) {
                return Some((d, i));
            }
        }
        None
    }

    pub fn get(&self, p: Pos) -> &Local {
        &self.scopes[p.0][p.1]
    }

    pub fn get_mut(&mut self, p: Pos) -> &mut Local {
        &mut self.scopes[p.0][p.1]
    }

    pub fn set(&mut self, p: Pos, val: ValueId) {
        self.scopes[p.0][p.1].val = val;
    }

    /// Every visible local name (for suggestions).
    pub fn names(&self) -> Vec<String> {
        self.scopes
            .iter()
            .flatten()
            .map(|l| l.name.clone())
            .collect()
    }
}
