//! The tape of reverse mode by operator overloading: a LIFO stack of 64-bit
//! slots (`f64`, `i64`, pointers, or blocks of them) that the forward sweep of a
//! taped region pushes and its reverse sweep pops.
//!
//! The storage is an arena in Stan's sense: [`Tape::reset`] forgets the contents
//! but keeps the capacity, so a program evaluated many times (an optimizer's
//! inner loop) allocates only while the tape grows past its largest size so far.
//! The run-time context owns the tape: the JIT's [`crate::jit::JitContext`] and
//! the interpreter's machine each hold one and reset it between evaluations.
//!
//! Words are untyped: the code that pushes knows the types and pops them back in
//! reverse order (the compiler emits both sides from the same type list). A pop
//! from an empty tape is a [`RtError`], never a panic.

use crate::ops::RtError;

/// A LIFO stack of 64-bit words with an arena's reset.
#[derive(Clone, Debug, Default)]
pub struct Tape {
    words: Vec<u64>,
    /// The most words held at once since creation (for statistics and sizing).
    high_water: usize,
}

impl Tape {
    pub fn new() -> Tape {
        Tape::default()
    }

    /// An empty tape with room for `words` words.
    pub fn with_capacity(words: usize) -> Tape {
        Tape {
            words: Vec::with_capacity(words),
            high_water: 0,
        }
    }

    /// Forgets every word and keeps the storage.
    pub fn reset(&mut self) {
        self.words.clear();
    }

    /// [`Tape::high_water`], restarting the count from the words held now.
    pub fn take_high_water(&mut self) -> usize {
        std::mem::replace(&mut self.high_water, self.words.len())
    }

    pub fn len(&self) -> usize {
        self.words.len()
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// Words the tape holds without growing.
    pub fn capacity(&self) -> usize {
        self.words.capacity()
    }

    /// The most words held at once so far.
    pub fn high_water(&self) -> usize {
        self.high_water
    }

    #[inline]
    pub fn push_word(&mut self, w: u64) {
        self.words.push(w);
        self.high_water = self.high_water.max(self.words.len());
    }

    #[inline]
    pub fn push_f64(&mut self, x: f64) {
        self.push_word(x.to_bits());
    }

    #[inline]
    pub fn push_i64(&mut self, x: i64) {
        self.push_word(x as u64);
    }

    /// Pushes a block of words; [`Tape::pop_block`] of the same length returns it unchanged.
    pub fn push_block(&mut self, ws: &[u64]) {
        // Word by word: the blocks compiled code pushes are a few words, for
        // which a bulk copy (a `memmove` call) costs more than the copy.
        self.words.reserve(ws.len());
        for &w in ws {
            self.words.push(w);
        }
        self.high_water = self.high_water.max(self.words.len());
    }

    #[inline]
    pub fn pop_word(&mut self) -> Result<u64, RtError> {
        self.words.pop().ok_or_else(underflow)
    }

    pub fn pop_f64(&mut self) -> Result<f64, RtError> {
        self.pop_word().map(f64::from_bits)
    }

    pub fn pop_i64(&mut self) -> Result<i64, RtError> {
        self.pop_word().map(|w| w as i64)
    }

    /// Pops the last `out.len()` words into `out`, in the order they were pushed.
    pub fn pop_block(&mut self, out: &mut [u64]) -> Result<(), RtError> {
        let n = out.len();
        let start = self.words.len().checked_sub(n).ok_or_else(underflow)?;
        for (o, &w) in out.iter_mut().zip(&self.words[start..]) {
            *o = w;
        }
        self.words.truncate(start);
        Ok(())
    }
}

fn underflow() -> RtError {
    RtError::Other("tape underflow: a pop without a matching push".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifo_order_of_scalars_and_blocks() {
        let mut t = Tape::new();
        t.push_f64(1.5);
        t.push_i64(-7);
        t.push_block(&[1, 2, 3]);
        let mut b = [0u64; 3];
        t.pop_block(&mut b).unwrap();
        assert_eq!(b, [1, 2, 3]);
        assert_eq!(t.pop_i64().unwrap(), -7);
        assert_eq!(t.pop_f64().unwrap(), 1.5);
        assert!(t.is_empty());
        assert!(t.pop_f64().is_err());
        assert!(t.pop_block(&mut [0u64; 1]).is_err());
    }

    #[test]
    fn reset_keeps_capacity() {
        let mut t = Tape::new();
        for i in 0..1000 {
            t.push_i64(i);
        }
        let cap = t.capacity();
        t.reset();
        assert!(t.is_empty());
        assert_eq!(t.capacity(), cap);
        assert_eq!(t.high_water(), 1000);
        t.push_f64(2.0);
        assert_eq!(t.capacity(), cap);
        assert_eq!(t.take_high_water(), 1000);
        assert_eq!(t.high_water(), 1);
    }
}
