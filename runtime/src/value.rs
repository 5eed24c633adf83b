//! Host-side values and their printed form.
//!
//! A [`Tensor`] is a dense row-major array of one scalar kind with a concrete
//! shape; small vectors (`vec3`), matrices (`mat2x3`), fixed arrays, slices and the
//! dynamic `vector`/`matrix` types are all tensors at run time.

use std::fmt;

/// The scalar kinds of the language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarKind {
    F64,
    F32,
    I64,
    Bool,
}

impl ScalarKind {
    pub fn name(self) -> &'static str {
        match self {
            ScalarKind::F64 => "f64",
            ScalarKind::F32 => "f32",
            ScalarKind::I64 => "i64",
            ScalarKind::Bool => "bool",
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, ScalarKind::F64 | ScalarKind::F32)
    }
}

/// The elements of a tensor, row-major.
#[derive(Clone, Debug, PartialEq)]
pub enum TensorData {
    F64(Vec<f64>),
    F32(Vec<f32>),
    I64(Vec<i64>),
    Bool(Vec<bool>),
}

impl TensorData {
    pub fn len(&self) -> usize {
        match self {
            TensorData::F64(v) => v.len(),
            TensorData::F32(v) => v.len(),
            TensorData::I64(v) => v.len(),
            TensorData::Bool(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn kind(&self) -> ScalarKind {
        match self {
            TensorData::F64(_) => ScalarKind::F64,
            TensorData::F32(_) => ScalarKind::F32,
            TensorData::I64(_) => ScalarKind::I64,
            TensorData::Bool(_) => ScalarKind::Bool,
        }
    }

    /// Element `i` as a scalar value.
    pub fn get(&self, i: usize) -> Value {
        match self {
            TensorData::F64(v) => Value::F64(v[i]),
            TensorData::F32(v) => Value::F32(v[i]),
            TensorData::I64(v) => Value::I64(v[i]),
            TensorData::Bool(v) => Value::Bool(v[i]),
        }
    }
}

/// A dense row-major array with a concrete shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub shape: Vec<usize>,
    pub data: TensorData,
}

impl Tensor {
    /// A tensor; `None` if the data length does not match the shape.
    pub fn new(shape: Vec<usize>, data: TensorData) -> Option<Tensor> {
        (shape.iter().product::<usize>() == data.len()).then_some(Tensor { shape, data })
    }

    pub fn from_f64(shape: Vec<usize>, data: Vec<f64>) -> Option<Tensor> {
        Tensor::new(shape, TensorData::F64(data))
    }

    pub fn vector(data: Vec<f64>) -> Tensor {
        Tensor {
            shape: vec![data.len()],
            data: TensorData::F64(data),
        }
    }

    pub fn kind(&self) -> ScalarKind {
        self.data.kind()
    }

    pub fn as_f64(&self) -> Option<&[f64]> {
        match &self.data {
            TensorData::F64(v) => Some(v),
            _ => None,
        }
    }

    fn fmt_axis(&self, f: &mut fmt::Formatter<'_>, axis: usize, offset: usize) -> fmt::Result {
        write!(f, "[")?;
        let stride: usize = self.shape[axis + 1..].iter().product();
        for i in 0..self.shape[axis] {
            if i > 0 {
                write!(f, ", ")?;
            }
            if axis + 1 == self.shape.len() {
                write!(f, "{}", self.data.get(offset + i))?;
            } else {
                self.fmt_axis(f, axis + 1, offset + i * stride)?;
            }
        }
        write!(f, "]")
    }
}

/// A value of any type of the language.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    F64(f64),
    F32(f32),
    I64(i64),
    Bool(bool),
    Tensor(Tensor),
    /// A tuple; the empty tuple is the unit value `()`.
    Tuple(Vec<Value>),
}

impl Value {
    pub const UNIT: Value = Value::Tuple(Vec::new());

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::F64(x) => Some(*x),
            _ => None,
        }
    }
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::I64(x) => Some(*x),
            _ => None,
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(x) => Some(*x),
            _ => None,
        }
    }
    pub fn as_tensor(&self) -> Option<&Tensor> {
        match self {
            Value::Tensor(t) => Some(t),
            _ => None,
        }
    }
}

/// Floats print in their shortest round-trip form (`0.1`, `1.0`, `1e-7`, `inf`, `NaN`).
pub fn fmt_f64(x: f64) -> String {
    format!("{x:?}")
}

impl fmt::Display for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A host can build a tensor whose data does not match its shape: say so, without
        // reading past the data.
        if self.shape.iter().try_fold(1usize, |a, &n| a.checked_mul(n)) != Some(self.data.len()) {
            return write!(f, "<a tensor of shape {:?} holding {} values>", self.shape, self.data.len());
        }
        if self.shape.is_empty() {
            return write!(f, "{}", self.data.get(0));
        }
        self.fmt_axis(f, 0, 0)
    }
}

/// The form `print` writes: floats shortest round-trip, tensors as nested `[..]`,
/// tuples as `(a, b)`.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::F64(x) => write!(f, "{x:?}"),
            Value::F32(x) => write!(f, "{x:?}"),
            Value::I64(x) => write!(f, "{x}"),
            Value::Bool(x) => write!(f, "{x}"),
            Value::Tensor(t) => write!(f, "{t}"),
            Value::Tuple(items) => {
                write!(f, "(")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{v}")?;
                }
                if items.len() == 1 {
                    write!(f, ",")?;
                }
                write!(f, ")")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_shortest_round_trip_and_nested_brackets() {
        assert_eq!(Value::F64(0.1).to_string(), "0.1");
        assert_eq!(Value::F64(1.0).to_string(), "1.0");
        assert_eq!(Value::F64(1e-7).to_string(), "1e-7");
        let m = Tensor::from_f64(vec![2, 2], vec![1.0, 2.0, 3.0, 4.5]).unwrap();
        assert_eq!(Value::Tensor(m).to_string(), "[[1.0, 2.0], [3.0, 4.5]]");
        let bad = Tensor { shape: vec![2, 2], data: TensorData::F64(vec![1.0]) };
        assert_eq!(bad.to_string(), "<a tensor of shape [2, 2] holding 1 values>");
        let t = Value::Tuple(vec![Value::I64(3), Value::Bool(true)]);
        assert_eq!(t.to_string(), "(3, true)");
        assert_eq!(Value::UNIT.to_string(), "()");
    }
}
