//! Wavefront OBJ: `v` and `f` statements (see the module docs of [`crate::mesh`] for what is accepted).

use super::text::{coord, decode};
use super::{Location, Mesh, MeshError, MeshReport, finish, push_polygon};
use std::io::Write;

const FMT: &str = "OBJ";

/// Reads an OBJ file's contents.
pub fn read_obj(bytes: &[u8]) -> Result<(Mesh, MeshReport), MeshError> {
    let text = decode(bytes, FMT)?;
    // Lines end in LF or CRLF; a file whose lines end in CR alone (old Mac tools) is read
    // with CR as the line end.
    let text = if !text.contains('\n') && text.contains('\r') {
        std::borrow::Cow::Owned(text.replace('\r', "\n"))
    } else {
        std::borrow::Cow::Borrowed(text)
    };
    let mut positions = Vec::new();
    let mut triangles = Vec::new();
    let mut poly: Vec<u32> = Vec::new();
    let mut polygons = 0usize;
    let mut max_poly = 3usize;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let content = raw.split('#').next().unwrap_or("");
        let mut toks = content.split_whitespace();
        match toks.next() {
            Some("v") => {
                let mut p = [0.0; 3];
                for c in &mut p {
                    let tok = toks.next().ok_or_else(|| {
                        MeshError::syntax(FMT, Location::Line(line), "a vertex needs 3 coordinates")
                    })?;
                    *c = coord(tok, FMT, line)?;
                }
                for tok in toks {
                    // w or colour components: ignored, but must be numbers.
                    coord(tok, FMT, line)?;
                }
                positions.push(p);
            }
            Some("f") => {
                poly.clear();
                for tok in toks {
                    poly.push(face_index(tok, positions.len(), line)?);
                }
                if poly.len() < 3 {
                    return Err(MeshError::syntax(
                        FMT,
                        Location::Line(line),
                        format!("a face needs at least 3 vertices, found {}", poly.len()),
                    ));
                }
                max_poly = max_poly.max(poly.len());
                polygons += push_polygon(&mut triangles, &poly) as usize;
            }
            _ => {}
        }
    }
    finish(positions, triangles, polygons, max_poly)
}

/// Parses one `f` entry (`i`, `i/t`, `i//n`, `i/t/n`), resolving negative (relative) indices.
fn face_index(tok: &str, nverts: usize, line: usize) -> Result<u32, MeshError> {
    let mut parts = tok.split('/');
    let first = parts.next().unwrap_or("");
    // The texture and normal indices are not used, but must be indices (or empty, `i//n`).
    let rest: Vec<&str> = parts.collect();
    if rest.len() > 2 || rest.iter().any(|p| !p.is_empty() && p.parse::<i64>().is_err()) {
        return Err(MeshError::syntax(
            FMT,
            Location::Line(line),
            format!("`{tok}` is not a face vertex (`i`, `i/t`, `i//n` or `i/t/n`)"),
        ));
    }
    let idx: i64 = first.parse().map_err(|_| {
        MeshError::syntax(
            FMT,
            Location::Line(line),
            format!("`{tok}` is not a face vertex index"),
        )
    })?;
    let zero_based = if idx > 0 {
        idx - 1
    } else if idx < 0 {
        nverts as i64 + idx
    } else {
        return Err(MeshError::syntax(
            FMT,
            Location::Line(line),
            "face index 0 (OBJ indices start at 1)",
        ));
    };
    if zero_based < 0 || zero_based as usize >= nverts {
        return Err(MeshError::syntax(
            FMT,
            Location::Line(line),
            format!("face index {idx} is out of range ({nverts} vertices defined so far)"),
        ));
    }
    Ok(zero_based as u32)
}

/// Writes `v` and `f` lines (1-based indices).
pub fn write_obj<W: Write>(mesh: &Mesh, mut w: W) -> std::io::Result<()> {
    for p in &mesh.positions {
        writeln!(w, "v {} {} {}", p[0], p[1], p[2])?;
    }
    for t in &mesh.triangles {
        writeln!(w, "f {} {} {}", t[0] + 1, t[1] + 1, t[2] + 1)?;
    }
    Ok(())
}
