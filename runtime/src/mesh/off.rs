//! OFF (Object File Format), ASCII: header, counts, vertex lines, face lines.

use super::text::{coord, decode, uint};
use super::{Location, Mesh, MeshError, MeshReport, finish, push_polygon};
use std::io::Write;

const FMT: &str = "OFF";

/// Reads an ASCII OFF file's contents.
pub fn read_off(bytes: &[u8]) -> Result<(Mesh, MeshReport), MeshError> {
    let text = decode(bytes, FMT)?;
    // Content lines with their 1-based numbers, comments and blank lines dropped.
    let mut lines = text.lines().enumerate().filter_map(|(i, l)| {
        let c = l.split('#').next().unwrap_or("").trim();
        (!c.is_empty()).then_some((i + 1, c))
    });
    let last_line = text.lines().count().max(1);
    let truncated = |what: String| MeshError::syntax(FMT, Location::Line(last_line), what);

    let (hline, header) = lines
        .next()
        .ok_or_else(|| truncated("empty file (no OFF header)".into()))?;
    let mut htoks = header.split_whitespace();
    let kw = htoks.next().unwrap_or("");
    if !matches!(kw, "OFF" | "COFF" | "NOFF" | "CNOFF" | "STOFF" | "STCOFF") {
        return Err(MeshError::syntax(
            FMT,
            Location::Line(hline),
            format!("expected `OFF`, found `{kw}`"),
        ));
    }
    let rest: Vec<&str> = htoks.collect();
    if rest.first() == Some(&"BINARY") {
        return Err(MeshError::syntax(
            FMT,
            Location::Line(hline),
            "binary OFF is not supported",
        ));
    }
    let (cline, counts): (usize, Vec<&str>) = if rest.is_empty() {
        let (l, c) = lines
            .next()
            .ok_or_else(|| truncated("missing the vertex/face counts".into()))?;
        (l, c.split_whitespace().collect())
    } else {
        (hline, rest)
    };
    if counts.len() < 2 {
        return Err(MeshError::syntax(
            FMT,
            Location::Line(cline),
            "expected `nvertices nfaces [nedges]`",
        ));
    }
    let nv = uint(counts[0], FMT, cline, "vertex count")?;
    let nf = uint(counts[1], FMT, cline, "face count")?;

    let mut positions = Vec::with_capacity(nv.min(1 << 24));
    // The first vertex row with more values than coordinates (colours, normals, or
    // several vertices on one line), named when the vertex rows run out.
    let mut long_row: Option<(usize, usize)> = None;
    let hint = |long_row: Option<(usize, usize)>| {
        long_row.map_or(String::new(), |(at, n)| {
            format!(
                " (line {at} holds {n} values: OFF has one vertex per line, and values after a \
                 row's 3 coordinates are skipped)"
            )
        })
    };
    for k in 0..nv {
        let (line, l) = lines.next().ok_or_else(|| {
            truncated(format!("truncated: expected {nv} vertices, found {k}{}", hint(long_row)))
        })?;
        let toks: Vec<&str> = l.split_whitespace().collect();
        if toks.len() > 3 && long_row.is_none() {
            long_row = Some((line, toks.len()));
        }
        if toks.len() < 3 {
            return Err(MeshError::syntax(
                FMT,
                Location::Line(line),
                "a vertex needs 3 coordinates",
            ));
        }
        positions.push([
            coord(toks[0], FMT, line)?,
            coord(toks[1], FMT, line)?,
            coord(toks[2], FMT, line)?,
        ]);
    }
    let mut triangles = Vec::with_capacity(nf.min(1 << 24));
    let mut poly = Vec::new();
    let (mut polygons, mut max_poly) = (0usize, 3usize);
    for k in 0..nf {
        let (line, l) = lines
            .next()
            .ok_or_else(|| truncated(format!("truncated: expected {nf} faces, found {k}{}", hint(long_row))))?;
        let mut toks = l.split_whitespace();
        let n = uint(toks.next().unwrap_or(""), FMT, line, "face size")?;
        if n < 3 {
            return Err(MeshError::syntax(
                FMT,
                Location::Line(line),
                format!("a face needs at least 3 vertices, found {n}"),
            ));
        }
        poly.clear();
        for _ in 0..n {
            let tok = toks.next().ok_or_else(|| {
                MeshError::syntax(
                    FMT,
                    Location::Line(line),
                    format!("a face of size {n} lists fewer indices"),
                )
            })?;
            let idx = uint(tok, FMT, line, "vertex index")?;
            if idx >= nv {
                return Err(MeshError::syntax(
                    FMT,
                    Location::Line(line),
                    format!("vertex index {idx} is out of range ({nv} vertices)"),
                ));
            }
            poly.push(idx as u32);
        }
        // Trailing tokens are per-face colours: ignored.
        max_poly = max_poly.max(n);
        polygons += push_polygon(&mut triangles, &poly) as usize;
    }
    // More rows than the counts say: the counts or the file are wrong.
    if let Some((line, _)) = lines.next() {
        return Err(MeshError::syntax(
            FMT,
            Location::Line(line),
            format!("data after the {nv} vertices and {nf} faces the counts declare"),
        ));
    }
    finish(positions, triangles, polygons, max_poly)
}

/// Writes an ASCII OFF file.
pub fn write_off<W: Write>(mesh: &Mesh, mut w: W) -> std::io::Result<()> {
    writeln!(w, "OFF")?;
    writeln!(w, "{} {} 0", mesh.positions.len(), mesh.triangles.len())?;
    for p in &mesh.positions {
        writeln!(w, "{} {} {}", p[0], p[1], p[2])?;
    }
    for t in &mesh.triangles {
        writeln!(w, "3 {} {} {}", t[0], t[1], t[2])?;
    }
    Ok(())
}
