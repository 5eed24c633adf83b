//! Translation gauges: dofs that Newton's linear solve may hold at zero step without changing
//! the set of its solutions.
//!
//! An energy that depends on a vertex field only through differences of its points (a
//! parameterization, a mass-spring net with nothing pinned) is invariant under translating
//! each connected part of the mesh, one component at a time. Its Hessian then has those
//! translations as an exact null space and is singular; its gradient is orthogonal to them.
//! Newton's system `H d = −g` is consistent but singular, and a Cholesky factorization of it
//! succeeds or fails on rounding alone (a failure costs a refactorization with a diagonal
//! shift, and the shifted step is not the Newton step).
//!
//! A [`TranslationClasses`] lists those translations: each class is the set of dofs of one
//! component of one field over one connected part, and its pin is one dof of the class. With
//! the pin's row and column replaced by the identity and its right-hand side set to 0, the
//! system is nonsingular on that class, and its solution solves the full system: the pin's
//! own equation is minus the sum of the class's others (the rows of H sum to zero over a class
//! and so do the entries of g). So the step is an exact Newton step, the one among them that
//! does not move the pin. A class with a dof fixed by the caller has no null space and is not
//! pinned.

/// The translation classes of an objective's dofs (module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TranslationClasses {
    /// Per dof, its class, or [`TranslationClasses::NONE`].
    pub class_of: Vec<u32>,
    /// Per class, the dof held at zero step.
    pub pins: Vec<usize>,
}

impl TranslationClasses {
    /// The class of a dof that belongs to none.
    pub const NONE: u32 = u32::MAX;

    /// The linear solve's fixed-dof mask: `fixed`, and the pin of every class that has no
    /// fixed dof. `None` when nothing is fixed or pinned. A class table of another length
    /// than `n` pins nothing.
    pub fn solve_mask(&self, n: usize, fixed: Option<&[bool]>, mask: &mut Vec<bool>) -> bool {
        mask.clear();
        mask.resize(n, false);
        if let Some(f) = fixed {
            mask.copy_from_slice(&f[..n]);
        }
        if self.class_of.len() != n {
            return fixed.is_some();
        }
        let mut blocked = vec![false; self.pins.len()];
        if let Some(f) = fixed {
            for (&c, &fx) in self.class_of.iter().zip(f) {
                if fx && c != Self::NONE {
                    blocked[c as usize] = true;
                }
            }
        }
        let mut any = fixed.is_some();
        for (&pin, &b) in self.pins.iter().zip(&blocked) {
            if !b && pin < n {
                mask[pin] = true;
                any = true;
            }
        }
        any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_classes_without_fixed_dofs() {
        // Two classes over dofs 0..4 and 4..6; dof 6 in none.
        let t = TranslationClasses {
            class_of: vec![0, 0, 0, 0, 1, 1, TranslationClasses::NONE],
            pins: vec![1, 4],
        };
        let mut mask = Vec::new();
        assert!(t.solve_mask(7, None, &mut mask));
        assert_eq!(mask, [false, true, false, false, true, false, false]);
        let fixed = [false, false, false, false, false, true, true];
        assert!(t.solve_mask(7, Some(&fixed), &mut mask));
        assert_eq!(mask, [false, true, false, false, false, true, true]);
        // A table of another size pins nothing.
        assert!(!t.solve_mask(5, None, &mut mask));
        assert_eq!(mask, [false; 5]);
    }
}
