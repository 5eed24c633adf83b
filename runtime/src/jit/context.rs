//! The run-time context every compiled function receives as its hidden first
//! parameter: an arena for heap tensors, the first run-time error, the call
//! depth, the stack limit, the buffered output of `print`, the reverse-mode
//! tape (a word stack like [`crate::tape::Tape`], reset, not freed, between
//! evaluations, that compiled code pushes and pops inline), and the tables the
//! routines need (value layouts and heap-op descriptors).
//!
//! Compiled code reads `has_error`, `depth` and `stack_limit` directly at the
//! offsets given by the `OFFSET_*` constants, and records an index out of
//! bounds itself (`has_error` = [`INLINE_INDEX_ERROR`], details in
//! `pending_index`, turned into the error when it is read), so that loops with
//! bounds checks make no calls; everything else is reached through the routines
//! in [`super::routines`].

use super::layout::FlatLayout;
use super::tensor::ApplyDesc;
use crate::ops::RtError;
use crate::value::Tensor;

/// Calls nested deeper than this record [`RtError::RecursionLimit`].
pub const MAX_CALL_DEPTH: u64 = 12_000;

/// The stack size of the thread that runs compiled code.
pub const JIT_STACK_SIZE: usize = 256 << 20;

/// Stack kept free below the limit for run-time routines and one frame.
pub const STACK_MARGIN: usize = 8 << 20;

/// Largest rank whose extents the header of a heap tensor stores inline.
pub const HEAP_INLINE_RANK: usize = 4;

/// A heap tensor as compiled code sees it: a `repr(C)` header that compiled code
/// reads directly (element pointer, element count, rank, extents) in front of the
/// owned [`Tensor`]. Heap tensors are immutable once allocated, so the header
/// stays true for the tensor's life.
#[repr(C)]
pub struct HeapTensor {
    /// The first element (row-major); dangling but non-null when empty.
    pub data: *const u8,
    pub numel: u64,
    pub rank: u64,
    /// Extents of the first [`HEAP_INLINE_RANK`] axes (0 beyond the rank).
    pub dims: [u64; HEAP_INLINE_RANK],
    pub tensor: Tensor,
}

pub const HEAP_OFFSET_DATA: i32 = std::mem::offset_of!(HeapTensor, data) as i32;
pub const HEAP_OFFSET_NUMEL: i32 = std::mem::offset_of!(HeapTensor, numel) as i32;
pub const HEAP_OFFSET_DIMS: i32 = std::mem::offset_of!(HeapTensor, dims) as i32;

/// Zeroed words that compiled code reads instead of a null heap pointer's header
/// (and instead of an empty tensor's elements), so inline loads never fault.
pub static HEAP_ZEROS: [u64; 16] = [0; 16];

impl HeapTensor {
    pub fn new(tensor: Tensor) -> HeapTensor {
        let mut h = HeapTensor { data: std::ptr::null(), numel: 0, rank: 0, dims: [0; HEAP_INLINE_RANK], tensor };
        h.refresh();
        h
    }

    /// Rewrites the header from the owned tensor (after its data or shape changed).
    fn refresh(&mut self) {
        use crate::value::TensorData;
        self.data = match &self.tensor.data {
            TensorData::F64(v) => v.as_ptr() as *const u8,
            TensorData::F32(v) => v.as_ptr() as *const u8,
            TensorData::I64(v) => v.as_ptr() as *const u8,
            TensorData::Bool(v) => v.as_ptr() as *const u8,
        };
        self.numel = self.tensor.data.len() as u64;
        self.rank = self.tensor.shape.len() as u64;
        self.dims = [0; HEAP_INLINE_RANK];
        for (d, n) in self.dims.iter_mut().zip(&self.tensor.shape) {
            *d = *n as u64;
        }
    }

    /// The `f64` words a freed entry keeps allocated (its capacity), or `None`
    /// when it does not hold `f64` data.
    fn spare_words(&self) -> Option<usize> {
        match &self.tensor.data {
            crate::value::TensorData::F64(v) => Some(v.capacity()),
            _ => None,
        }
    }
}

/// At most this many freed `f64` heap entries are kept for reuse.
const SPARE_MAX: usize = 64;
/// At most this many `f64` words (8 MiB) are kept allocated in freed entries.
const SPARE_WORDS_MAX: usize = 1 << 20;

#[repr(C)]
pub struct JitContext<'a> {
    /// 1 once an error is recorded (read by compiled loops and calls).
    pub has_error: u64,
    /// The current call depth.
    pub depth: u64,
    /// Compiled functions record a recursion error when the stack pointer is below this.
    pub stack_limit: u64,
    /// The source site (an index into the compiled module's site table, or
    /// [`NO_SITE`]) that compiled code stores before calling a routine that may fail.
    pub site: u64,
    /// An index error compiled code recorded without a routine call
    /// (`has_error` is then [`INLINE_INDEX_ERROR`]): index, length, site.
    pub pending_index: [u64; 3],
    /// The reverse-mode tape, which compiled code pushes and pops inline:
    /// `tape_cap` words at address `tape_words`, of which the first `tape_len`
    /// are held. Only [`JitContext::tape_push`] (through `mad_rt_tape_push`,
    /// which compiled code calls when a push does not fit) moves or grows it.
    pub tape_words: u64,
    pub tape_len: u64,
    pub tape_cap: u64,
    error: Option<RtError>,
    error_site: Option<u64>,
    // Boxed so that a tensor's address stays fixed while the vector grows.
    #[allow(clippy::vec_box)]
    arena: Vec<Box<HeapTensor>>,
    /// Freed `f64` entries (header box, shape and data buffers) that
    /// [`JitContext::alloc_f64`] reuses, so a loop whose trips free their
    /// temporaries allocates nothing in steady state.
    #[allow(clippy::vec_box)]
    spare: Vec<Box<HeapTensor>>,
    /// The total data capacity (in `f64` words) of the spare entries.
    spare_words: usize,
    out: Vec<u8>,
    /// The storage of the tape words (`tape_cap` zero-initialized words;
    /// reset keeps it).
    tape: Vec<u64>,
    layouts: &'a [FlatLayout],
    descs: &'a [ApplyDesc],
}

pub const OFFSET_HAS_ERROR: i32 = std::mem::offset_of!(JitContext<'static>, has_error) as i32;
pub const OFFSET_DEPTH: i32 = std::mem::offset_of!(JitContext<'static>, depth) as i32;
pub const OFFSET_SITE: i32 = std::mem::offset_of!(JitContext<'static>, site) as i32;
/// No source site is known.
pub const NO_SITE: u64 = u64::MAX;
pub const OFFSET_STACK_LIMIT: i32 = std::mem::offset_of!(JitContext<'static>, stack_limit) as i32;
pub const OFFSET_PENDING_INDEX: i32 = std::mem::offset_of!(JitContext<'static>, pending_index) as i32;
pub const OFFSET_TAPE_WORDS: i32 = std::mem::offset_of!(JitContext<'static>, tape_words) as i32;
pub const OFFSET_TAPE_LEN: i32 = std::mem::offset_of!(JitContext<'static>, tape_len) as i32;
pub const OFFSET_TAPE_CAP: i32 = std::mem::offset_of!(JitContext<'static>, tape_cap) as i32;
/// The `has_error` value of an index error recorded inline (details in
/// `pending_index`); any other nonzero value means an error recorded through
/// [`JitContext::set_error`].
pub const INLINE_INDEX_ERROR: u64 = 2;

impl<'a> JitContext<'a> {
    /// A fresh context; `stack_limit` is the lowest stack address compiled code may reach
    /// (0: unchecked).
    pub fn new(layouts: &'a [FlatLayout], descs: &'a [ApplyDesc], stack_limit: u64) -> JitContext<'a> {
        JitContext {
            has_error: 0,
            depth: 0,
            stack_limit,
            site: NO_SITE,
            pending_index: [0; 3],
            tape_words: 0,
            tape_len: 0,
            tape_cap: 0,
            error: None,
            error_site: None,
            arena: Vec::new(),
            spare: Vec::new(),
            spare_words: 0,
            out: Vec::new(),
            tape: Vec::new(),
            layouts,
            descs,
        }
    }

    /// The index error compiled code recorded inline, with its site, if that is the error.
    fn pending(&self) -> Option<(RtError, Option<u64>)> {
        (self.has_error == INLINE_INDEX_ERROR && self.error.is_none()).then(|| {
            let [index, len, site] = self.pending_index;
            (RtError::IndexOutOfBounds { index: index as i64, len: len as i64 }, (site != NO_SITE).then_some(site))
        })
    }

    /// Turns an inline-recorded index error into the recorded error.
    fn materialize(&mut self) {
        if let Some((e, site)) = self.pending() {
            self.error = Some(e);
            self.error_site = site;
            self.has_error = 1;
        }
    }

    /// Records `e` unless an error is already recorded (the first one wins).
    pub fn set_error(&mut self, e: RtError) {
        self.materialize();
        if self.error.is_none() {
            self.error = Some(e);
            self.error_site = (self.site != NO_SITE).then_some(self.site);
            self.has_error = 1;
        }
    }

    /// The site recorded with the first error, if compiled code stored one.
    pub fn error_site(&self) -> Option<u64> {
        match self.pending() {
            Some((_, site)) => site,
            None => self.error_site,
        }
    }

    /// The first recorded error.
    pub fn error(&mut self) -> Option<&RtError> {
        self.materialize();
        self.error.as_ref()
    }

    pub fn take_error(&mut self) -> Option<RtError> {
        self.materialize();
        self.has_error = 0;
        self.error.take()
    }

    /// Moves `t` into the arena; the pointer (to its [`HeapTensor`] header) stays
    /// valid until [`JitContext::reset`].
    pub fn alloc(&mut self, t: Tensor) -> *const HeapTensor {
        let b = Box::new(HeapTensor::new(t));
        let p: *const HeapTensor = &*b;
        self.arena.push(b);
        p
    }

    /// Moves `t` (an `f64` tensor of shape `shape`) into the arena, reusing a
    /// freed entry's buffers when there is one: `fill` receives the data vector
    /// empty and must leave it with the shape's element count. The pointer
    /// stays valid as for [`JitContext::alloc`].
    pub fn alloc_f64(&mut self, shape: &[usize], fill: impl FnOnce(&mut Vec<f64>)) -> *const HeapTensor {
        use crate::value::TensorData;
        let mut b = match self.spare.pop() {
            Some(b) => {
                self.spare_words -= b.spare_words().unwrap_or(0);
                b
            }
            None => Box::new(HeapTensor::new(Tensor { shape: Vec::new(), data: TensorData::F64(Vec::new()) })),
        };
        b.tensor.shape.clear();
        b.tensor.shape.extend_from_slice(shape);
        if !matches!(b.tensor.data, TensorData::F64(_)) {
            b.tensor.data = TensorData::F64(Vec::new());
        }
        if let TensorData::F64(v) = &mut b.tensor.data {
            v.clear();
            fill(v);
        }
        b.refresh();
        let p: *const HeapTensor = &*b;
        self.arena.push(b);
        p
    }

    /// Keeps a freed entry for [`JitContext::alloc_f64`] while the spare pool
    /// has room; drops it otherwise.
    fn recycle(&mut self, b: Box<HeapTensor>) {
        if let Some(words) = b.spare_words()
            && self.spare.len() < SPARE_MAX
            && self.spare_words + words <= SPARE_WORDS_MAX
        {
            self.spare_words += words;
            self.spare.push(b);
        }
    }

    /// Frees every heap tensor, clears the error and the depth, and resets the
    /// tape (keeping its storage).
    pub fn reset(&mut self) {
        self.arena.clear();
        self.tape_len = 0;
        self.error = None;
        self.error_site = None;
        self.site = NO_SITE;
        self.has_error = 0;
        self.depth = 0;
    }

    /// After a call from the host: the first recorded error, taken, and the
    /// context reset for the next call ([`JitContext::reset`]). A call that
    /// recorded no error and left no heap tensor has only its tape, depth and
    /// site to clear.
    #[inline]
    pub fn finish_call(&mut self) -> Option<RtError> {
        if self.has_error == 0 && self.arena.is_empty() {
            self.tape_len = 0;
            self.depth = 0;
            self.site = NO_SITE;
            return None;
        }
        let e = self.take_error();
        self.reset();
        e
    }

    /// Words on the reverse-mode tape.
    pub fn tape_len(&self) -> usize {
        self.tape_len as usize
    }

    /// Pushes a block of words on the tape, growing it when they do not fit.
    pub fn tape_push(&mut self, ws: &[u64]) {
        let len = self.tape_len as usize;
        let end = len + ws.len();
        if end > self.tape.len() {
            let cap = end.max(2 * self.tape.len()).max(64);
            self.tape.resize(cap, 0);
            self.tape_words = self.tape.as_mut_ptr() as u64;
            self.tape_cap = cap as u64;
        }
        self.tape[len..end].copy_from_slice(ws);
        self.tape_len = end as u64;
    }

    /// Pops the last `out.len()` words into `out`, in the order they were pushed.
    pub fn tape_pop(&mut self, out: &mut [u64]) -> Result<(), RtError> {
        let len = self.tape_len as usize;
        let start = len
            .checked_sub(out.len())
            .ok_or_else(|| RtError::Other("tape underflow: a pop without a matching push".into()))?;
        out.copy_from_slice(&self.tape[start..len]);
        self.tape_len = start as u64;
        Ok(())
    }

    pub fn output(&mut self) -> &mut Vec<u8> {
        &mut self.out
    }

    pub fn take_output(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }

    pub fn layout(&self, id: u32) -> Option<&'a FlatLayout> {
        self.layouts.get(id as usize)
    }

    pub fn desc(&self, id: u32) -> Option<&'a ApplyDesc> {
        self.descs.get(id as usize)
    }

    /// Frees the heap tensors allocated after the first `mark` ones, except those
    /// whose header address is in `keep`; the kept ones stay at their addresses.
    pub fn release_since(&mut self, mark: usize, keep: &[u64]) {
        let len = self.arena.len();
        if len <= mark {
            return;
        }
        let mut w = mark;
        for r in mark..len {
            let p = &*self.arena[r] as *const HeapTensor as u64;
            if keep.contains(&p) {
                self.arena.swap(w, r);
                w += 1;
            }
        }
        // The last allocated goes first, so the spare pool's top is the
        // first one this stretch allocated: a loop trip that allocates the
        // same sizes again gets back the entries of the previous trip in order.
        while self.arena.len() > w {
            if let Some(b) = self.arena.pop() {
                self.recycle(b);
            }
        }
    }

    /// Number of heap tensors alive in the arena.
    pub fn arena_len(&self) -> usize {
        self.arena.len()
    }
}
