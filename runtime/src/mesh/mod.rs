//! Triangle meshes: reading, writing, generating, and the incidence that stencils need.
//!
//! # Public API
//!
//! - [`Mesh`] `{ positions: Vec<[f64; 3]>, triangles: Vec<[u32; 3]> }`, with
//!   [`Mesh::new`] (validating), [`Mesh::num_vertices`], [`Mesh::num_faces`], [`Mesh::report`].
//! - [`load_mesh`]`(spec_or_path: &str) -> Result<Mesh, MeshError>` and
//!   [`load_mesh_with_report`] (also returns the [`MeshReport`]): a generator spec
//!   (`grid:NxM`, `sphere:LEVEL`, `disk:N`, `torus:N,M`, see [`generators`]) or a path whose
//!   extension (case-insensitive) picks the format: `.obj`, `.off`, `.ply`.
//! - [`read_mesh`]`(bytes, format)`, and per format [`obj::read_obj`], [`off::read_off`],
//!   [`ply::read_ply`] (ASCII, binary little and big endian), all returning
//!   `Result<(Mesh, MeshReport), MeshError>`.
//! - [`save_mesh`]`(mesh, path)` by extension, [`write_mesh`]`(mesh, format, writer)`, and
//!   [`obj::write_obj`], [`off::write_off`], [`ply::write_ply`] (with [`ply::PlyEncoding`]).
//!   Coordinates are written in Rust's shortest round-trip form, so write → read is exact.
//! - [`topology::Topology::new`]`(&Mesh) -> Result<Topology, MeshError>` and [`topology::Stencil`]:
//!   edges, diamonds, one-rings, boundary flags
//!   and each stencil's element → vertex lists.
//! - [`renumber::VertexRenumbering`]: a breadth-first renumbering of a scattered mesh's vertices
//!   for evaluation locality, and the maps of ids and per-vertex arrays both ways.
//!
//! # Accepted input
//!
//! - Polygons with 4 or more vertices (OBJ `f`, OFF and PLY faces) are fan-triangulated from their
//!   first vertex: `(a0, ai, ai+1)`. OBJ quads are common, so this is the useful default; the
//!   report counts such polygons ([`MeshReport::triangulated_polygons`]) and
//!   [`MeshReport::warnings`] says so, because a file whose "faces" are really cells (e.g. a
//!   tetrahedral mesh written with `f` lines of 4 indices) gives a meaningless surface.
//! - Faces with fewer than 3 vertices, indices out of range (or 0 in OBJ), non-numeric tokens,
//!   NaN or infinite coordinates, truncated files and meshes without vertices or triangles are
//!   errors ([`MeshError`]) carrying the line (text) or byte offset (binary PLY body).
//! - Degenerate faces (a repeated vertex, zero area) are kept and reported in [`MeshReport`].
//! - Non-manifold and disconnected meshes are accepted; unreferenced vertices are kept (and
//!   counted in the report).
//! - OBJ: only `v` and `f` lines are read (`f` entries `i`, `i/t`, `i//n`, `i/t/n`, negative
//!   indices relative to the vertices read so far); other statements are ignored. A fourth `v`
//!   coordinate (w) and trailing vertex colours are ignored.
//! - OFF: `OFF` (also `COFF`, `NOFF`, `CNOFF` whose extra per-vertex values are ignored), counts,
//!   vertices, faces; `#` comments. Binary OFF is not supported (an error).
//! - PLY: elements `vertex` (scalar properties `x`, `y`, `z` of any PLY type) and `face`
//!   (list property `vertex_indices` or `vertex_index`); other elements and properties are
//!   skipped. Headers may use `\n` or `\r\n` line ends.
//!
//! The readers are written here rather than taken from `tobj` / `ply-rs`: those crates' errors
//! carry no line or byte position, which the project requires.

pub mod error;
pub mod generators;
pub mod obj;
pub mod off;
pub mod ply;
pub mod renumber;
pub mod report;
mod text;
pub mod topology;
pub mod tutte;

pub use error::{Location, MeshError};
pub use renumber::VertexRenumbering;
pub use report::{Degeneracy, MeshReport};
pub use topology::{Stencil, Topology};

use std::io::Write;
use std::path::Path;

/// A triangle mesh: vertex positions and triangles (indices into `positions`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mesh {
    pub positions: Vec<[f64; 3]>,
    pub triangles: Vec<[u32; 3]>,
}

/// A mesh file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeshFormat {
    Obj,
    Off,
    /// PLY; written as ASCII by [`write_mesh`] / [`save_mesh`].
    Ply,
}

impl MeshFormat {
    /// The format named by a path's extension (case-insensitive), if any.
    pub fn from_path(path: &str) -> Option<MeshFormat> {
        let ext = Path::new(path).extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "obj" => Some(MeshFormat::Obj),
            "off" => Some(MeshFormat::Off),
            "ply" => Some(MeshFormat::Ply),
            _ => None,
        }
    }
}

impl Mesh {
    /// Builds a mesh, checking that it is non-empty, that every index is in range and every
    /// coordinate finite.
    pub fn new(positions: Vec<[f64; 3]>, triangles: Vec<[u32; 3]>) -> Result<Mesh, MeshError> {
        let mesh = Mesh {
            positions,
            triangles,
        };
        mesh.validate()?;
        Ok(mesh)
    }

    /// Checks the invariants [`Mesh::new`] establishes (for meshes built field by field).
    pub fn validate(&self) -> Result<(), MeshError> {
        if self.positions.is_empty() {
            return Err(MeshError::Empty {
                message: "no vertices".into(),
            });
        }
        if self.triangles.is_empty() {
            return Err(MeshError::Empty {
                message: "no faces".into(),
            });
        }
        if self.positions.len() > u32::MAX as usize {
            return Err(MeshError::Invalid {
                message: "more than 2^32 - 1 vertices".into(),
            });
        }
        if let Some(i) = self
            .positions
            .iter()
            .position(|p| p.iter().any(|c| !c.is_finite()))
        {
            return Err(MeshError::Invalid {
                message: format!(
                    "vertex {i} has a non-finite coordinate {:?}",
                    self.positions[i]
                ),
            });
        }
        let n = self.positions.len();
        for (fi, t) in self.triangles.iter().enumerate() {
            if let Some(&v) = t.iter().find(|&&v| v as usize >= n) {
                return Err(MeshError::Invalid {
                    message: format!("face {fi} references vertex {v}, but there are {n} vertices"),
                });
            }
        }
        Ok(())
    }

    pub fn num_vertices(&self) -> usize {
        self.positions.len()
    }

    pub fn num_faces(&self) -> usize {
        self.triangles.len()
    }

    /// Degenerate faces and unreferenced vertices (see [`MeshReport::check`]).
    pub fn report(&self) -> MeshReport {
        MeshReport::check(self)
    }

    /// The positions as a flat vertex-major array `[x0, y0, z0, x1, …]` (shape (V, 3)).
    pub fn flat_positions(&self) -> Vec<f64> {
        self.positions.iter().flatten().copied().collect()
    }
}

/// Whether a string is a generator spec (`grid:`, `sphere:`, `disk:`, `torus:`) rather than a path.
pub fn is_generator_spec(s: &str) -> bool {
    generators::GENERATORS
        .iter()
        .any(|g| s.strip_prefix(g).is_some_and(|r| r.starts_with(':')))
}

/// Loads a mesh from a generator spec or a file path (see the module docs).
pub fn load_mesh(spec_or_path: &str) -> Result<Mesh, MeshError> {
    load_mesh_with_report(spec_or_path).map(|(m, _)| m)
}

/// Like [`load_mesh`], also returning the warnings.
pub fn load_mesh_with_report(spec_or_path: &str) -> Result<(Mesh, MeshReport), MeshError> {
    if spec_or_path.trim().is_empty() {
        return Err(MeshError::BadSpec {
            spec: spec_or_path.to_string(),
            message: "no mesh named: give a file (.obj, .off or .ply) or a generator such as \
                      grid:8x8"
                .into(),
        });
    }
    if is_generator_spec(spec_or_path) {
        let mesh = generators::generate(spec_or_path)?;
        let report = mesh.report();
        return Ok((mesh, report));
    }
    let format = MeshFormat::from_path(spec_or_path).ok_or_else(|| MeshError::UnknownFormat {
        path: spec_or_path.to_string(),
    })?;
    let bytes = std::fs::read(spec_or_path).map_err(|e| MeshError::Io {
        path: spec_or_path.to_string(),
        message: e.to_string(),
    })?;
    read_mesh(&bytes, format)
}

/// Parses a mesh file's contents.
pub fn read_mesh(bytes: &[u8], format: MeshFormat) -> Result<(Mesh, MeshReport), MeshError> {
    match format {
        MeshFormat::Obj => obj::read_obj(bytes),
        MeshFormat::Off => off::read_off(bytes),
        MeshFormat::Ply => ply::read_ply(bytes),
    }
}

/// Writes a mesh in a format (PLY as ASCII).
pub fn write_mesh<W: Write>(mesh: &Mesh, format: MeshFormat, w: W) -> std::io::Result<()> {
    match format {
        MeshFormat::Obj => obj::write_obj(mesh, w),
        MeshFormat::Off => off::write_off(mesh, w),
        MeshFormat::Ply => ply::write_ply(mesh, ply::PlyEncoding::Ascii, w),
    }
}

/// Writes a mesh to a file whose extension picks the format.
pub fn save_mesh(mesh: &Mesh, path: &str) -> Result<(), MeshError> {
    let format = MeshFormat::from_path(path).ok_or_else(|| MeshError::UnknownFormat {
        path: path.to_string(),
    })?;
    let io = |e: std::io::Error| MeshError::Io {
        path: path.to_string(),
        message: e.to_string(),
    };
    let file = std::fs::File::create(path).map_err(io)?;
    let mut w = std::io::BufWriter::new(file);
    write_mesh(mesh, format, &mut w).map_err(io)?;
    w.flush().map_err(io)
}

/// Shared end of every reader: builds the mesh and its report, mapping emptiness to an error.
pub(crate) fn finish(
    positions: Vec<[f64; 3]>,
    triangles: Vec<[u32; 3]>,
    triangulated_polygons: usize,
    max_polygon_size: usize,
) -> Result<(Mesh, MeshReport), MeshError> {
    let mesh = Mesh {
        positions,
        triangles,
    };
    if mesh.positions.is_empty() {
        return Err(MeshError::Empty {
            message: "the file has no vertices".into(),
        });
    }
    if mesh.triangles.is_empty() {
        return Err(MeshError::Empty {
            message: "the file has no faces".into(),
        });
    }
    let mut report = mesh.report();
    report.triangulated_polygons = triangulated_polygons;
    report.max_polygon_size = max_polygon_size.max(3);
    Ok((mesh, report))
}

/// Appends a polygon's fan triangulation; returns whether it had 4+ vertices.
pub(crate) fn push_polygon(triangles: &mut Vec<[u32; 3]>, poly: &[u32]) -> bool {
    for i in 1..poly.len() - 1 {
        triangles.push([poly[0], poly[i], poly[i + 1]]);
    }
    poly.len() > 3
}
