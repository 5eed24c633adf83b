//! Ragged lists of index tuples: a stencil's element → vertex lists, or elements' local dofs.

/// A list of elements, each a short list of indices (vertices, faces or dofs).
///
/// Fixed-arity lists (vertex, edge, face, diamond, pair stencils) store no offsets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElementList {
    /// `Some(k)` when every element has exactly k indices.
    arity: Option<usize>,
    /// Per-element start offsets into `indices` (length len+1) when the arity varies.
    offsets: Vec<usize>,
    indices: Vec<u32>,
}

impl ElementList {
    /// Elements of `arity` indices each, stored back to back in `flat`.
    ///
    /// # Panics
    /// If `arity` is 0 or does not divide `flat.len()` (a programming error, not user input).
    pub fn fixed(arity: usize, flat: Vec<u32>) -> ElementList {
        assert!(
            arity > 0 && flat.len().is_multiple_of(arity),
            "ElementList::fixed: bad arity"
        );
        ElementList {
            arity: Some(arity),
            offsets: Vec::new(),
            indices: flat,
        }
    }

    /// Elements of varying size: element i is `indices[offsets[i]..offsets[i+1]]`.
    ///
    /// # Panics
    /// If `offsets` is empty, not non-decreasing, or does not end at `indices.len()`.
    pub fn ragged(offsets: Vec<usize>, indices: Vec<u32>) -> ElementList {
        assert!(
            !offsets.is_empty()
                && offsets[0] == 0
                && *offsets.last().unwrap() == indices.len()
                && offsets.windows(2).all(|w| w[0] <= w[1]),
            "ElementList::ragged: bad offsets"
        );
        ElementList {
            arity: None,
            offsets,
            indices,
        }
    }

    /// Builds a list from per-element slices (fixed arity when they all have the same non-zero length).
    pub fn from_slices<S: AsRef<[u32]>>(elements: &[S]) -> ElementList {
        let first = elements.first().map(|e| e.as_ref().len());
        let indices: Vec<u32> = elements
            .iter()
            .flat_map(|e| e.as_ref().iter().copied())
            .collect();
        match first {
            Some(k) if k > 0 && elements.iter().all(|e| e.as_ref().len() == k) => {
                ElementList::fixed(k, indices)
            }
            None => ElementList {
                arity: Some(1),
                offsets: Vec::new(),
                indices,
            },
            _ => {
                let mut offsets = vec![0];
                for e in elements {
                    offsets.push(offsets.last().unwrap() + e.as_ref().len());
                }
                ElementList::ragged(offsets, indices)
            }
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        match self.arity {
            Some(k) => self.indices.len() / k,
            None => self.offsets.len() - 1,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `Some(k)` if every element has k indices.
    #[inline]
    pub fn arity(&self) -> Option<usize> {
        self.arity
    }

    /// The indices of element `i`.
    #[inline]
    pub fn get(&self, i: usize) -> &[u32] {
        match self.arity {
            Some(k) => &self.indices[i * k..(i + 1) * k],
            None => &self.indices[self.offsets[i]..self.offsets[i + 1]],
        }
    }

    /// Where element `i` starts in [`ElementList::indices`].
    #[inline]
    pub fn offset(&self, i: usize) -> usize {
        match self.arity {
            Some(k) => i * k,
            None => self.offsets[i],
        }
    }

    /// All indices, element after element.
    #[inline]
    pub fn indices(&self) -> &[u32] {
        &self.indices
    }

    /// Iterates over the elements.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u32]> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }

    /// The largest index plus one (0 when empty).
    pub fn max_index_bound(&self) -> usize {
        self.indices
            .iter()
            .map(|&i| i as usize + 1)
            .max()
            .unwrap_or(0)
    }
}
