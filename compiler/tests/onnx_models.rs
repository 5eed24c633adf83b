//! ONNX: import, export and derivative models.
//!
//! The derivative models are checked in ONNX Runtime against central finite differences of
//! the primal (`tests/onnx/check_derivative.py`); that needs Python with `onnx` and
//! `onnxruntime` (`pip install onnx onnxruntime`). Without them the check prints why it did
//! not run, except under CI (`CI` set), where it fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use mad::back::interp;
use mad::onnx::{self, Layout, OnnxError, Options, proto::ModelProto};
use mad::{Tensor, Value};
use prost::Message;

use super::cli_common::madc;

fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mad-onnx-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const SOURCE: &str = "
fn shape(x: vec3, m: mat3, s: f64) -> f64 {
  let y = m * x;
  let z = vec3(tanh(y[0]), sigmoid(y[1]) * s, exp(-y[2] * y[2]));
  sqrt(dot(z, x) * dot(z, x) + 1.0) + max(s, y[0]) / (1.0 + abs(s))
}
";

/// A model of the `.mad` function `shape`, written by `madc onnx export`.
fn exported(dir: &Path) -> PathBuf {
    let src = dir.join("shape.mad");
    std::fs::write(&src, SOURCE).unwrap();
    let out = dir.join("shape.onnx");
    let (code, _, err) = madc(&["onnx", "export", src.to_str().unwrap(), "--fn", "shape", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    out
}

fn args() -> Vec<Value> {
    let x = Tensor::from_f64(vec![3], vec![0.3, -0.7, 1.1]).unwrap();
    let m = Tensor::from_f64(vec![3, 3], vec![0.5, -0.2, 0.1, 0.3, 0.8, -0.4, -0.6, 0.2, 0.9]).unwrap();
    vec![Value::Tensor(x), Value::Tensor(m), Value::F64(0.4)]
}

#[test]
fn an_exported_function_imports_back_to_the_same_values() {
    let dir = scratch("export");
    let model = onnx::read_model(&exported(&dir)).unwrap();
    let names: Vec<_> = model.graph.as_ref().unwrap().input.iter().map(|v| v.name.clone().unwrap()).collect();
    assert_eq!(names, ["x", "m", "s"]);
    let imported = onnx::import(&model).unwrap();
    let got = interp::call(&imported.module, imported.func, &args(), &mut std::io::sink()).unwrap();
    let program = mad::Program::compile_str("shape.mad", SOURCE).unwrap();
    let want = program.call("shape", &args()).unwrap();
    assert_eq!(got.as_f64().unwrap().to_bits(), want.as_f64().unwrap().to_bits(), "{got:?} vs {want:?}");
}

fn model_bytes(dir: &Path) -> Vec<u8> {
    std::fs::read(exported(dir)).unwrap()
}

#[test]
fn derivative_models_follow_casadi_conventions() {
    let dir = scratch("conventions");
    let model = onnx::decode(&model_bytes(&dir)).unwrap();
    let adj = onnx::reverse(&model, &Options::default()).unwrap();
    let g = adj.graph.as_ref().unwrap();
    let ins: Vec<_> = g.input.iter().map(|v| v.name.clone().unwrap()).collect();
    let outs: Vec<_> = g.output.iter().map(|v| v.name.clone().unwrap()).collect();
    assert_eq!(ins, ["x", "m", "s", "adj_y0"]);
    assert_eq!(outs, ["y0", "adj_x", "adj_m", "adj_s"]);
    // Differentiated again, the adjoint names itself adj2_ with seed dimension nadj2.
    assert_eq!(onnx::derive::diff_prefix(ins.iter().chain(&outs).map(String::as_str), "adj"), "adj2_");
    assert_eq!(onnx::derive::diff_prefix(["x", "adj_y", "adj3_z", "adjx_w"], "adj"), "adj4_");
    assert_eq!(onnx::derive::diff_prefix(["x", "adj_y"], "fwd"), "fwd_");
    let fwd = onnx::forward(&model, &Options { inputs: Some(vec!["s".into()]), layout: Layout::Onnx, ..Default::default() }).unwrap();
    let g = fwd.graph.as_ref().unwrap();
    let seed = g.input.iter().find(|v| v.name.as_deref() == Some("fwd_s")).unwrap();
    assert!(format!("{seed:?}").contains("nfwd"), "{seed:?}");
    assert_eq!(g.input.len(), 4);
}

#[test]
fn taken_names_and_bad_selections_are_refused() {
    let dir = scratch("names");
    let model = onnx::decode(&model_bytes(&dir)).unwrap();
    let e = onnx::reverse(&model, &Options { prefix: Some(String::new()), ..Default::default() }).unwrap_err();
    assert!(e.to_string().contains("'y0' is already used in the graph"), "{e}");
    let e = onnx::reverse(&model, &Options { inputs: Some(vec!["q".into()]), ..Default::default() }).unwrap_err();
    assert_eq!(e.to_string(), "cannot differentiate: 'q' is not a graph input");
}

#[test]
fn an_unsupported_op_is_named_with_its_node_and_opset() {
    let dir = scratch("unsupported");
    let mut model = onnx::decode(&model_bytes(&dir)).unwrap();
    let g = model.graph.as_mut().unwrap();
    let node = g.node.iter_mut().find(|n| n.op_type.as_deref() == Some("Tanh")).unwrap();
    node.op_type = Some("HardSwishy".into());
    node.name = Some("act".into());
    let e = onnx::import(&model).unwrap_err();
    assert_eq!(e, OnnxError::UnsupportedOp { op: "HardSwishy".into(), node: "act".into(), opset: 18 });
    assert_eq!(e.to_string(), "unsupported operator 'HardSwishy' (node 'act', opset 18)");
}

/// Truncated and corrupted models: an error (or, for a corruption that still decodes, a
/// result), never a panic.
#[test]
fn truncated_and_corrupted_models_never_panic() {
    let dir = scratch("fuzz");
    let bytes = model_bytes(&dir);
    let try_all = |b: &[u8]| {
        if let Ok(m) = onnx::decode(b)
            && onnx::import(&m).is_ok()
        {
            let _ = onnx::reverse(&m, &Options::default());
        }
    };
    for n in (0..bytes.len()).step_by(7) {
        try_all(&bytes[..n]);
    }
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..400 {
        let mut b = bytes.clone();
        for _ in 0..3 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let i = (state % b.len() as u64) as usize;
            b[i] = (state >> 32) as u8;
        }
        try_all(&b);
    }
    assert!(onnx::decode(b"not a model").is_err());
}

/// External data must stay inside the model's folder and hold the bytes it claims.
#[test]
fn external_data_outside_the_folder_or_too_short_is_an_error() {
    use mad::onnx::proto::{StringStringEntryProto, TensorProto};
    let dir = scratch("external");
    let mut model = onnx::decode(&model_bytes(&dir)).unwrap();
    let entry = |k: &str, v: &str| StringStringEntryProto { key: Some(k.into()), value: Some(v.into()) };
    let mut tensor = |location: &str, length: &str| {
        let t = TensorProto {
            name: Some("w".into()),
            dims: vec![4],
            data_type: Some(11),
            data_location: Some(1),
            external_data: vec![entry("location", location), entry("length", length)],
            ..Default::default()
        };
        model.graph.as_mut().unwrap().initializer = vec![t];
        let path = dir.join("with_external.onnx");
        std::fs::write(&path, model.encode_to_vec()).unwrap();
        onnx::read_model(&path).map(|_| ()).unwrap_err().to_string()
    };
    std::fs::write(dir.join("w.data"), [0u8; 16]).unwrap();
    let e = tensor("../w.data", "32");
    assert!(e.contains("must be a path inside the model's folder"), "{e}");
    let e = tensor("w.data", "32");
    assert!(e.contains("32 bytes at 0 run past the end of 'w.data'"), "{e}");
}

#[test]
fn madc_onnx_reports_errors_with_exit_code_1() {
    let (code, _, err) = madc(&["onnx", "reverse", "no/such/model.onnx", "out.onnx"]);
    assert_eq!(code, 1);
    assert!(err.contains("cannot read the ONNX model: no/such/model.onnx"), "{err}");
}

/// Whether Python with onnx and onnxruntime is here; under CI their absence is a failure.
fn python_with_onnxruntime() -> bool {
    let ok = Command::new("python3").args(["-c", "import onnx, onnxruntime, numpy"]).output().is_ok_and(|o| o.status.success());
    if !ok {
        assert!(std::env::var_os("CI").is_none(), "CI needs python3 with onnx, onnxruntime and numpy (pip install onnx onnxruntime)");
        eprintln!("NOT RUN: the ONNX Runtime checks need python3 with onnx, onnxruntime and numpy (pip install onnx onnxruntime)");
    }
    ok
}

fn write(path: &Path, m: &ModelProto) {
    std::fs::write(path, m.encode_to_vec()).unwrap();
}

/// Every model of `tests/onnx/models.py`, the exported `.mad` function and a model exported by
/// PyTorch (`tests/onnx/torch_block.onnx`): forward and
/// reverse models in both layouts and the second-order model of `family`, run by ONNX
/// Runtime against finite differences.
#[test]
fn derivative_models_match_finite_differences_in_onnx_runtime() {
    if !python_with_onnxruntime() {
        return;
    }
    let dir = scratch("ort");
    let out = Command::new("python3").arg(repo().join("tests/onnx/models.py")).arg(&dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect();
    exported(&dir);
    names.push("shape".into());
    // An attention block exported by PyTorch (tests/onnx/torch_model.py made it).
    std::fs::copy(repo().join("tests/onnx/torch_block.onnx"), dir.join("torch_block.onnx")).unwrap();
    names.push("torch_block".into());
    let mut jobs = String::new();
    for name in &names {
        let primal = dir.join(format!("{name}.onnx"));
        let model = onnx::read_model(&primal).unwrap();
        for (mode, pass) in [("reverse", onnx::reverse as fn(&ModelProto, &Options) -> Result<ModelProto, OnnxError>), ("forward", onnx::forward)] {
            for (layout, l) in [("casadi", Layout::Casadi), ("onnx", Layout::Onnx)] {
                let path = dir.join(format!("{mode}_{layout}_{name}.onnx"));
                let m = pass(&model, &Options { layout: l, ..Default::default() }).unwrap_or_else(|e| panic!("{name} {mode}: {e}"));
                write(&path, &m);
                jobs.push_str(&format!("{} {} --mode {mode} --layout {layout}\n", primal.display(), path.display()));
            }
        }
    }
    // CasADi's family: the second-order model is the forward derivative of the adjoint
    // model (read back from its file), checked against finite differences of the adjoint.
    for name in &names {
        let primal = onnx::read_model(&dir.join(format!("{name}.onnx"))).unwrap();
        let path = dir.join(format!("family_{name}")).join("f.onnx");
        let written = onnx::family(&primal, &path, &Options::default(), true, true).unwrap_or_else(|e| panic!("{name} family: {e}"));
        let files: Vec<String> = written.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(files, ["f.onnx", "adj_f.onnx", "fwd_f.onnx", "fwd_adj_f.onnx"]);
        let adjoint = onnx::read_model(&written[1]).unwrap();
        let primal_outputs: Vec<_> = primal.graph.as_ref().unwrap().output.iter().map(|v| v.name.clone().unwrap()).collect();
        let adjoints: Vec<String> = adjoint.graph.as_ref().unwrap().output.iter().map(|v| v.name.clone().unwrap()).filter(|n| !primal_outputs.contains(n)).collect();
        jobs.push_str(&format!("{} {} --mode forward --outputs {}\n", written[1].display(), written[3].display(), adjoints.join(" ")));
    }
    // A subset of the outputs and inputs: unseeded outputs take zero cotangents.
    let primal = dir.join("broadcast.onnx");
    let m = onnx::reverse(&onnx::read_model(&primal).unwrap(), &Options { inputs: Some(vec!["v".into()]), outputs: Some(vec!["z".into()]), ..Default::default() }).unwrap();
    write(&dir.join("subset.onnx"), &m);
    jobs.push_str(&format!("{} {} --mode reverse --inputs v --outputs z\n", primal.display(), dir.join("subset.onnx").display()));
    std::fs::write(dir.join("jobs.txt"), jobs).unwrap();
    let out = Command::new("python3").arg(repo().join("tests/onnx/check_derivative.py")).arg("--batch").arg(dir.join("jobs.txt")).output().unwrap();
    let log = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{log}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(log.lines().filter(|l| l.contains(": ok ")).count(), names.len() * 5 + 1, "{log}");
}
