//! The `extern "C"` routines compiled code calls, and their symbol table.
//!
//! Every routine takes the context first. None unwinds: a routine that fails
//! records an [`RtError`] in the context and writes safe values (zeros, null).

use std::panic::{AssertUnwindSafe, catch_unwind};

use super::context::JitContext;
use super::layout::Arg;
use super::tensor::{apply, write_result};
use crate::ops::RtError;

fn guarded(ctx: &mut JitContext<'_>, f: impl FnOnce(&mut JitContext<'_>) -> Result<(), RtError>) {
    match catch_unwind(AssertUnwindSafe(|| f(ctx))) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => ctx.set_error(e),
        Err(_) => ctx.set_error(RtError::Other(
            "internal error in a run-time routine".into(),
        )),
    }
}

/// Computes op site `desc` on the operand slots at `args`, writing the result slots to `results`.
///
/// # Safety
/// `args` and `results` must hold the slot counts of the descriptor's layouts.
pub unsafe extern "C" fn mad_rt_apply(
    ctx: &mut JitContext<'_>,
    desc: u32,
    args: *const u64,
    results: *mut u64,
) {
    let Some(d) = ctx.desc(desc) else {
        ctx.set_error(RtError::Other(format!("internal: unknown op site {desc}")));
        return;
    };
    let n_in: usize = d.args.iter().map(|l| l.slots()).sum();
    let n_out = d.result.slots();
    let input = unsafe { std::slice::from_raw_parts(args, n_in) };
    let output = unsafe { std::slice::from_raw_parts_mut(results, n_out) };
    output.fill(0);
    if ctx.has_error != 0 {
        return;
    }
    guarded(ctx, |ctx| {
        let mut pos = 0;
        let operands: Vec<Arg<'_>> = d
            .args
            .iter()
            .map(|l| {
                let a = unsafe { l.arg(&input[pos..pos + l.slots()]) };
                pos += l.slots();
                a
            })
            .collect();
        let v = apply(&d.op, &operands)?;
        drop(operands);
        let mut slots = Vec::with_capacity(n_out);
        write_result(v, &d.result, &mut |t| ctx.alloc(t) as u64, &mut slots)?;
        if slots.len() == n_out {
            output.copy_from_slice(&slots);
        }
        Ok(())
    });
}

/// Writes the value of layout `layout` held in the slots at `buf`, then a newline,
/// to the context's output (nothing once an error is recorded).
///
/// # Safety
/// `buf` must hold the layout's slot count.
pub unsafe extern "C" fn mad_rt_print(ctx: &mut JitContext<'_>, layout: u32, buf: *const u64) {
    if ctx.has_error != 0 {
        return;
    }
    let Some(l) = ctx.layout(layout) else {
        ctx.set_error(RtError::Other(format!("internal: unknown layout {layout}")));
        return;
    };
    let slots = unsafe { std::slice::from_raw_parts(buf, l.slots()) };
    guarded(ctx, |ctx| {
        let v = unsafe { l.rebuild(slots) };
        let text = format!("{v}\n");
        ctx.output().extend_from_slice(text.as_bytes());
        Ok(())
    });
}

/// Writes a string literal and a newline.
///
/// # Safety
/// `text` must point at `len` bytes of UTF-8 that outlive the call.
pub unsafe extern "C" fn mad_rt_print_str(ctx: &mut JitContext<'_>, text: *const u8, len: i64) {
    if ctx.has_error != 0 {
        return;
    }
    let bytes = unsafe { std::slice::from_raw_parts(text, len as usize) };
    let out = ctx.output();
    out.extend_from_slice(bytes);
    out.push(b'\n');
}

/// Pushes the `n` words at `buf` on the tape (nothing once an error is recorded).
///
/// # Safety
/// `buf` must hold `n` words.
pub unsafe extern "C" fn mad_rt_tape_push(ctx: &mut JitContext<'_>, buf: *const u64, n: i64) {
    if ctx.has_error != 0 {
        return;
    }
    let words = unsafe { std::slice::from_raw_parts(buf, n.max(0) as usize) };
    ctx.tape_push(words);
}

/// Pops `n` words from the tape into `buf` (in push order); zeros and an error on underflow.
///
/// # Safety
/// `buf` must have room for `n` words.
pub unsafe extern "C" fn mad_rt_tape_pop(ctx: &mut JitContext<'_>, buf: *mut u64, n: i64) {
    let out = unsafe { std::slice::from_raw_parts_mut(buf, n.max(0) as usize) };
    if ctx.has_error != 0 {
        out.fill(0);
        return;
    }
    if let Err(e) = ctx.tape_pop(out) {
        out.fill(0);
        ctx.set_error(e);
    }
}

/// The number of heap tensors in the arena (a mark for [`mad_rt_arena_release`]).
pub extern "C" fn mad_rt_arena_mark(ctx: &mut JitContext<'_>) -> u64 {
    ctx.arena_len() as u64
}

/// Frees the heap tensors allocated since `mark`, except the `n` ones whose
/// header addresses are at `keep` (other words there are ignored).
///
/// # Safety
/// `keep` must hold `n` words; no live value may refer to a freed tensor.
pub unsafe extern "C" fn mad_rt_arena_release(
    ctx: &mut JitContext<'_>,
    mark: u64,
    keep: *const u64,
    n: i64,
) {
    let keep = unsafe { std::slice::from_raw_parts(keep, n.max(0) as usize) };
    ctx.release_since(mark as usize, keep);
}

pub extern "C" fn mad_rt_error_div_zero(ctx: &mut JitContext<'_>) {
    ctx.set_error(RtError::DivByZero);
}

pub extern "C" fn mad_rt_error_index(ctx: &mut JitContext<'_>, index: i64, len: i64) {
    ctx.set_error(RtError::IndexOutOfBounds { index, len });
}

pub extern "C" fn mad_rt_error_recursion(ctx: &mut JitContext<'_>) {
    ctx.set_error(RtError::RecursionLimit);
}

/// Records a shape mismatch of a small tensor built from run-time extents.
pub extern "C" fn mad_rt_error_extent(ctx: &mut JitContext<'_>, got: i64, want: i64) {
    ctx.set_error(RtError::ShapeMismatch(format!(
        "tensor.full: extent {got} where the type says {want}"
    )));
}

/// Integer power (wrapping); a negative exponent records an error and gives 0.
pub extern "C" fn mad_rt_ipow(ctx: &mut JitContext<'_>, a: i64, b: i64) -> i64 {
    match crate::ops::BinaryOp::Pow.i64(a, b) {
        Ok(v) => v,
        Err(e) => {
            ctx.set_error(e);
            0
        }
    }
}

/// `(symbol, address)` of every routine compiled code may call, math included.
pub fn symbols() -> Vec<(&'static str, *const u8)> {
    let mut out: Vec<(&'static str, *const u8)> = vec![
        ("mad_rt_apply", mad_rt_apply as *const u8),
        ("mad_rt_print", mad_rt_print as *const u8),
        ("mad_rt_print_str", mad_rt_print_str as *const u8),
        ("mad_rt_error_div_zero", mad_rt_error_div_zero as *const u8),
        ("mad_rt_error_index", mad_rt_error_index as *const u8),
        (
            "mad_rt_error_recursion",
            mad_rt_error_recursion as *const u8,
        ),
        ("mad_rt_error_extent", mad_rt_error_extent as *const u8),
        ("mad_rt_ipow", mad_rt_ipow as *const u8),
        ("mad_rt_tape_push", mad_rt_tape_push as *const u8),
        ("mad_rt_tape_pop", mad_rt_tape_pop as *const u8),
        ("mad_rt_arena_mark", mad_rt_arena_mark as *const u8),
        ("mad_rt_arena_release", mad_rt_arena_release as *const u8),
    ];
    out.extend(super::direct::symbols());
    out.extend(super::math::symbols());
    out
}
