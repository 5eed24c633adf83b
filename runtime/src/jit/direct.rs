//! Typed routines compiled code calls directly for the common `f64` heap-tensor
//! ops (matrix product, transpose, sum, fill, elementwise `+ - * /`), instead
//! of [`mad_rt_apply`]: operands and result pass in registers (heap header
//! pointers, scalars), no operand or result vector is built, no op value is
//! matched, and the result reuses a freed arena entry
//! ([`JitContext::alloc_f64`]).
//!
//! Each routine computes exactly what [`super::kernels::fast`] computes for
//! the same op (the same kernels, the same operation order), and hands every
//! case that fast path declines (other shapes, every error) to
//! [`mad_rt_apply`] with the op site's descriptor, so results and errors are
//! those of the general path. Like [`mad_rt_apply`], a routine returns zero
//! (a null heap slot, `0.0`) once an error is recorded.

use super::context::{HeapTensor, JitContext};
use super::kernels::{matmul_f64, transpose_f64};
use super::routines::mad_rt_apply;
use crate::ops::BinaryOp;
use crate::value::TensorData;

/// The shape and `f64` data of the heap tensor at `p` (`None` for null or
/// other kinds).
///
/// # Safety
/// `p` must be 0 or a live arena entry.
unsafe fn f64_heap<'t>(p: u64) -> Option<(&'t [usize], &'t [f64])> {
    if p == 0 {
        return None;
    }
    let h = unsafe { &*(p as *const HeapTensor) };
    match &h.tensor.data {
        TensorData::F64(v) => Some((&h.tensor.shape, v)),
        _ => None,
    }
}

/// The op site `desc` through the general path, on the operand slots `input`;
/// returns the single result slot.
fn general(ctx: &mut JitContext<'_>, desc: u32, input: &[u64]) -> u64 {
    let mut out = [0u64; 1];
    match ctx.desc(desc) {
        Some(d)
            if d.result.slots() == 1
                && d.args.iter().map(|l| l.slots()).sum::<usize>() == input.len() =>
        {
            // SAFETY: the buffers hold the descriptor's slot counts (checked above).
            unsafe { mad_rt_apply(ctx, desc, input.as_ptr(), out.as_mut_ptr()) }
        }
        _ => ctx.set_error(crate::ops::RtError::Other(format!(
            "internal: op site {desc} does not match its routine"
        ))),
    }
    out[0]
}

/// `tensor.matmul` of two `f64` heap tensors (matrix × matrix or matrix × vector).
///
/// # Safety
/// `a` and `b` must be 0 or live arena entries of `ctx`.
pub unsafe extern "C" fn mad_rt_matmul_f64(
    ctx: &mut JitContext<'_>,
    desc: u32,
    a: u64,
    b: u64,
) -> u64 {
    if ctx.has_error != 0 {
        return 0;
    }
    if let (Some((sa, va)), Some((sb, vb))) = unsafe { (f64_heap(a), f64_heap(b)) }
        && sa.len() == 2
        && (1..=2).contains(&sb.len())
        && sa[1] == sb[0]
        && sa[0].checked_mul(if sb.len() == 2 { sb[1] } else { 1 }).is_some_and(|t| t <= 1 << 22)
    {
        let (m, k) = (sa[0], sa[1]);
        let n = if sb.len() == 2 { sb[1] } else { 1 };
        let (shape2, shape1) = ([m, n], [m]);
        let shape: &[usize] = if sb.len() == 2 { &shape2 } else { &shape1 };
        return ctx.alloc_f64(shape, |out| {
            out.resize(m * n, 0.0);
            matmul_f64(va, vb, m, k, n, out);
        }) as u64;
    }
    general(ctx, desc, &[a, b])
}

/// `tensor.transpose` of an `f64` heap matrix.
///
/// # Safety
/// `a` must be 0 or a live arena entry of `ctx`.
pub unsafe extern "C" fn mad_rt_transpose_f64(ctx: &mut JitContext<'_>, desc: u32, a: u64) -> u64 {
    if ctx.has_error != 0 {
        return 0;
    }
    if let Some((&[m, n], v)) = unsafe { f64_heap(a) } {
        return ctx.alloc_f64(&[n, m], |out| transpose_f64(v, m, n, out)) as u64;
    }
    general(ctx, desc, &[a])
}

/// `tensor.sum` of an `f64` heap tensor: left to right from its first element
/// ([`super::kernels::sum_f64`]).
///
/// # Safety
/// `a` must be 0 or a live arena entry of `ctx`.
pub unsafe extern "C" fn mad_rt_sum_f64(ctx: &mut JitContext<'_>, desc: u32, a: u64) -> f64 {
    if ctx.has_error != 0 {
        return 0.0;
    }
    if let Some((_, v)) = unsafe { f64_heap(a) } {
        return super::kernels::sum_f64(v);
    }
    f64::from_bits(general(ctx, desc, &[a]))
}

/// `tensor.full` of an `f64` value to a heap tensor of rank `rank` (1 or 2)
/// with extents `n0` (and `n1`).
pub extern "C" fn mad_rt_full_f64(
    ctx: &mut JitContext<'_>,
    desc: u32,
    x: f64,
    n0: i64,
    n1: i64,
    rank: i64,
) -> u64 {
    if ctx.has_error != 0 {
        return 0;
    }
    // The limits of [`super::kernels::fast`]; beyond them the general path answers.
    let ok = |n: i64| (0..=1 << 20).contains(&n);
    let total = match rank {
        1 if ok(n0) => Some(n0 as usize),
        2 if ok(n0) && ok(n1) => (n0 as usize).checked_mul(n1 as usize),
        _ => None,
    };
    // Larger tensors take the general path, which reports a failed allocation as a
    // run-time error instead of aborting.
    if let Some(total) = total.filter(|&t| t <= 1 << 22) {
        let (shape2, shape1) = ([n0 as usize, n1 as usize], [n0 as usize]);
        let shape: &[usize] = if rank == 2 { &shape2 } else { &shape1 };
        return ctx.alloc_f64(shape, |out| out.resize(total, x)) as u64;
    }
    let mut input = vec![x.to_bits(), n0 as u64];
    if rank == 2 {
        input.push(n1 as u64);
    }
    general(ctx, desc, &input)
}

/// The elementwise op a routine code stands for (the order of
/// [`binary_code`]).
fn binary_of(code: u32) -> Option<BinaryOp> {
    [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div]
        .get(code as usize)
        .copied()
}

/// The code of an elementwise op [`mad_rt_binary_f64`] computes, if any.
pub fn binary_code(op: BinaryOp) -> Option<u32> {
    match op {
        BinaryOp::Add => Some(0),
        BinaryOp::Sub => Some(1),
        BinaryOp::Mul => Some(2),
        BinaryOp::Div => Some(3),
        _ => None,
    }
}

/// An elementwise `+ - * /` (by [`binary_code`]) of two `f64` heap tensors of
/// the same shape.
///
/// # Safety
/// `a` and `b` must be 0 or live arena entries of `ctx`.
pub unsafe extern "C" fn mad_rt_binary_f64(
    ctx: &mut JitContext<'_>,
    desc: u32,
    code: u32,
    a: u64,
    b: u64,
) -> u64 {
    if ctx.has_error != 0 {
        return 0;
    }
    if let (Some(op), Some((sa, va)), Some((sb, vb))) =
        (binary_of(code), unsafe { f64_heap(a) }, unsafe {
            f64_heap(b)
        })
        && sa == sb
    {
        return ctx.alloc_f64(sa, |out| {
            out.extend(va.iter().zip(vb).map(|(x, y)| op.f64(*x, *y)))
        }) as u64;
    }
    general(ctx, desc, &[a, b])
}

/// `(symbol, address)` of the routines of this module.
pub fn symbols() -> Vec<(&'static str, *const u8)> {
    vec![
        ("mad_rt_matmul_f64", mad_rt_matmul_f64 as *const u8),
        ("mad_rt_transpose_f64", mad_rt_transpose_f64 as *const u8),
        ("mad_rt_sum_f64", mad_rt_sum_f64 as *const u8),
        ("mad_rt_full_f64", mad_rt_full_f64 as *const u8),
        ("mad_rt_binary_f64", mad_rt_binary_f64 as *const u8),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jit::layout::FlatLayout;
    use crate::jit::tensor::{ApplyDesc, TensorOp};
    use crate::ops::RtError;
    use crate::value::{ScalarKind, Tensor};

    fn heap(rank: usize) -> FlatLayout {
        FlatLayout::Heap {
            elem: ScalarKind::F64,
            shape: vec![None; rank],
        }
    }

    fn descs() -> Vec<ApplyDesc> {
        vec![
            ApplyDesc {
                op: TensorOp::MatMul,
                args: vec![heap(2), heap(2)],
                result: heap(2),
            },
            ApplyDesc {
                op: TensorOp::Full,
                args: vec![
                    FlatLayout::Scalar(ScalarKind::F64),
                    FlatLayout::Scalar(ScalarKind::I64),
                ],
                result: heap(1),
            },
        ]
    }

    fn read(p: u64) -> Tensor {
        unsafe { (*(p as *const HeapTensor)).tensor.clone() }
    }

    #[test]
    fn matmul_computes_and_reuses_freed_entries() {
        let d = descs();
        let mut ctx = JitContext::new(&[], &d, 0);
        let a = ctx.alloc(Tensor::from_f64(vec![2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap())
            as u64;
        let b = ctx.alloc(Tensor::from_f64(vec![3, 1], vec![1.0, -1.0, 0.5]).unwrap()) as u64;
        let mark = ctx.arena_len();
        let r = unsafe { mad_rt_matmul_f64(&mut ctx, 0, a, b) };
        assert_eq!(
            read(r),
            Tensor::from_f64(vec![2, 1], vec![0.5, 2.0]).unwrap()
        );
        ctx.release_since(mark, &[]);
        assert_eq!(ctx.arena_len(), mark);
        // The freed entry comes back for the next result, with the new shape.
        let r2 = unsafe { mad_rt_matmul_f64(&mut ctx, 0, a, a) };
        assert_eq!(r2, 0, "2×3 by 2×3 fails");
        assert!(matches!(ctx.take_error(), Some(RtError::ShapeMismatch(_))));
        let at = unsafe { mad_rt_transpose_f64(&mut ctx, 0, a) };
        assert_eq!(at, r, "the freed entry is reused");
        assert_eq!(
            read(at),
            Tensor::from_f64(vec![3, 2], vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]).unwrap()
        );
        let header = unsafe { &*(at as *const HeapTensor) };
        assert_eq!(
            (header.numel, header.rank, header.dims),
            (6, 2, [3, 2, 0, 0])
        );
        assert_eq!(unsafe { mad_rt_sum_f64(&mut ctx, 0, at) }, 21.0);
    }

    #[test]
    fn released_tensors_that_are_kept_stay_and_errors_give_zero() {
        let d = descs();
        let mut ctx = JitContext::new(&[], &d, 0);
        let v = mad_rt_full_f64(&mut ctx, 1, 2.5, 3, 0, 1);
        let w = mad_rt_full_f64(&mut ctx, 1, -1.0, 2, 0, 1);
        ctx.release_since(0, &[w]);
        assert_eq!(ctx.arena_len(), 1);
        assert_eq!(read(w), Tensor::vector(vec![-1.0, -1.0]));
        let x = mad_rt_full_f64(&mut ctx, 1, 0.0, 4, 0, 1);
        assert_eq!(x, v, "the freed entry is reused");
        assert_eq!(read(x), Tensor::vector(vec![0.0; 4]));
        // A negative extent goes to the general path, which reports it.
        assert_eq!(mad_rt_full_f64(&mut ctx, 1, 1.0, -2, 0, 1), 0);
        assert!(matches!(ctx.error(), Some(RtError::Other(m)) if m.contains("negative")));
        // Once an error is recorded every routine gives zero.
        assert_eq!(unsafe { mad_rt_binary_f64(&mut ctx, 0, 0, w, w) }, 0);
        assert_eq!(unsafe { mad_rt_sum_f64(&mut ctx, 0, w) }, 0.0);
    }
}
