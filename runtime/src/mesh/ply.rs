//! PLY (Stanford polygon format): ASCII, binary little endian and binary big endian.
//!
//! Header errors carry a line number; errors in a binary body carry the byte offset of the value
//! that could not be read, counted from the start of the file.

use super::{Location, Mesh, MeshError, MeshReport, finish, push_polygon};
use std::io::Write;

const FMT: &str = "PLY";

/// How a PLY body is encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlyEncoding {
    Ascii,
    BinaryLittleEndian,
    BinaryBigEndian,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scalar {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    F32,
    F64,
}

impl Scalar {
    fn parse(s: &str) -> Option<Scalar> {
        Some(match s {
            "char" | "int8" => Scalar::I8,
            "uchar" | "uint8" => Scalar::U8,
            "short" | "int16" => Scalar::I16,
            "ushort" | "uint16" => Scalar::U16,
            "int" | "int32" => Scalar::I32,
            "uint" | "uint32" => Scalar::U32,
            "float" | "float32" => Scalar::F32,
            "double" | "float64" => Scalar::F64,
            _ => return None,
        })
    }
    fn size(self) -> usize {
        match self {
            Scalar::I8 | Scalar::U8 => 1,
            Scalar::I16 | Scalar::U16 => 2,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
            Scalar::F64 => 8,
        }
    }
    fn is_int(self) -> bool {
        !matches!(self, Scalar::F32 | Scalar::F64)
    }
    /// The values an integer type holds, and its name in messages.
    fn int_range(self) -> Option<(i64, i64, &'static str)> {
        Some(match self {
            Scalar::I8 => (i8::MIN.into(), i8::MAX.into(), "char"),
            Scalar::U8 => (0, u8::MAX.into(), "uchar"),
            Scalar::I16 => (i16::MIN.into(), i16::MAX.into(), "short"),
            Scalar::U16 => (0, u16::MAX.into(), "ushort"),
            Scalar::I32 => (i32::MIN.into(), i32::MAX.into(), "int"),
            Scalar::U32 => (0, u32::MAX.into(), "uint"),
            Scalar::F32 | Scalar::F64 => return None,
        })
    }
}

#[derive(Clone, Debug)]
enum Property {
    Scalar {
        name: String,
        ty: Scalar,
    },
    List {
        name: String,
        count: Scalar,
        item: Scalar,
    },
}

impl Property {
    fn name(&self) -> &str {
        match self {
            Property::Scalar { name, .. } | Property::List { name, .. } => name,
        }
    }
}

#[derive(Clone, Debug)]
struct Element {
    name: String,
    count: usize,
    line: usize,
    props: Vec<Property>,
}

struct Header {
    encoding: PlyEncoding,
    elements: Vec<Element>,
    body_start: usize,
    body_first_line: usize,
}

fn hdr_err(line: usize, msg: impl Into<String>) -> MeshError {
    MeshError::syntax(FMT, Location::Line(line), msg)
}

fn parse_header(bytes: &[u8]) -> Result<Header, MeshError> {
    let mut pos = 0usize;
    let mut line_no = 0usize;
    let mut encoding = None;
    let mut elements: Vec<Element> = Vec::new();
    loop {
        line_no += 1;
        let Some(nl) = bytes[pos..].iter().position(|&b| b == b'\n') else {
            return Err(hdr_err(line_no, "truncated header (no `end_header`)"));
        };
        let raw = &bytes[pos..pos + nl];
        pos += nl + 1;
        let text =
            std::str::from_utf8(raw).map_err(|_| hdr_err(line_no, "header line is not text"))?;
        let text = text.trim_end_matches('\r');
        let toks: Vec<&str> = text.split_whitespace().collect();
        if line_no == 1 {
            if toks != ["ply"] {
                return Err(hdr_err(1, "a PLY file starts with the line `ply`"));
            }
            continue;
        }
        match toks.first().copied() {
            None | Some("comment") | Some("obj_info") => {}
            Some("format") => {
                if encoding.is_some() {
                    return Err(hdr_err(line_no, "a second `format` line"));
                }
                // PLY has one version, 1.0 (`format ascii 1.0`).
                if let Some(v) = toks.get(2)
                    && v.parse::<f64>().ok() != Some(1.0)
                {
                    return Err(hdr_err(line_no, format!("PLY version `{v}` (the format has one version, 1.0)")));
                }
                encoding = Some(match toks.get(1).copied() {
                    Some("ascii") => PlyEncoding::Ascii,
                    Some("binary_little_endian") => PlyEncoding::BinaryLittleEndian,
                    Some("binary_big_endian") => PlyEncoding::BinaryBigEndian,
                    other => {
                        let what = match other {
                            Some(f) => format!("unknown format `{f}`"),
                            None => "a `format` line names no format".into(),
                        };
                        return Err(hdr_err(
                            line_no,
                            format!("{what} (the formats are ascii, binary_little_endian and binary_big_endian)"),
                        ));
                    }
                });
            }
            Some("element") => {
                if toks.len() != 3 {
                    return Err(hdr_err(line_no, "expected `element NAME COUNT`"));
                }
                let count = toks[2].parse().map_err(|_| {
                    hdr_err(line_no, format!("`{}` is not an element count", toks[2]))
                })?;
                if let Some(first) = elements.iter().find(|e| e.name == toks[1]) {
                    return Err(hdr_err(
                        line_no,
                        format!("a second `{}` element (the first is at line {})", toks[1], first.line),
                    ));
                }
                elements.push(Element {
                    name: toks[1].to_string(),
                    count,
                    line: line_no,
                    props: vec![],
                });
            }
            Some("property") => {
                let el = elements
                    .last_mut()
                    .ok_or_else(|| hdr_err(line_no, "a property before any element"))?;
                let ty = |s: &str| {
                    Scalar::parse(s)
                        .ok_or_else(|| hdr_err(line_no, format!("unknown property type `{s}`")))
                };
                let prop = if toks.get(1) == Some(&"list") {
                    if toks.len() != 5 {
                        return Err(hdr_err(
                            line_no,
                            "expected `property list COUNT_TYPE ITEM_TYPE NAME`",
                        ));
                    }
                    let count = ty(toks[2])?;
                    if !count.is_int() {
                        return Err(hdr_err(
                            line_no,
                            "a list count type must be an integer type",
                        ));
                    }
                    Property::List {
                        name: toks[4].to_string(),
                        count,
                        item: ty(toks[3])?,
                    }
                } else {
                    if toks.len() != 3 {
                        return Err(hdr_err(line_no, "expected `property TYPE NAME`"));
                    }
                    Property::Scalar {
                        name: toks[2].to_string(),
                        ty: ty(toks[1])?,
                    }
                };
                let name = match &prop {
                    Property::List { name, .. } | Property::Scalar { name, .. } => name,
                };
                if el.props.iter().any(|p| matches!(p, Property::List { name: n, .. } | Property::Scalar { name: n, .. } if n == name)) {
                    return Err(hdr_err(
                        line_no,
                        format!("the `{}` element declares property `{name}` twice", el.name),
                    ));
                }
                el.props.push(prop);
            }
            Some("end_header") => break,
            Some(other) => {
                return Err(hdr_err(
                    line_no,
                    format!("unknown header keyword `{other}`"),
                ));
            }
        }
    }
    let encoding = encoding.ok_or_else(|| hdr_err(line_no, "the header has no `format` line"))?;
    Ok(Header {
        encoding,
        elements,
        body_start: pos,
        body_first_line: line_no + 1,
    })
}

/// Where the vertex and face data live inside their elements.
struct Roles {
    xyz: [usize; 3],
    face_list: usize,
}

fn roles(h: &Header) -> Result<Roles, MeshError> {
    let vertex = h
        .elements
        .iter()
        .find(|e| e.name == "vertex")
        .ok_or_else(|| hdr_err(h.body_first_line - 1, "no `vertex` element"))?;
    let mut xyz = [usize::MAX; 3];
    for (k, n) in ["x", "y", "z"].iter().enumerate() {
        xyz[k] = vertex
            .props
            .iter()
            .position(|p| matches!(p, Property::Scalar { name, .. } if name == n))
            .ok_or_else(|| {
                hdr_err(
                    vertex.line,
                    format!("the vertex element has no scalar property `{n}`"),
                )
            })?;
    }
    let face = h
        .elements
        .iter()
        .find(|e| e.name == "face")
        .ok_or_else(|| hdr_err(h.body_first_line - 1, "no `face` element"))?;
    let face_list = face
        .props
        .iter()
        .position(|p| {
            matches!(p, Property::List { item, .. } if item.is_int())
                && (p.name() == "vertex_indices" || p.name() == "vertex_index")
        })
        .ok_or_else(|| {
            hdr_err(
                face.line,
                "the face element has no integer list `vertex_indices`",
            )
        })?;
    Ok(Roles { xyz, face_list })
}

/// Reads a PLY file's contents.
pub fn read_ply(bytes: &[u8]) -> Result<(Mesh, MeshReport), MeshError> {
    let header = parse_header(bytes)?;
    let roles = roles(&header)?;
    let mut src: Box<dyn Source> = match header.encoding {
        PlyEncoding::Ascii => Box::new(AsciiSource::new(
            bytes,
            header.body_start,
            header.body_first_line,
        )?),
        PlyEncoding::BinaryLittleEndian => Box::new(BinSource {
            bytes,
            pos: header.body_start,
            big: false,
        }),
        PlyEncoding::BinaryBigEndian => Box::new(BinSource {
            bytes,
            pos: header.body_start,
            big: true,
        }),
    };
    let mut positions = Vec::new();
    let mut nverts = None;
    // Faces as read: their vertex ids (flat), and per face its start in `ids`, where its first
    // index was read and the size of an index (so the k-th index's place is known without
    // storing it). They are checked against the vertex count once every element is read, so
    // a file that declares `face` before `vertex` reads as well.
    let mut ids: Vec<u32> = Vec::new();
    let mut faces: Vec<(usize, Location, usize)> = Vec::new();
    for el in &header.elements {
        let is_vertex = el.name == "vertex" && nverts.is_none();
        let is_face = el.name == "face";
        if el.props.is_empty() {
            // No data to read, whatever the count.
            continue;
        }
        if is_vertex {
            positions.reserve(el.count.min(1 << 24));
        }
        for _ in 0..el.count {
            src.begin_row(&el.name)?;
            let mut p = [0.0f64; 3];
            for (pi, prop) in el.props.iter().enumerate() {
                match prop {
                    Property::Scalar { ty, .. } => {
                        let (v, at) = src.value(*ty)?;
                        if is_vertex && let Some(k) = roles.xyz.iter().position(|&r| r == pi) {
                            if !v.is_finite() {
                                return Err(MeshError::syntax(
                                    FMT,
                                    at,
                                    format!("non-finite coordinate {v}"),
                                ));
                            }
                            p[k] = v;
                        }
                    }
                    Property::List { count, item, .. } => {
                        let (n, at) = src.value(*count)?;
                        if n < 0.0 {
                            return Err(MeshError::syntax(
                                FMT,
                                at,
                                format!("negative list length {n}"),
                            ));
                        }
                        let n = n as usize;
                        let wanted = is_face && pi == roles.face_list;
                        if wanted && n < 3 {
                            return Err(MeshError::syntax(
                                FMT,
                                at,
                                format!("a face needs at least 3 vertices, found {n}"),
                            ));
                        }
                        for k in 0..n {
                            let (v, at) = src.value(*item)?;
                            if wanted {
                                if !(v >= 0.0 && v <= u32::MAX as f64) {
                                    return Err(MeshError::syntax(
                                        FMT,
                                        at,
                                        format!("vertex index {v} is out of range"),
                                    ));
                                }
                                if k == 0 {
                                    faces.push((ids.len(), at, item.size()));
                                }
                                ids.push(v as u32);
                            }
                        }
                    }
                }
            }
            src.end_row(&el.name)?;
            if is_vertex {
                positions.push(p);
            }
        }
        if is_vertex {
            nverts = Some(positions.len());
        }
    }
    src.end_body()?;
    let nv = positions.len();
    let mut triangles = Vec::new();
    let mut poly = Vec::new();
    let (mut polygons, mut max_poly) = (0usize, 3usize);
    for (k, &(start, first_at, size)) in faces.iter().enumerate() {
        let end = faces.get(k + 1).map_or(ids.len(), |f| f.0);
        poly.clear();
        for (i, &v) in ids[start..end].iter().enumerate() {
            if v as usize >= nv {
                // One face per text line; binary indices follow each other.
                let at = match first_at {
                    Location::Byte(b) => Location::Byte(b + (i * size) as u64),
                    other => other,
                };
                return Err(MeshError::syntax(
                    FMT,
                    at,
                    format!("vertex index {v} is out of range ({nv} vertices)"),
                ));
            }
            poly.push(v);
        }
        max_poly = max_poly.max(poly.len());
        polygons += push_polygon(&mut triangles, &poly) as usize;
    }
    finish(positions, triangles, polygons, max_poly)
}

/// A stream of scalar values, each with the location it was read at, in rows (one element
/// each).
trait Source {
    /// Starts the next element (`name`, for messages).
    fn begin_row(&mut self, name: &str) -> Result<(), MeshError>;
    fn value(&mut self, ty: Scalar) -> Result<(f64, Location), MeshError>;
    /// Ends the element begun last: every value of its row was read.
    fn end_row(&mut self, name: &str) -> Result<(), MeshError>;
    /// After the last element: nothing is left.
    fn end_body(&mut self) -> Result<(), MeshError>;
}

struct BinSource<'a> {
    bytes: &'a [u8],
    pos: usize,
    big: bool,
}

impl Source for BinSource<'_> {
    fn begin_row(&mut self, _: &str) -> Result<(), MeshError> {
        Ok(())
    }

    fn value(&mut self, ty: Scalar) -> Result<(f64, Location), MeshError> {
        let at = Location::Byte(self.pos as u64);
        let n = ty.size();
        let Some(raw) = self.bytes.get(self.pos..self.pos + n) else {
            return Err(MeshError::syntax(FMT, at, "truncated binary body"));
        };
        self.pos += n;
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(raw);
        if self.big {
            b[..n].reverse();
        }
        let v = match ty {
            Scalar::I8 => b[0] as i8 as f64,
            Scalar::U8 => b[0] as f64,
            Scalar::I16 => i16::from_le_bytes([b[0], b[1]]) as f64,
            Scalar::U16 => u16::from_le_bytes([b[0], b[1]]) as f64,
            Scalar::I32 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
            Scalar::U32 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
            Scalar::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
            Scalar::F64 => f64::from_le_bytes(b),
        };
        Ok((v, at))
    }

    fn end_row(&mut self, _: &str) -> Result<(), MeshError> {
        Ok(())
    }

    /// Bytes after the last element are tolerated (some writers pad); only text bodies are
    /// checked row by row.
    fn end_body(&mut self) -> Result<(), MeshError> {
        Ok(())
    }
}

/// An ASCII body: one element per line (blank lines skipped).
struct AsciiSource<'a> {
    /// The non-blank lines, with their line numbers.
    rows: Vec<(usize, &'a str)>,
    /// The row being read and the values of it not read yet.
    row: usize,
    toks: std::str::SplitWhitespace<'a>,
    line: usize,
    last_line: usize,
}

impl<'a> AsciiSource<'a> {
    fn new(bytes: &'a [u8], start: usize, first_line: usize) -> Result<Self, MeshError> {
        let body = std::str::from_utf8(&bytes[start..]).map_err(|e| {
            let line = first_line
                + bytes[start..start + e.valid_up_to()]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count();
            MeshError::syntax(FMT, Location::Line(line), "invalid UTF-8 text")
        })?;
        let mut rows = Vec::new();
        let mut last_line = first_line;
        for (i, l) in body.lines().enumerate() {
            last_line = first_line + i;
            if !l.trim().is_empty() {
                rows.push((first_line + i, l));
            }
        }
        Ok(AsciiSource {
            rows,
            row: 0,
            toks: "".split_whitespace(),
            line: first_line,
            last_line,
        })
    }
}

impl Source for AsciiSource<'_> {
    fn begin_row(&mut self, name: &str) -> Result<(), MeshError> {
        let Some(&(line, text)) = self.rows.get(self.row) else {
            return Err(MeshError::syntax(
                FMT,
                Location::Line(self.last_line),
                format!("truncated body: the header declares more `{name}` elements"),
            ));
        };
        self.row += 1;
        self.line = line;
        self.toks = text.split_whitespace();
        Ok(())
    }

    fn value(&mut self, ty: Scalar) -> Result<(f64, Location), MeshError> {
        let at = Location::Line(self.line);
        let Some(tok) = self.toks.next() else {
            return Err(MeshError::syntax(
                FMT,
                at,
                "the line has fewer values than its element's properties",
            ));
        };
        let v = if let Some((lo, hi, name)) = ty.int_range() {
            let v = tok
                .parse::<i64>()
                .map_err(|_| MeshError::syntax(FMT, at, format!("`{tok}` is not an integer")))?;
            // An ASCII value its declared type cannot hold (a face of 300 vertices counted
            // by a `uchar`) is what the header says cannot be there.
            if v < lo || v > hi {
                return Err(MeshError::syntax(FMT, at, format!("`{tok}` is out of the range of its type `{name}`")));
            }
            v as f64
        } else {
            tok.parse::<f64>()
                .map_err(|_| MeshError::syntax(FMT, at, format!("`{tok}` is not a number")))?
        };
        Ok((v, at))
    }

    fn end_row(&mut self, name: &str) -> Result<(), MeshError> {
        match self.toks.next() {
            None => Ok(()),
            Some(tok) => Err(MeshError::syntax(
                FMT,
                Location::Line(self.line),
                format!("`{tok}`: more values than the `{name}` element's properties"),
            )),
        }
    }

    fn end_body(&mut self) -> Result<(), MeshError> {
        match self.rows.get(self.row) {
            None => Ok(()),
            Some(&(line, _)) => Err(MeshError::syntax(
                FMT,
                Location::Line(line),
                "data after the last element the header declares",
            )),
        }
    }
}

/// Writes a PLY file: `double` coordinates and `uchar`/`int` face lists.
pub fn write_ply<W: Write>(mesh: &Mesh, encoding: PlyEncoding, mut w: W) -> std::io::Result<()> {
    let fmt = match encoding {
        PlyEncoding::Ascii => "ascii",
        PlyEncoding::BinaryLittleEndian => "binary_little_endian",
        PlyEncoding::BinaryBigEndian => "binary_big_endian",
    };
    write!(
        w,
        "ply\nformat {fmt} 1.0\nelement vertex {}\nproperty double x\nproperty double y\nproperty double z\n\
         element face {}\nproperty list uchar int vertex_indices\nend_header\n",
        mesh.positions.len(),
        mesh.triangles.len()
    )?;
    match encoding {
        PlyEncoding::Ascii => {
            for p in &mesh.positions {
                writeln!(w, "{} {} {}", p[0], p[1], p[2])?;
            }
            for t in &mesh.triangles {
                writeln!(w, "3 {} {} {}", t[0], t[1], t[2])?;
            }
        }
        PlyEncoding::BinaryLittleEndian | PlyEncoding::BinaryBigEndian => {
            let big = encoding == PlyEncoding::BinaryBigEndian;
            for p in &mesh.positions {
                for c in p {
                    w.write_all(&if big {
                        c.to_be_bytes()
                    } else {
                        c.to_le_bytes()
                    })?;
                }
            }
            for t in &mesh.triangles {
                w.write_all(&[3u8])?;
                for &v in t {
                    let v = v as i32;
                    w.write_all(&if big {
                        v.to_be_bytes()
                    } else {
                        v.to_le_bytes()
                    })?;
                }
            }
        }
    }
    Ok(())
}
