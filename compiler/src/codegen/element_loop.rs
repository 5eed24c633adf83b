//! Mesh element loops as data: what a back end compiles for a term's workload (the
//! gather → kernel → scatter loop over a range of elements) and the frame a launcher hands
//! each range.
//!
//! A spec ([`BatchSpec`]) names the kernel (an IR function whose body is plain scalar code,
//! [`batchable`]), what is done with its results ([`BatchKind`]) and how its inputs are
//! gathered ([`BatchInput`]). For each element of the range `start..end` of a
//! [`BatchFrame`], the loop gathers the local dof vector from `x` through the element's dof
//! indices, loads the element's data and the loop-invariant params, evaluates the kernel,
//! and adds the weighted results into the energy sum, the gradient, the CSR values (through
//! the element's precomputed slots) or the HVP output, each entry receiving its
//! contributions in element order. The CPU runs ranges in parallel chunks; a GPU would run
//! one block per patch.
//!
//! Hessians ([`BatchKind::Hess`]): the kernel returns the k×k block by columns (column b =
//! ∂(∇E)/∂z_b); only the upper triangle (rows a ≤ b of column b) is read and each value is
//! added to both the (a, b) and (b, a) slots.

use mad_runtime::jit::FlatLayout;

use super::layout::{flat_layout, type_has_heap};
use crate::ir::{self, OpKind, Region, ScalarKind, Type};

/// What a batched loop does with its kernel's results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BatchKind {
    /// `kernel(z, o…) -> value`: the energy sum only.
    Value,
    /// `kernel(z, o…) -> (value, ∇)`: energy sum and gradient.
    Grad,
    /// `kernel(z, o…) -> (value, ∇, (col₀, …))`: energy, gradient, CSR values.
    Hess,
    /// `kernel(z, o…, v) -> H·v`: adds into the output vector.
    Hvp,
    /// Like `Hess`, but each element's k×k block (row-major, unweighted, the
    /// upper triangle mirrored) is stored into [`BatchFrame::out`] at
    /// `(e − start)·k²` instead of being scattered: for blocks the caller
    /// transforms (PSD projection) before it scatters them.
    HessBlock,
}

/// How one kernel parameter after the local dof vector `z` is filled.
#[derive(Clone, Debug, PartialEq)]
pub enum BatchInput {
    /// `slots` values of data array `array` (of [`BatchFrame::data`]) at the
    /// element itself (`vertex: None`) or at its stencil vertex `Some(v)`
    /// (through [`BatchFrame::verts`]).
    Data {
        array: usize,
        vertex: Option<u8>,
        slots: usize,
    },
    /// Loop-invariant slots of [`BatchFrame::consts`] starting at `at` (params).
    Const { at: usize },
}

/// A batched loop to compile: the IR kernel inlined into it and how its
/// inputs are filled.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchSpec {
    pub kernel: ir::FuncRef,
    pub kind: BatchKind,
    /// Local dof count: the kernel's first parameter is a tuple of k `f64`.
    pub k: usize,
    /// Stencil vertex count (the row length of [`BatchFrame::verts`]).
    pub nverts: usize,
    /// The kernel's parameters after `z` (before the HVP direction), in order.
    pub inputs: Vec<BatchInput>,
    /// `Hess` only: empty for a full k·k slot table; otherwise the lengths of
    /// runs of consecutive dof indices that partition the local dofs, and
    /// [`BatchFrame::slots`] holds per element, per row a, per run r the slot
    /// of (a, first column of r) — the run's other columns follow it.
    pub runs: Vec<usize>,
}

/// The arguments of one batched call. Pointers a kind does not use may be null.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct BatchFrame {
    /// Element range `start..end`.
    pub start: u64,
    pub end: u64,
    /// The global dof vector.
    pub x: *const f64,
    /// k dof indices per element.
    pub dofs: *const u32,
    /// k·k CSR value slots per element (row-major block order), or the
    /// compact table of [`BatchSpec::runs`] — `Hess`.
    pub slots: *const u32,
    /// `nverts` vertex indices per element (data read at vertices).
    pub verts: *const u32,
    /// Gradient output (`Grad`, `Hess`).
    pub grad: *mut f64,
    /// CSR values output (`Hess`).
    pub hess: *mut f64,
    /// HVP direction and output (`Hvp`); `out` is the block buffer of
    /// `HessBlock` (`(end − start)·k²` values).
    pub v: *const f64,
    pub out: *mut f64,
    /// The factor every contribution is multiplied by.
    pub weight: f64,
    /// Loop-invariant 8-byte slots (params; an `i64` as its bits).
    pub consts: *const u64,
    /// One pointer per data array.
    pub data: *const *const f64,
}

fn region_ok(f: &ir::Function, r: &Region) -> bool {
    r.ops.iter().all(|&id| {
        let op = &f.ops[id];
        let plain = !matches!(
            op.kind,
            OpKind::Call(_)
                | OpKind::Print
                | OpKind::PrintStr(_)
                | OpKind::TapePush
                | OpKind::TapePop
        ) && !op.kind.is_tape();
        plain && op.regions.iter().all(|r| region_ok(f, r))
    })
}

/// Whether `f` can be inlined into a batched loop as `kind` with k local dofs:
/// its body is plain scalar code and its signature matches the kind.
pub fn batchable(f: &ir::Function, kind: BatchKind, k: usize, ninputs: usize) -> bool {
    if k == 0
        || f.values.iter().any(|(_, v)| type_has_heap(&v.ty))
        || !region_ok(f, &f.body)
    {
        return false;
    }
    let z = Type::Tuple(vec![Type::F64; k]);
    let params = f.param_types();
    let extra = usize::from(kind == BatchKind::Hvp);
    if params.len() != 1 + ninputs + extra
        || params[0] != z
        || (extra == 1 && params[1 + ninputs] != z)
    {
        return false;
    }
    let ret = flat_layout(&f.ret);
    let nret = ret.slots();
    let all_f64 = only_f64(&ret);
    let want = match kind {
        BatchKind::Value => 1,
        BatchKind::Grad => 1 + k,
        BatchKind::Hess | BatchKind::HessBlock => 1 + k + k * k,
        BatchKind::Hvp => k,
    };
    all_f64 && nret == want
}

/// Whether every slot of `l` is an `f64`.
fn only_f64(l: &FlatLayout) -> bool {
    match l {
        FlatLayout::Scalar(k) | FlatLayout::Small { elem: k, .. } => *k == ScalarKind::F64,
        FlatLayout::Heap { .. } => false,
        FlatLayout::Tuple(items) => items.iter().all(only_f64),
    }
}
