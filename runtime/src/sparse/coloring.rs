//! Greedy element colouring: no two elements of one colour share a dof, so they write disjoint
//! CSR rows and gradient entries and can run in parallel without synchronisation.
//!
//! Elements are taken in index order and each gets the smallest colour none of its dofs has
//! seen yet. The result depends only on the element list, never on the thread count.

use super::ElementList;

/// Elements grouped by colour: colour c is `order[colour_offsets[c]..colour_offsets[c+1]]`,
/// in increasing element order within a colour.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coloring {
    pub order: Vec<u32>,
    pub colour_offsets: Vec<usize>,
}

impl Coloring {
    /// Colours the elements of a local-dof list over `ndofs` dofs.
    pub fn greedy(dofs: &ElementList, ndofs: usize) -> Coloring {
        let mut words = 1usize;
        let mut used = vec![0u64; ndofs];
        let mut colour = vec![0u32; dofs.len()];
        let mut ncolours = 0usize;
        let mut acc = Vec::new();
        for (i, e) in dofs.iter().enumerate() {
            acc.clear();
            acc.resize(words, 0u64);
            for &d in e {
                let m = &used[d as usize * words..(d as usize + 1) * words];
                for (a, b) in acc.iter_mut().zip(m) {
                    *a |= b;
                }
            }
            let c = match acc.iter().position(|w| *w != u64::MAX) {
                Some(w) => w * 64 + acc[w].trailing_ones() as usize,
                None => {
                    // Widen every dof's colour set by one word.
                    let mut wider = vec![0u64; ndofs * (words + 1)];
                    for d in 0..ndofs {
                        wider[d * (words + 1)..d * (words + 1) + words]
                            .copy_from_slice(&used[d * words..(d + 1) * words]);
                    }
                    used = wider;
                    words += 1;
                    (words - 1) * 64
                }
            };
            for &d in e {
                used[d as usize * words + c / 64] |= 1u64 << (c % 64);
            }
            colour[i] = c as u32;
            ncolours = ncolours.max(c + 1);
        }
        let mut colour_offsets = vec![0usize; ncolours + 1];
        for &c in &colour {
            colour_offsets[c as usize + 1] += 1;
        }
        for c in 0..ncolours {
            colour_offsets[c + 1] += colour_offsets[c];
        }
        let mut fill = colour_offsets.clone();
        let mut order = vec![0u32; colour.len()];
        for (i, &c) in colour.iter().enumerate() {
            order[fill[c as usize]] = i as u32;
            fill[c as usize] += 1;
        }
        Coloring {
            order,
            colour_offsets,
        }
    }

    pub fn num_colours(&self) -> usize {
        self.colour_offsets.len() - 1
    }

    /// The elements of colour c.
    pub fn colour(&self, c: usize) -> &[u32] {
        &self.order[self.colour_offsets[c]..self.colour_offsets[c + 1]]
    }
}
