//! The values of one function activation, indexed by [`ValueId`], and what the activation
//! may update in place.

use std::rc::Rc;

use crate::codegen::inplace::InPlace;
use crate::ir::ValueId;
use mad_runtime::{RtError, Value};

/// One slot per SSA value of the function; `None` until the value is computed (or after
/// its last use took it).
pub struct Frame {
    slots: Vec<Option<Value>>,
    /// The function's in-place inserts ([`crate::codegen::inplace`]): such an insert takes its
    /// operand out of its slot and writes into it.
    pub inplace: Rc<InPlace>,
}

impl Frame {
    pub fn new(value_count: usize, inplace: Rc<InPlace>) -> Frame {
        Frame {
            slots: vec![None; value_count],
            inplace,
        }
    }

    /// Takes `v` out of its slot: its last use, which may then update it in place.
    pub fn take(&mut self, v: ValueId) -> Result<Value, RtError> {
        self.slots
            .get_mut(v.index())
            .and_then(Option::take)
            .ok_or_else(|| RtError::Other(format!("value #{} is used before it is computed", v.index())))
    }

    /// The values of `vs`, borrowed.
    pub fn get_refs(&self, vs: &[ValueId]) -> Result<Vec<&Value>, RtError> {
        vs.iter().map(|&v| self.get(v)).collect()
    }

    pub fn get(&self, v: ValueId) -> Result<&Value, RtError> {
        self.slots
            .get(v.index())
            .and_then(Option::as_ref)
            .ok_or_else(|| {
                RtError::Other(format!(
                    "value #{} is used before it is computed",
                    v.index()
                ))
            })
    }

    pub fn set(&mut self, v: ValueId, value: Value) -> Result<(), RtError> {
        match self.slots.get_mut(v.index()) {
            Some(slot) => {
                *slot = Some(value);
                Ok(())
            }
            None => Err(RtError::Other(format!(
                "value #{} does not exist",
                v.index()
            ))),
        }
    }

    /// The values of `vs`, cloned.
    pub fn get_all(&self, vs: &[ValueId]) -> Result<Vec<Value>, RtError> {
        vs.iter().map(|&v| self.get(v).cloned()).collect()
    }

    /// Binds `vs` to `values` (same length, checked by the caller).
    pub fn set_all(&mut self, vs: &[ValueId], values: Vec<Value>) -> Result<(), RtError> {
        if vs.len() != values.len() {
            return Err(RtError::Other(format!(
                "{} values for {} slots",
                values.len(),
                vs.len()
            )));
        }
        for (&v, x) in vs.iter().zip(values) {
            self.set(v, x)?;
        }
        Ok(())
    }
}
