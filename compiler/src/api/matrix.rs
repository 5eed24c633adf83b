//! [`Matrix`]: a dynamic `f64` matrix in row-major order, the Rust type of mad's `matrix`
//! parameters and results in typed calls ([`crate::Program::function`]).

use super::convert::{FromValue, IntoValue, RustShape};
use mad_runtime::{Tensor, TensorData, Value};

/// A dense `f64` matrix, row-major: entry (i, j) is `data()[i * cols + j]`. The data always
/// holds `rows × cols` entries (the constructors check it).
///
/// It stands for mad's `matrix` (= `[[f64]]`) as an argument and as a result:
///
/// ```
/// use mad::{Matrix, Program};
///
/// let prog = Program::compile_str(
///     "m.mad",
///     "fn scaled(m: matrix, s: f64) -> matrix { m * s }
///      fn trace(m: matrix) -> f64 { let mut t = 0.0; for i in 0..rows(m) { t += m[i, i]; } t }",
/// )?;
/// let m = Matrix::from_rows(&[[1.0, 2.0], [3.0, 4.0]]).unwrap();
///
/// let scaled = prog.function::<(Matrix, f64), Matrix>("scaled")?;
/// let r = scaled.call((m.clone(), 2.0))?;
/// assert_eq!((r.rows(), r.cols()), (2, 2));
/// assert_eq!(r.data(), &[2.0, 4.0, 6.0, 8.0]);
/// assert_eq!(r[(1, 0)], 6.0);
///
/// let trace = prog.function::<(Matrix,), f64>("trace")?;
/// assert_eq!(trace.call((m,))?, 5.0);
///
/// // A result can also be read as rows.
/// let rows = prog.function::<(Matrix, f64), Vec<Vec<f64>>>("scaled")?;
/// let m = Matrix::new(1, 3, vec![1.0, 2.0, 3.0]).unwrap();
/// assert_eq!(rows.call((m, -1.0))?, vec![vec![-1.0, -2.0, -3.0]]);
/// # Ok::<(), mad::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix {
    rows: usize,
    cols: usize,
    data: Vec<f64>,
}

impl Matrix {
    /// A matrix of `rows × cols` entries given row by row; `None` if `data` has another length.
    pub fn new(rows: usize, cols: usize, data: Vec<f64>) -> Option<Matrix> {
        (rows.checked_mul(cols) == Some(data.len())).then_some(Matrix { rows, cols, data })
    }

    /// A matrix of zeros.
    pub fn zeros(rows: usize, cols: usize) -> Matrix {
        Matrix { rows, cols, data: vec![0.0; rows * cols] }
    }

    /// A matrix from its rows; `None` if they differ in length. No rows give a 0 × 0 matrix.
    pub fn from_rows<R: AsRef<[f64]>>(rows: &[R]) -> Option<Matrix> {
        let cols = rows.first().map_or(0, |r| r.as_ref().len());
        if rows.iter().any(|r| r.as_ref().len() != cols) {
            return None;
        }
        let data = rows.iter().flat_map(|r| r.as_ref().iter().copied()).collect();
        Some(Matrix { rows: rows.len(), cols, data })
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The entries, row by row.
    pub fn data(&self) -> &[f64] {
        &self.data
    }

    /// The entries, row by row.
    pub fn into_data(self) -> Vec<f64> {
        self.data
    }

    /// Entry (i, j), or `None` outside the matrix.
    pub fn get(&self, i: usize, j: usize) -> Option<f64> {
        (i < self.rows && j < self.cols).then(|| self.data[i * self.cols + j])
    }

    /// The rows as vectors.
    pub fn to_rows(&self) -> Vec<Vec<f64>> {
        (0..self.rows).map(|i| self.data[i * self.cols..(i + 1) * self.cols].to_vec()).collect()
    }
}

impl std::ops::Index<(usize, usize)> for Matrix {
    type Output = f64;

    /// Entry (i, j); panics outside the matrix, as slice indexing does.
    fn index(&self, (i, j): (usize, usize)) -> &f64 {
        assert!(i < self.rows && j < self.cols, "index ({i}, {j}) outside a {}×{} matrix", self.rows, self.cols);
        &self.data[i * self.cols + j]
    }
}

impl From<Matrix> for Tensor {
    fn from(m: Matrix) -> Tensor {
        Tensor { shape: vec![m.rows, m.cols], data: TensorData::F64(m.data) }
    }
}

impl TryFrom<Tensor> for Matrix {
    type Error = Tensor;

    /// A rank-2 `f64` tensor as a matrix; any other tensor is given back.
    fn try_from(t: Tensor) -> Result<Matrix, Tensor> {
        match (t.shape.as_slice(), t.data) {
            (&[rows, cols], TensorData::F64(data)) if rows.checked_mul(cols) == Some(data.len()) => {
                Ok(Matrix { rows, cols, data })
            }
            (_, data) => Err(Tensor { shape: t.shape, data }),
        }
    }
}

impl IntoValue for Matrix {
    fn shape() -> RustShape {
        RustShape::DynMat
    }
    fn into_value(self) -> Value {
        Value::Tensor(self.into())
    }
}

impl FromValue for Matrix {
    fn shape() -> RustShape {
        RustShape::DynMat
    }
    fn from_value(v: Value) -> Option<Self> {
        match v {
            Value::Tensor(t) => Matrix::try_from(t).ok(),
            _ => None,
        }
    }
}

/// A `matrix` result as its rows (as an argument, use [`Matrix::from_rows`]: rows of
/// different lengths are not a matrix).
impl FromValue for Vec<Vec<f64>> {
    fn shape() -> RustShape {
        RustShape::DynRows
    }
    fn from_value(v: Value) -> Option<Self> {
        Matrix::from_value(v).map(|m| m.to_rows())
    }
}
