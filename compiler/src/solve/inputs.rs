//! What a solve reads besides the program: the mesh (with the loader's warnings), params
//! written `NAME=VALUE`, data fields and pair lists from `.npy` files.

use crate::energy::MeshEnergy;
use mad_runtime::mesh::{Mesh, MeshError, load_mesh_with_report};
use mad_runtime::npy::{NpyArray, read_npy};
use std::path::Path;

/// A mesh error prefixed with the mesh spec, unless the message already names the file or
/// spec.
pub fn mesh_error(spec: &str, e: MeshError) -> String {
    match e {
        MeshError::Io { .. } | MeshError::BadSpec { .. } | MeshError::UnknownFormat { .. } => {
            e.to_string()
        }
        _ => format!("{spec}: {e}"),
    }
}

/// Loads the mesh file or generator `spec`, passing the loader's warnings (degenerate
/// faces, fan-triangulated polygons, vertices in no face) to `warn` as `MESH: …`: the mesh
/// is accepted, but an energy may not suit it.
pub fn load_mesh(spec: &str, warn: &mut dyn FnMut(&str)) -> Result<Mesh, String> {
    let (mesh, report) = load_mesh_with_report(spec).map_err(|e| mesh_error(spec, e))?;
    for w in report.warnings() {
        warn(&format!("{spec}: {w}"));
    }
    Ok(mesh)
}

/// Warns about each term that has no element on the bound mesh `spec`.
pub fn warn_empty_terms(spec: &str, me: &MeshEnergy, warn: &mut dyn FnMut(&str)) {
    for (name, stencil) in me.terms_without_elements() {
        warn(&format!("{spec}: term `{name}` ({stencil}) has no elements on this mesh: it adds nothing"));
    }
}

/// One param setting `NAME=VALUE` (as after `--set`). A value written as a finite number
/// that does not fit an `f64` (`1e400`) is an error rather than a silent infinity; `inf` and
/// `-inf` spelled out are taken as written.
pub fn parse_set(s: &str) -> Result<(String, f64), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("--set {s}: expected NAME=VALUE"))?;
    let text = v.trim();
    let x: f64 = text
        .parse()
        .map_err(|_| format!("--set {s}: `{v}` is not a number"))?;
    let spelled_inf = text
        .trim_start_matches(['+', '-'])
        .to_ascii_lowercase()
        .starts_with("inf");
    // Params are held as f64: an integer it cannot hold exactly would change silently.
    if let Ok(n) = text.parse::<i64>()
        && (n as f64) as i128 != n as i128
    {
        return Err(format!(
            "--set {s}: {n} is beyond the integers a param holds exactly (|n| ≤ 2^53; params \
             are held as f64)"
        ));
    }
    if x.is_infinite() && !spelled_inf {
        return Err(format!(
            "--set {s}: `{text}` is out of the range of f64 (write `inf` for an infinite value)"
        ));
    }
    Ok((k.trim().to_string(), x))
}

/// Reads a `.npy` file.
pub fn read_array(path: &Path) -> Result<NpyArray, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    read_npy(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// Reads a `.npy` holding `rows × cols` values, of shape `(rows, cols)` or flat.
pub fn read_field(path: &Path, (rows, cols): (usize, usize)) -> Result<Vec<f64>, String> {
    let layout = if cols > 1 {
        format!(" (expected shape ({rows}, {cols}): one row of {cols} values per element, a matrix's entries row by row)")
    } else {
        String::new()
    };
    let a = read_array(path).map_err(|e| format!("{e}{layout}"))?;
    a.into_field(rows, cols)
        .map_err(|e| format!("{}: {e}{layout}", path.display()))
}

/// Fills data fields from `.npy` files (each `NAME=FILE.npy`, as after `--data`) and the
/// pair list from `pairs` (an (n, arity) `.npy` of vertex ids, as after `--pairs`) of an
/// energy bound in the file's numbering (the arrays are in it).
pub fn set_data_and_pairs(me: &mut MeshEnergy, data: &[String], pairs: Option<&Path>) -> Result<(), String> {
    for d in data {
        let (k, p) = d
            .split_once('=')
            .ok_or_else(|| format!("--data {d}: expected NAME=FILE.npy"))?;
        if me.is_state(k) {
            return Err(format!(
                "--data {k}: `{k}` is a state (an `update` computes it); give its initial values \
                 with `--init {k}=FILE` (`madc run`) or the declaration's `= INIT`"
            ));
        }
        let dims = me.data_dims(k).map_err(|e| e.to_string())?;
        let vals = read_field(Path::new(p), dims).map_err(|e| format!("--data {k}: {e}"))?;
        me.set_data(k, &vals).map_err(|e| e.to_string())?;
    }
    if let Some(p) = pairs {
        let a = read_array(p)?;
        let ids =
            pair_ids(&a, me.pair_arity()).map_err(|e| format!("--pairs {}: {e}", p.display()))?;
        me.set_pairs(&ids)
            .map_err(|e| format!("--pairs {}: {e}", p.display()))?;
    }
    Ok(())
}

/// Vertex ids from an `(n, arity)` integer or float array.
fn pair_ids(a: &NpyArray, arity: usize) -> Result<Vec<u32>, String> {
    if arity == 0 {
        return Err("the program has no pair terms".into());
    }
    let ok_shape = match a.shape.as_slice() {
        [n, c] => *c == arity || *n == 0,
        [n] => arity == 1 || *n == 0,
        _ => false,
    };
    if !ok_shape {
        return Err(format!("expected shape (n, {arity}), found {:?}", a.shape));
    }
    a.data
        .iter()
        .map(|&v| {
            if v >= 0.0 && v.fract() == 0.0 && v <= u32::MAX as f64 {
                Ok(v as u32)
            } else {
                Err(format!("`{v}` is not a vertex id"))
            }
        })
        .collect()
}
