//! Error-poll points: which loops must test the recorded run-time error after every trip.
//!
//! Compiled code records the first run-time error and continues with safe values; a loop
//! stops early only where its body could otherwise do something observable or unbounded
//! after the error.

use crate::ir::{Function, OpKind, Region};

/// Whether a `for` loop must test the error flag before every trip: when its
/// body (nested regions included) calls a function, prints, uses the tape or
/// contains a `while`. Other bodies only run inline arithmetic, element reads
/// and writes and heap-tensor ops, all of which continue with safe values after
/// an error, so the loop may finish its (bounded) trips and the error is seen
/// when the function returns.
pub fn needs_poll(f: &Function, r: &Region) -> bool {
    r.ops.iter().any(|&id| {
        let op = &f.ops[id];
        matches!(
            op.kind,
            OpKind::Call(_)
                | OpKind::Print
                | OpKind::PrintStr(_)
                | OpKind::While
                | OpKind::TapePush
                | OpKind::TapePop
        ) || op.regions.iter().any(|nr| needs_poll(f, nr))
    })
}
