//! A locality order of a mesh's elements, for the evaluation schedule.
//!
//! Meshes whose vertex and face numbering is scattered (as real scans often are) make every
//! contiguous chunk of elements touch dofs all over the mesh: the chunks of
//! [`super::Coloring`] then conflict with each other (one colour per chunk, no parallelism)
//! and each element's gathers and scatters miss the cache. Ordering the elements by a
//! breadth-first vertex numbering puts neighbours next to each other: chunks become compact
//! bands of the mesh, which a few colours separate.
//!
//! - [`breadth_first_rank`]: a Cuthill–McKee numbering of the vertices (from a
//!   pseudo-peripheral vertex of each connected component, neighbours by increasing degree
//!   then index), deterministic.
//! - [`locality_order`]: elements sorted by the smallest rank of their vertices (ties by
//!   index), a permutation of `0..len`.
//! - [`ElementList::permuted`]: the list in a given order.

use super::ElementList;
use std::collections::VecDeque;

/// The breadth-first (Cuthill–McKee) rank of each of `n` vertices, whose neighbours are
/// `neighbours(v)`. Components are numbered one after another, in the order of their smallest
/// vertex; each starts from a pseudo-peripheral vertex (the last vertex reached by a
/// breadth-first search from the component's smallest vertex).
pub fn breadth_first_rank<'a>(n: usize, neighbours: impl Fn(usize) -> &'a [u32]) -> Vec<u32> {
    const UNSEEN: u32 = u32::MAX;
    let degree = |v: usize| neighbours(v).len();
    let mut rank = vec![UNSEEN; n];
    let mut mark = vec![UNSEEN; n];
    let mut next = 0u32;
    let mut queue = VecDeque::new();
    let mut sorted: Vec<u32> = Vec::new();
    for root in 0..n {
        if rank[root] != UNSEEN {
            continue;
        }
        // The last vertex of a search from `root` (marks are per component: `root` is its
        // first vertex, so it doubles as the component's tag).
        let mut last = root;
        mark[root] = root as u32;
        queue.push_back(root);
        while let Some(v) = queue.pop_front() {
            last = v;
            for &w in neighbours(v) {
                let w = w as usize;
                if w < n && mark[w] != root as u32 {
                    mark[w] = root as u32;
                    queue.push_back(w);
                }
            }
        }
        rank[last] = next;
        next += 1;
        queue.push_back(last);
        while let Some(v) = queue.pop_front() {
            sorted.clear();
            sorted.extend(
                neighbours(v)
                    .iter()
                    .copied()
                    .filter(|&w| (w as usize) < n && rank[w as usize] == UNSEEN),
            );
            sorted.sort_unstable_by_key(|&w| (degree(w as usize), w));
            sorted.dedup();
            for &w in &sorted {
                if rank[w as usize] == UNSEEN {
                    rank[w as usize] = next;
                    next += 1;
                    queue.push_back(w as usize);
                }
            }
        }
    }
    rank
}

/// The elements of `verts` ordered by the smallest `rank` of their vertices (ties by index):
/// `order[p]` is the element at position p. Vertices outside `rank` count as rank 0.
pub fn locality_order(verts: &ElementList, rank: &[u32]) -> Vec<u32> {
    let key = |e: usize| {
        verts
            .get(e)
            .iter()
            .map(|&v| rank.get(v as usize).copied().unwrap_or(0))
            .min()
            .unwrap_or(0)
    };
    let mut keyed: Vec<(u32, u32)> = (0..verts.len()).map(|e| (key(e), e as u32)).collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, e)| e).collect()
}

impl ElementList {
    /// The elements in `order` (`order[p]` becomes element p).
    ///
    /// # Panics
    /// If an entry of `order` is not an element index (a programming error).
    pub fn permuted(&self, order: &[u32]) -> ElementList {
        let elements: Vec<&[u32]> = order.iter().map(|&e| self.get(e as usize)).collect();
        match self.arity() {
            Some(k) => ElementList::fixed(k, elements.concat()),
            None => {
                let mut offsets = Vec::with_capacity(order.len() + 1);
                offsets.push(0);
                for e in &elements {
                    offsets.push(offsets.last().copied().unwrap_or(0) + e.len());
                }
                ElementList::ragged(offsets, elements.concat())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Neighbour lists of a path 0–1–…–(n−1) numbered in a scrambled order.
    fn scrambled_path(n: usize, perm: &[usize]) -> Vec<Vec<u32>> {
        let mut nb = vec![Vec::new(); n];
        for i in 0..n - 1 {
            let (a, b) = (perm[i], perm[i + 1]);
            nb[a].push(b as u32);
            nb[b].push(a as u32);
        }
        nb
    }

    #[test]
    fn a_scrambled_path_is_ranked_from_one_end_to_the_other() {
        let perm = [3, 0, 5, 1, 4, 2];
        let nb = scrambled_path(6, &perm);
        let rank = breadth_first_rank(6, |v| &nb[v]);
        // Consecutive path vertices get consecutive ranks, starting at an end.
        let along: Vec<u32> = perm.iter().map(|&v| rank[v]).collect();
        assert!(along == [0, 1, 2, 3, 4, 5] || along == [5, 4, 3, 2, 1, 0], "{along:?}");
    }

    #[test]
    fn every_component_and_isolated_vertex_gets_a_rank() {
        // Two components {0, 2} and {1, 3, 4}, plus isolated 5.
        let nb: Vec<Vec<u32>> = vec![vec![2], vec![3], vec![0], vec![1, 4], vec![3], vec![]];
        let rank = breadth_first_rank(6, |v| &nb[v]);
        let mut sorted = rank.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, [0, 1, 2, 3, 4, 5]);
        assert!(rank[0] < 2 && rank[2] < 2, "the first component first: {rank:?}");
        assert_eq!(rank[5], 5);
    }

    #[test]
    fn elements_are_ordered_by_their_smallest_rank_and_permuted_with_their_indices() {
        let verts = ElementList::fixed(2, vec![4, 5, 0, 1, 2, 3, 1, 2]);
        let rank = [0, 1, 2, 3, 4, 5];
        let order = locality_order(&verts, &rank);
        assert_eq!(order, [1, 3, 2, 0]);
        let p = verts.permuted(&order);
        assert_eq!(p.indices(), &[0, 1, 1, 2, 2, 3, 4, 5]);
        let ragged = ElementList::ragged(vec![0, 1, 3], vec![7, 8, 9]);
        let q = ragged.permuted(&[1, 0]);
        assert_eq!((q.get(0), q.get(1)), (&[8u32, 9][..], &[7u32][..]));
    }
}
