//! The fixed schedule of parallel assembly: elements cut into contiguous chunks, chunks coloured
//! so that no two chunks of one colour share a dof.
//!
//! Chunks of one colour write disjoint gradient entries and disjoint CSR rows, so they run in
//! parallel without synchronisation; colours run one after another; inside a chunk elements run
//! in index order. The chunk size depends only on the number of elements
//! (`clamp(len / 32, 256, 4096)`) and chunks are coloured greedily in index order (smallest
//! colour none of the chunk's dofs has seen), so the schedule, and with it the order in which
//! every entry receives its contributions, never depends on the thread count. Contiguous chunks
//! keep the memory locality of the element order: each colour touches its own regions of the
//! mesh.

use super::ElementList;
use std::ops::Range;

/// Contiguous element chunks grouped by colour: colour c is chunks
/// `chunks[colour_offsets[c]..colour_offsets[c+1]]`, in increasing chunk order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coloring {
    pub num_elements: usize,
    pub chunk_size: usize,
    pub chunks: Vec<u32>,
    pub colour_offsets: Vec<usize>,
}

/// The chunk size used for `len` elements.
pub fn chunk_size_for(len: usize) -> usize {
    (len / 32).clamp(256, 4096)
}

impl Coloring {
    /// Schedules the elements of a local-dof list over `ndofs` dofs.
    pub fn greedy(dofs: &ElementList, ndofs: usize) -> Coloring {
        Coloring::with_chunk_size(dofs, ndofs, chunk_size_for(dofs.len()))
    }

    /// Schedules with a given chunk size (1 colours single elements).
    pub fn with_chunk_size(dofs: &ElementList, ndofs: usize, chunk_size: usize) -> Coloring {
        let chunk_size = chunk_size.max(1);
        let n = dofs.len();
        let nchunks = n.div_ceil(chunk_size);
        let mut words = 1usize;
        let mut used = vec![0u64; ndofs];
        let mut colour = vec![0u32; nchunks];
        let mut ncolours = 0usize;
        let mut acc = Vec::new();
        for (ch, col) in colour.iter_mut().enumerate() {
            let elems = ch * chunk_size..((ch + 1) * chunk_size).min(n);
            acc.clear();
            acc.resize(words, 0u64);
            for e in elems.clone() {
                for &d in dofs.get(e) {
                    let m = &used[d as usize * words..(d as usize + 1) * words];
                    for (a, b) in acc.iter_mut().zip(m) {
                        *a |= b;
                    }
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
            for e in elems {
                for &d in dofs.get(e) {
                    used[d as usize * words + c / 64] |= 1u64 << (c % 64);
                }
            }
            *col = c as u32;
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
        let mut chunks = vec![0u32; nchunks];
        for (ch, &c) in colour.iter().enumerate() {
            chunks[fill[c as usize]] = ch as u32;
            fill[c as usize] += 1;
        }
        Coloring {
            num_elements: n,
            chunk_size,
            chunks,
            colour_offsets,
        }
    }

    pub fn num_colours(&self) -> usize {
        self.colour_offsets.len() - 1
    }

    /// The chunks of colour c.
    pub fn colour(&self, c: usize) -> &[u32] {
        &self.chunks[self.colour_offsets[c]..self.colour_offsets[c + 1]]
    }

    /// The elements of a chunk.
    pub fn chunk_elements(&self, chunk: u32) -> Range<usize> {
        let lo = chunk as usize * self.chunk_size;
        lo..(lo + self.chunk_size).min(self.num_elements)
    }
}
