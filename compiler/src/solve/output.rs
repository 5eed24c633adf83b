//! Writing what a solve found: the result mesh (positions from a vertex field, in the file's
//! vertex numbering, on the input mesh's triangles) and the frames of a dynamics run.

use super::inputs::mesh_error;
use crate::energy::MeshEnergy;
use mad_runtime::mesh::{Mesh, save_mesh};
use std::path::Path;

/// The positions of a solve at one moment (after a time step, or at the end), with what
/// writing them as a mesh needs.
#[derive(Clone, Copy)]
pub struct Frame<'a> {
    /// The bound energy (its fields and vertex numbering).
    pub energy: &'a MeshEnergy<'a>,
    /// The input mesh, in the file's vertex numbering.
    pub mesh: &'a Mesh,
    /// The dofs.
    pub x: &'a [f64],
}

impl Frame<'_> {
    /// Writes the mesh at `path` (.obj, .ply, .off; its directory is created as needed), its
    /// positions from the vertex field `field` (dof or state), or from the first dof field.
    pub fn write_mesh(&self, path: &str, field: Option<&str>) -> Result<(), String> {
        let me = self.energy;
        let positions = match field {
            Some(f) => me.field_positions(self.x, f).map_err(|e| e.to_string())?,
            None => me
                .positions_of(self.x)
                .ok_or("the program has no dofs to write as a mesh")?,
        };
        let positions = match me.renumbering() {
            Some(r) if positions.len() == r.len() => r.rows_to_original(&positions, 1),
            _ => positions,
        };
        let out = Mesh {
            positions,
            triangles: self.mesh.triangles.clone(),
        };
        // `--out frames/cloth.ply` creates `frames/` as needed.
        output_directory(path).map_err(|e| format!("cannot write the result mesh {path}: {e}"))?;
        save_mesh(&out, path)
            .map_err(|e| format!("cannot write the result mesh: {}", mesh_error(path, e)))
    }
}

/// Creates the directory that `path` (an output file) lies in, as needed; an error names
/// the part of it that is a file rather than a directory.
pub fn output_directory(path: &str) -> Result<(), String> {
    let Some(dir) = Path::new(path).parent().filter(|d| !d.as_os_str().is_empty()) else {
        return Ok(());
    };
    if let Some(file) = dir.ancestors().find(|a| a.is_file()) {
        return Err(format!("{}: is a file, not a directory", file.display()));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create the directory: {e}", dir.display()))
}

/// `OUT_0001.EXT` for frame 1 of `OUT.EXT`.
pub fn frame_path(out: &str, k: usize) -> String {
    let p = Path::new(out);
    let stem = p.with_extension("");
    let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("ply");
    format!("{}_{k:04}.{ext}", stem.display())
}
