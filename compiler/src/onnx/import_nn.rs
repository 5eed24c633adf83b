//! The neural-network ops of ONNX as compositions of IR ops: activations (`LeakyRelu`,
//! `Elu`, `Selu`, `Celu`, `HardSigmoid`, `HardSwish`, `Softsign`, `ThresholdedRelu`, `PRelu`,
//! `Gelu`, `Mish`, `Clip`, `Sign`, `Shrink`), the inverse hyperbolic functions, `CastLike`,
//! `Softmax` and `LogSoftmax` (shifted by the maximum), `LayerNormalization` and
//! `BatchNormalization` (inference). Piecewise definitions are elementwise `select`s, so the branch not
//! taken never reaches a derivative.

use super::OnnxError;
use super::import::GraphImport;
use super::import_ops::{arg, binary, float, float_attr, fold, infer, int, log_sum_exp, mean, node_name, opt_arg};
use super::proto::NodeProto;
use crate::ir::{BinaryOp, OpKind, Reduce, UnaryOp, ValueId};

/// The value of `node` if it is one of this file's ops.
pub(super) fn lower_nn(g: &mut GraphImport<'_>, node: &NodeProto, op: &str) -> Result<Option<ValueId>, OnnxError> {
    let n = node_name(node);
    let attr = |name: &str, default: f64| float_attr(node, name).unwrap_or(default);
    let v = match op {
        "LeakyRelu" | "Elu" | "Celu" | "Selu" | "ThresholdedRelu" | "PRelu" => {
            let x = arg(g, node, 0)?;
            let zero = float(g, x, 0.0);
            let below = match op {
                "LeakyRelu" => {
                    let a = float(g, x, attr("alpha", 0.01));
                    mul(g, x, a)?
                }
                "PRelu" => {
                    let slope = arg(g, node, 1)?;
                    binary(g, BinaryOp::Mul, x, slope, &n)?
                }
                "ThresholdedRelu" => zero,
                _ => {
                    // alpha·(exp(x/alpha) − 1) for Celu, alpha·(exp(x) − 1) for Elu/Selu.
                    // ONNX's defaults are the float32 values of Selu's constants.
                    let default = if op == "Selu" { 1.673_263_192_176_818_8 } else { 1.0 };
                    let alpha = attr("alpha", default);
                    let scaled = if op == "Celu" {
                        let a = float(g, x, alpha);
                        infer(g, OpKind::Binary(BinaryOp::Div), vec![x, a])?
                    } else {
                        x
                    };
                    let e = infer(g, OpKind::Unary(UnaryOp::Expm1), vec![scaled])?;
                    let a = float(g, x, alpha);
                    mul(g, e, a)?
                }
            };
            let threshold = if op == "ThresholdedRelu" { float(g, x, attr("alpha", 1.0)) } else { zero };
            let cond = binary(g, BinaryOp::Gt, x, threshold, &n)?;
            let below = same_shape(g, below, x)?;
            let v = select(g, cond, x, below)?;
            if op == "Selu" {
                let gamma = float(g, x, attr("gamma", 1.050_701_022_148_132_3));
                mul(g, v, gamma)?
            } else {
                v
            }
        }
        "HardSigmoid" | "HardSwish" => {
            let x = arg(g, node, 0)?;
            let (alpha, beta) = if op == "HardSwish" { (1.0 / 6.0, 0.5) } else { (attr("alpha", 0.2), attr("beta", 0.5)) };
            let a = float(g, x, alpha);
            let b = float(g, x, beta);
            let ax = mul(g, x, a)?;
            let lin = infer(g, OpKind::Binary(BinaryOp::Add), vec![ax, b])?;
            let (zero, one) = (float(g, x, 0.0), float(g, x, 1.0));
            let low = infer(g, OpKind::Binary(BinaryOp::Max), vec![lin, zero])?;
            let hs = infer(g, OpKind::Binary(BinaryOp::Min), vec![low, one])?;
            if op == "HardSwish" { mul(g, x, hs)? } else { hs }
        }
        "Softsign" => {
            let x = arg(g, node, 0)?;
            let one = float(g, x, 1.0);
            let a = infer(g, OpKind::Unary(UnaryOp::Abs), vec![x])?;
            let d = infer(g, OpKind::Binary(BinaryOp::Add), vec![a, one])?;
            infer(g, OpKind::Binary(BinaryOp::Div), vec![x, d])?
        }
        "Mish" => {
            let x = arg(g, node, 0)?;
            let sp = infer(g, OpKind::Unary(UnaryOp::Softplus), vec![x])?;
            let t = infer(g, OpKind::Unary(UnaryOp::Tanh), vec![sp])?;
            mul(g, x, t)?
        }
        "Gelu" => {
            let x = arg(g, node, 0)?;
            let approximate = super::import_ops::attr(node, "approximate").and_then(|a| a.s.clone()).unwrap_or_default();
            let half = float(g, x, 0.5);
            let one = float(g, x, 1.0);
            let inner = if approximate == b"tanh" {
                // tanh(√(2/π)·(x + 0.044715·x³))
                let c = float(g, x, 0.044_715);
                let x2 = mul(g, x, x)?;
                let x3 = mul(g, x2, x)?;
                let cx3 = mul(g, x3, c)?;
                let s = infer(g, OpKind::Binary(BinaryOp::Add), vec![x, cx3])?;
                let k = float(g, x, (2.0 / std::f64::consts::PI).sqrt());
                let ks = mul(g, s, k)?;
                infer(g, OpKind::Unary(UnaryOp::Tanh), vec![ks])?
            } else {
                let k = float(g, x, std::f64::consts::FRAC_1_SQRT_2);
                let kx = mul(g, x, k)?;
                infer(g, OpKind::Unary(UnaryOp::Erf), vec![kx])?
            };
            let p = infer(g, OpKind::Binary(BinaryOp::Add), vec![inner, one])?;
            let hx = mul(g, x, half)?;
            mul(g, hx, p)?
        }
        "Clip" => {
            let x = arg(g, node, 0)?;
            let (lo, hi) = if g.opset < 11 {
                let lo = float_attr(node, "min").map(|v| float(g, x, v));
                let hi = float_attr(node, "max").map(|v| float(g, x, v));
                (lo, hi)
            } else {
                (opt_arg(g, node, 1)?, opt_arg(g, node, 2)?)
            };
            let mut v = x;
            if let Some(lo) = lo {
                v = binary(g, BinaryOp::Max, v, lo, &n)?;
            }
            if let Some(hi) = hi {
                v = binary(g, BinaryOp::Min, v, hi, &n)?;
            }
            v
        }
        "Sign" => {
            let x = arg(g, node, 0)?;
            let (zero, one, minus) = (float(g, x, 0.0), float(g, x, 1.0), float(g, x, -1.0));
            let pos = binary(g, BinaryOp::Gt, x, zero, &n)?;
            let neg = binary(g, BinaryOp::Lt, x, zero, &n)?;
            let (one, minus, zero) = (same_shape(g, one, x)?, same_shape(g, minus, x)?, same_shape(g, zero, x)?);
            let low = select(g, neg, minus, zero)?;
            select(g, pos, one, low)?
        }
        "Softmax" | "LogSoftmax" => {
            let x = arg(g, node, 0)?;
            let rank = g.dims(x).len() as i64;
            let default = if g.opset < 13 { 1 } else { -1 };
            let axis = int(node, "axis").unwrap_or(default);
            let axis = if axis < 0 { axis + rank } else { axis };
            if axis < 0 || axis >= rank {
                return Err(OnnxError::Invalid(format!("node '{n}': {op} axis out of range")));
            }
            // Before opset 13 the axes from `axis` on are one (flattened) axis.
            let axes: Vec<usize> = if g.opset < 13 { (axis as usize..rank as usize).collect() } else { vec![axis as usize] };
            if op == "LogSoftmax" {
                let l = log_sum_exp(g, x, &axes)?;
                binary(g, BinaryOp::Sub, x, l, &n)?
            } else {
                let m = fold(g, x, Reduce::Max, &axes)?;
                let s = binary(g, BinaryOp::Sub, x, m, &n)?;
                let e = infer(g, OpKind::Unary(UnaryOp::Exp), vec![s])?;
                let z = fold(g, e, Reduce::Sum, &axes)?;
                binary(g, BinaryOp::Div, e, z, &n)?
            }
        }
        "LayerNormalization" => {
            if node.output.iter().skip(1).any(|o| !o.is_empty()) {
                return Err(OnnxError::Invalid(format!("node '{n}': LayerNormalization's Mean and InvStdDev outputs are not supported yet")));
            }
            let x = arg(g, node, 0)?;
            let scale = arg(g, node, 1)?;
            let bias = opt_arg(g, node, 2)?;
            let rank = g.dims(x).len() as i64;
            let axis = int(node, "axis").unwrap_or(-1);
            let axis = if axis < 0 { axis + rank } else { axis };
            if axis < 0 || axis >= rank {
                return Err(OnnxError::Invalid(format!("node '{n}': LayerNormalization axis out of range")));
            }
            let axes: Vec<usize> = (axis as usize..rank as usize).collect();
            let mu = mean(g, x, &axes)?;
            let d = binary(g, BinaryOp::Sub, x, mu, &n)?;
            let d2 = mul(g, d, d)?;
            let var = mean(g, d2, &axes)?;
            let eps = float(g, x, attr("epsilon", 1e-5));
            let ve = infer(g, OpKind::Binary(BinaryOp::Add), vec![var, eps])?;
            let sd = infer(g, OpKind::Unary(UnaryOp::Sqrt), vec![ve])?;
            let normed = binary(g, BinaryOp::Div, d, sd, &n)?;
            let y = binary(g, BinaryOp::Mul, normed, scale, &n)?;
            match bias {
                Some(b) => binary(g, BinaryOp::Add, y, b, &n)?,
                None => y,
            }
        }
        "Asinh" | "Acosh" | "Atanh" => {
            // log(x + √(x² + 1)), log(x + √(x² − 1)), ½·log((1 + x)/(1 − x))
            let x = arg(g, node, 0)?;
            let one = float(g, x, 1.0);
            if op == "Atanh" {
                let num = infer(g, OpKind::Binary(BinaryOp::Add), vec![one, x])?;
                let den = infer(g, OpKind::Binary(BinaryOp::Sub), vec![one, x])?;
                let q = infer(g, OpKind::Binary(BinaryOp::Div), vec![num, den])?;
                let l = infer(g, OpKind::Unary(UnaryOp::Log), vec![q])?;
                let half = float(g, x, 0.5);
                mul(g, l, half)?
            } else {
                let x2 = mul(g, x, x)?;
                let b = if op == "Asinh" { BinaryOp::Add } else { BinaryOp::Sub };
                let r = infer(g, OpKind::Binary(b), vec![x2, one])?;
                let s = infer(g, OpKind::Unary(UnaryOp::Sqrt), vec![r])?;
                let t = infer(g, OpKind::Binary(BinaryOp::Add), vec![x, s])?;
                infer(g, OpKind::Unary(UnaryOp::Log), vec![t])?
            }
        }
        "Shrink" => {
            let x = arg(g, node, 0)?;
            let (lambd, bias) = (float(g, x, attr("lambd", 0.5)), float(g, x, attr("bias", 0.0)));
            let neg_lambd = infer(g, OpKind::Unary(UnaryOp::Neg), vec![lambd])?;
            let above = binary(g, BinaryOp::Gt, x, lambd, &n)?;
            let below = binary(g, BinaryOp::Lt, x, neg_lambd, &n)?;
            let down = infer(g, OpKind::Binary(BinaryOp::Sub), vec![x, bias])?;
            let up = infer(g, OpKind::Binary(BinaryOp::Add), vec![x, bias])?;
            let zero = float(g, x, 0.0);
            let zero = same_shape(g, zero, x)?;
            let inner = select(g, below, up, zero)?;
            select(g, above, down, inner)?
        }
        "CastLike" => {
            let x = arg(g, node, 0)?;
            let like = arg(g, node, 1)?;
            let k = g.kind(like);
            super::import_ops::cast(g, x, k)?
        }
        "BatchNormalization" => {
            if int(node, "training_mode").unwrap_or(0) != 0 || node.output.iter().skip(1).any(|o| !o.is_empty()) {
                return Err(OnnxError::Invalid(format!("node '{n}': BatchNormalization in training mode is not supported (inference only)")));
            }
            let x = arg(g, node, 0)?;
            let rank = g.dims(x).len();
            if rank < 2 {
                return Err(OnnxError::Invalid(format!("node '{n}': BatchNormalization of a rank-{rank} tensor")));
            }
            // The per-channel [C] inputs as [C, 1, …] against [N, C, …].
            let channel = |g: &mut GraphImport<'_>, i: usize| -> Result<ValueId, OnnxError> {
                let p = arg(g, node, i)?;
                let mut dims = g.dims(p);
                dims.extend((2..rank).map(|_| crate::ir::Dim::Fixed(1)));
                super::import_ops::reshape_to(g, p, &dims, &n)
            };
            let (scale, bias, mean, var) = (channel(g, 1)?, channel(g, 2)?, channel(g, 3)?, channel(g, 4)?);
            let eps = float(g, x, attr("epsilon", 1e-5));
            let ve = infer(g, OpKind::Binary(BinaryOp::Add), vec![var, eps])?;
            let sd = infer(g, OpKind::Unary(UnaryOp::Sqrt), vec![ve])?;
            let d = binary(g, BinaryOp::Sub, x, mean, &n)?;
            let normed = binary(g, BinaryOp::Div, d, sd, &n)?;
            let y = binary(g, BinaryOp::Mul, normed, scale, &n)?;
            binary(g, BinaryOp::Add, y, bias, &n)?
        }
        _ => return Ok(None),
    };
    Ok(Some(v))
}

fn mul(g: &mut GraphImport<'_>, a: ValueId, b: ValueId) -> Result<ValueId, OnnxError> {
    infer(g, OpKind::Binary(BinaryOp::Mul), vec![a, b])
}

/// `v` (a scalar or a tensor broadcast against `like`) with `like`'s shape.
fn same_shape(g: &mut GraphImport<'_>, v: ValueId, like: ValueId) -> Result<ValueId, OnnxError> {
    let dims = g.dims(like);
    if dims.is_empty() || g.dims(v) == dims {
        return Ok(v);
    }
    g.broadcast_to(v, &dims, &[like, v])
}

/// `c ? a : b`, elementwise where `c` is a tensor.
fn select(g: &mut GraphImport<'_>, c: ValueId, a: ValueId, b: ValueId) -> Result<ValueId, OnnxError> {
    infer(g, OpKind::Select, vec![c, a, b])
}
