//! Mesh readers and writers: small inline files, round trips, malformed input.

use mad_runtime::mesh::ply::{PlyEncoding, read_ply, write_ply};
use mad_runtime::mesh::{
    Degeneracy, Mesh, MeshError, MeshFormat, load_mesh, load_mesh_with_report, read_mesh,
    write_mesh,
};

fn tetra() -> Mesh {
    Mesh::new(
        vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.1, 0.2, 0.7],
        ],
        vec![[0, 2, 1], [0, 1, 3], [1, 2, 3], [2, 0, 3]],
    )
    .unwrap()
}

#[test]
fn obj_reads_vertices_faces_and_fan_triangulates_quads() {
    let src = "# a quad and a triangle\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0 1.0\nvt 0 0\ng x\nf 1/1 2/1/1 3//1 4\nf -4 -3 -1\n";
    let (m, r) = read_mesh(src.as_bytes(), MeshFormat::Obj).unwrap();
    assert_eq!(m.positions.len(), 4);
    assert_eq!(m.triangles, vec![[0, 1, 2], [0, 2, 3], [0, 1, 3]]);
    assert_eq!(r.triangulated_polygons, 1);
    assert_eq!(r.max_polygon_size, 4);
    assert!(r.warnings().iter().any(|w| w.contains("fan-triangulated")));
}

#[test]
fn off_reads_counts_on_header_line_and_comments() {
    let src = "OFF 4 2 0\n# comment\n0 0 0\n1 0 0\n1 1 0\n\n0 1 0\n3 0 1 2\n3 0 2 3 255 0 0\n";
    let (m, r) = read_mesh(src.as_bytes(), MeshFormat::Off).unwrap();
    assert_eq!(m.positions[3], [0.0, 1.0, 0.0]);
    assert_eq!(m.triangles, vec![[0, 1, 2], [0, 2, 3]]);
    assert!(r.degenerate_faces.is_empty());
}

#[test]
fn ply_ascii_with_extra_properties_and_elements() {
    let src = "ply\r\nformat ascii 1.0\r\ncomment hi\r\nelement vertex 3\r\nproperty float y\r\nproperty float x\r\n\
               property uchar red\r\nproperty float z\r\nelement face 1\r\nproperty uchar flags\r\n\
               property list uchar int vertex_indices\r\nelement edge 1\r\nproperty int a\r\nproperty int b\r\nend_header\r\n\
               0 1 7 2\r\n1 0 7 2\r\n1 1 7 0.5\r\n9 3 2 1 0\r\n0 1\r\n";
    let (m, _) = read_ply(src.as_bytes()).unwrap();
    assert_eq!(
        m.positions,
        vec![[1.0, 0.0, 2.0], [0.0, 1.0, 2.0], [1.0, 1.0, 0.5]]
    );
    assert_eq!(m.triangles, vec![[2, 1, 0]]);
}

#[test]
fn round_trips_are_exact_in_every_format() {
    let mut m = mad_runtime::mesh::generators::icosphere(2);
    m.positions[0][0] = 0.1 + 0.2; // not exactly representable in short decimal
    let cases: Vec<(MeshFormat, Option<PlyEncoding>)> = vec![
        (MeshFormat::Obj, None),
        (MeshFormat::Off, None),
        (MeshFormat::Ply, Some(PlyEncoding::Ascii)),
        (MeshFormat::Ply, Some(PlyEncoding::BinaryLittleEndian)),
        (MeshFormat::Ply, Some(PlyEncoding::BinaryBigEndian)),
    ];
    for (fmt, enc) in cases {
        let mut buf = Vec::new();
        match enc {
            Some(e) => write_ply(&m, e, &mut buf).unwrap(),
            None => write_mesh(&m, fmt, &mut buf).unwrap(),
        }
        let (back, _) = read_mesh(&buf, fmt).unwrap();
        assert_eq!(back, m, "{fmt:?} {enc:?}");
    }
}

#[test]
fn binary_big_endian_float_and_uint_indices() {
    let mut buf = b"ply\nformat binary_big_endian 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nelement face 1\nproperty list uint8 uint32 vertex_indices\nend_header\n".to_vec();
    for v in [0.0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0] {
        buf.extend_from_slice(&v.to_be_bytes());
    }
    buf.push(3);
    for i in [0u32, 1, 2] {
        buf.extend_from_slice(&i.to_be_bytes());
    }
    let (m, _) = read_ply(&buf).unwrap();
    assert_eq!(m.positions[1], [1.0, 0.0, 0.0]);
    assert_eq!(m.triangles, vec![[0, 1, 2]]);
}

#[test]
fn files_and_save_load_by_extension() {
    let dir = std::env::temp_dir().join(format!("mad_mesh_io_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let m = tetra();
    for ext in ["obj", "OFF", "ply"] {
        let p = dir.join(format!("t.{ext}"));
        let p = p.to_str().unwrap();
        mad_runtime::mesh::save_mesh(&m, p).unwrap();
        assert_eq!(load_mesh(p).unwrap(), m);
    }
    let missing = dir.join("missing.obj");
    assert!(matches!(
        load_mesh(missing.to_str().unwrap()),
        Err(MeshError::Io { .. })
    ));
    assert!(matches!(
        load_mesh("mesh.stl"),
        Err(MeshError::UnknownFormat { .. })
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

fn obj_err(src: &str) -> MeshError {
    read_mesh(src.as_bytes(), MeshFormat::Obj).unwrap_err()
}
fn off_err(src: &str) -> MeshError {
    read_mesh(src.as_bytes(), MeshFormat::Off).unwrap_err()
}
fn ply_err(src: &[u8]) -> MeshError {
    read_ply(src).unwrap_err()
}

#[test]
fn malformed_obj_reports_the_line() {
    let base = "v 0 0 0\nv 1 0 0\nv 0 1 0\n";
    assert_eq!(obj_err(&format!("{base}f 1 2 4\n")).line(), Some(4));
    assert_eq!(obj_err(&format!("{base}f 1 2 0\n")).line(), Some(4));
    assert_eq!(obj_err(&format!("{base}f 1 2 -4\n")).line(), Some(4));
    assert_eq!(obj_err(&format!("{base}\nf 1 2\n")).line(), Some(5));
    assert_eq!(obj_err("v 0 0 0\nv 1 nan 0\n").line(), Some(2));
    assert_eq!(obj_err("v 0 0 0\nv 1 0 inf\n").line(), Some(2));
    assert_eq!(obj_err("v 0 0 0\nv 1 0 x\n").line(), Some(2));
    assert_eq!(obj_err("v 0 0\n").line(), Some(1));
    assert_eq!(obj_err(&format!("{base}f 1 two 3\n")).line(), Some(4));
    // Texture and normal indices must be indices too (they were skipped unread).
    assert_eq!(obj_err(&format!("{base}f 1/x 2/y 3/z\n")).line(), Some(4));
    assert_eq!(obj_err(&format!("{base}f 1/1/1/1 2 3\n")).line(), Some(4));
    assert!(read_mesh(format!("{base}f 1//1 2/2 3/3/3\n").as_bytes(), MeshFormat::Obj).is_ok());
    // Lines ended by CR alone read as lines (errors keep their line).
    let cr = "v 0 0 0\rv 1 0 0\rv 0 1 0\rf 1 2 3\r";
    assert_eq!(read_mesh(cr.as_bytes(), MeshFormat::Obj).unwrap().0.triangles.len(), 1);
    assert_eq!(obj_err("v 0 0 0\rv 1 x 0\r").line(), Some(2));
    assert!(matches!(obj_err(""), MeshError::Empty { .. }));
    assert!(matches!(obj_err(base), MeshError::Empty { .. }));
    let mut bad = b"v 0 0 0\nv 1 0 0\n".to_vec();
    bad.extend_from_slice(&[0xff, 0xfe, b'\n']);
    assert_eq!(
        read_mesh(&bad, MeshFormat::Obj).unwrap_err().line(),
        Some(3)
    );
}

#[test]
fn malformed_off_reports_the_line() {
    assert_eq!(off_err("PFF\n1 1 0\n").line(), Some(1));
    assert_eq!(off_err("OFF\n3 1\n0 0 0\n1 0 0\n").line(), Some(4)); // truncated vertices
    assert_eq!(off_err("OFF\n3 1\n0 0 0\n1 0 0\n0 1 0\n").line(), Some(5)); // truncated faces
    assert_eq!(
        off_err("OFF\n3 1\n0 0 0\n1 0 0\n0 1 0\n3 0 1 3\n").line(),
        Some(6)
    );
    assert_eq!(
        off_err("OFF\n3 1\n0 0 0\n1 0 0\n0 1 0\n2 0 1\n").line(),
        Some(6)
    );
    assert_eq!(
        off_err("OFF\n3 1\n0 0 0\n1 0 NaN\n0 1 0\n3 0 1 2\n").line(),
        Some(4)
    );
    assert_eq!(
        off_err("OFF\n3 1\n0 0 0\n1 0 0\n0 1 0\n3 0 1\n").line(),
        Some(6)
    );
    assert_eq!(off_err("OFF\nthree 1\n").line(), Some(2));
    assert!(matches!(off_err("OFF\n0 0 0\n"), MeshError::Empty { .. }));
    assert!(matches!(
        off_err("OFF\n3 0 0\n0 0 0\n1 0 0\n0 1 0\n"),
        MeshError::Empty { .. }
    ));
    assert_eq!(off_err("").line(), Some(1));
}

#[test]
fn malformed_ply_reports_line_or_byte() {
    let h = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n";
    let ok = format!("{h}0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n");
    assert!(read_ply(ok.as_bytes()).is_ok());
    assert_eq!(
        ply_err(format!("{h}0 0 0\n1 0 0\n0 1 0\n3 0 1 3\n").as_bytes()).line(),
        Some(13)
    );
    assert_eq!(
        ply_err(format!("{h}0 0 0\n1 0 0\n0 1 0\n").as_bytes()).line(),
        Some(12)
    );
    assert_eq!(
        ply_err(format!("{h}0 0 0\n1 x 0\n0 1 0\n3 0 1 2\n").as_bytes()).line(),
        Some(11)
    );
    assert_eq!(
        ply_err(format!("{h}0 0 0\n1 nan 0\n0 1 0\n3 0 1 2\n").as_bytes()).line(),
        Some(11)
    );
    assert_eq!(
        ply_err(format!("{h}0 0 0\n1 0 0\n0 1 0\n2 0 1\n").as_bytes()).line(),
        Some(13)
    );
    assert_eq!(
        ply_err(b"ply\nformat ascii 1.0\nelement vertex 3\nproperty floot x\n").line(),
        Some(4)
    );
    assert_eq!(
        ply_err(b"ply\nformat ascii 1.0\nelement vertex 3\n").line(),
        Some(4)
    );
    assert_eq!(ply_err(b"plx\n").line(), Some(1));
    // Headers that contradict themselves: a property twice (the first was used for both), a
    // second vertex element (ignored), another version, a count its type cannot hold.
    let twice = h.replace("property float y\n", "property float y\nproperty float x\n");
    let e = ply_err(format!("{twice}0 0 0 0\n1 0 0 1\n0 1 0 0\n3 0 1 2\n").as_bytes());
    assert_eq!(e.line(), Some(6), "{e}");
    assert!(e.to_string().contains("declares property `x` twice"), "{e}");
    let two = h.replace("element face 1", "element vertex 1\nproperty float x\nelement face 1");
    let e = ply_err(format!("{two}0 0 0\n1 0 0\n0 1 0\n5\n3 0 1 2\n").as_bytes());
    assert!(e.to_string().contains("a second `vertex` element (the first is at line 3)"), "{e}");
    let e = ply_err(h.replace("ascii 1.0", "ascii 2.0").as_bytes());
    assert_eq!(e.line(), Some(2), "{e}");
    assert!(e.to_string().contains("PLY version `2.0`"), "{e}");
    let e = ply_err(format!("{h}0 0 0\n1 0 0\n0 1 0\n300 0 1 2\n").as_bytes());
    assert_eq!(e.line(), Some(13), "{e}");
    assert!(e.to_string().contains("`300` is out of the range of its type `uchar`"), "{e}");

    // Binary: truncation and a bad index report byte offsets.
    let mut buf = Vec::new();
    write_ply(&tetra(), PlyEncoding::BinaryLittleEndian, &mut buf).unwrap();
    let body = buf.windows(11).position(|w| w == b"end_header\n").unwrap() + 11;
    let e = ply_err(&buf[..buf.len() - 2]);
    assert_eq!(e.byte_offset(), Some((buf.len() - 4) as u64), "{e}");
    let mut bad = buf.clone();
    let idx_at = body + 4 * 24 + 1; // first index of the first face
    bad[idx_at..idx_at + 4].copy_from_slice(&7i32.to_le_bytes());
    assert_eq!(ply_err(&bad).byte_offset(), Some(idx_at as u64));
    let mut nan = buf.clone();
    nan[body + 8..body + 16].copy_from_slice(&f64::NAN.to_le_bytes());
    assert_eq!(ply_err(&nan).byte_offset(), Some((body + 8) as u64));
}

#[test]
fn degenerate_faces_are_reported_not_rejected() {
    let src = "v 0 0 0\nv 1 0 0\nv 2 0 0\nv 0 1 0\nf 1 2 4\nf 1 2 3\nf 1 1 4\n";
    let (m, r) = read_mesh(src.as_bytes(), MeshFormat::Obj).unwrap();
    assert_eq!(m.triangles.len(), 3);
    assert_eq!(
        r.degenerate_faces,
        vec![(1, Degeneracy::ZeroArea), (2, Degeneracy::RepeatedVertex)]
    );
    assert_eq!(r.warnings().len(), 2);
}

/// The zero-area test does not depend on the mesh's scale: a proper triangle at 1e200 or at
/// 1e-170 (whose squared lengths over- or underflow) is not reported; a flat one is.
#[test]
fn zero_area_faces_are_found_at_every_scale() {
    for scale in ["1e200", "1e-170", "1"] {
        let src = format!("v 0 0 0\nv {scale} 0 0\nv 0 {scale} 0\nv 2e0 0 0\nf 1 2 3\n");
        let (_, r) = read_mesh(src.as_bytes(), MeshFormat::Obj).unwrap();
        assert!(r.degenerate_faces.is_empty(), "{scale}: {:?}", r.degenerate_faces);
        let flat = format!("v 0 0 0\nv {scale} 0 0\nv -{scale} 0 0\nf 1 2 3\n");
        let (_, r) = read_mesh(flat.as_bytes(), MeshFormat::Obj).unwrap();
        assert_eq!(r.degenerate_faces, vec![(0, Degeneracy::ZeroArea)], "{scale}");
    }
}

#[test]
fn mesh_new_validates() {
    assert!(Mesh::new(vec![[0.0; 3]], vec![[0, 0, 1]]).is_err());
    assert!(Mesh::new(vec![[0.0, f64::NAN, 0.0]; 3], vec![[0, 1, 2]]).is_err());
    assert!(matches!(
        Mesh::new(vec![], vec![]),
        Err(MeshError::Empty { .. })
    ));
}

#[test]
fn generator_specs_parse_and_reject_garbage() {
    assert_eq!(load_mesh("grid:3x4").unwrap().positions.len(), 12);
    assert_eq!(load_mesh("grid:5").unwrap().positions.len(), 25);
    for bad in [
        "grid:1x5",
        "grid:ax3",
        "sphere:11",
        "sphere:-1",
        "disk:0",
        "torus:3",
        "torus:2,5",
        "cube:3",
    ] {
        let r = load_mesh_with_report(bad);
        assert!(r.is_err(), "{bad}");
    }
}

#[test]
fn generated_meshes_beyond_the_vertex_limit_are_errors_not_aborts() {
    // grid:40000x40000 (1.6·10⁹ vertices) allocated tens of gigabytes and aborted.
    for (spec, count) in [
        ("grid:40000x40000", "1600000000"),
        ("grid:4097x4096", "16781312"),
        ("torus:46340,46340", "2147395600"),
        ("disk:20000", "1200060001"),
    ] {
        let e = load_mesh(spec).err().unwrap_or_else(|| panic!("{spec} was accepted")).to_string();
        assert!(e.contains(&format!("it would have {count} vertices; a generated mesh has at most 16777216")), "{spec}: {e}");
    }
    let e = load_mesh("grid:99999999999x99999999999").unwrap_err().to_string();
    assert!(e.contains("more than 2⁶⁴"), "{e}");
}

#[test]
fn truncated_and_corrupted_files_never_panic() {
    let m = mad_runtime::mesh::generators::torus(4, 3);
    let mut files: Vec<(MeshFormat, Vec<u8>)> = Vec::new();
    for fmt in [MeshFormat::Obj, MeshFormat::Off, MeshFormat::Ply] {
        let mut b = Vec::new();
        write_mesh(&m, fmt, &mut b).unwrap();
        files.push((fmt, b));
    }
    for enc in [
        PlyEncoding::BinaryLittleEndian,
        PlyEncoding::BinaryBigEndian,
    ] {
        let mut b = Vec::new();
        write_ply(&m, enc, &mut b).unwrap();
        files.push((MeshFormat::Ply, b));
    }
    let mut state = 12345u64;
    for (fmt, bytes) in &files {
        for len in 0..bytes.len() {
            let _ = read_mesh(&bytes[..len], *fmt);
        }
        for _ in 0..300 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let mut b = bytes.clone();
            let at = (state >> 33) as usize % b.len();
            b[at] = (state >> 17) as u8;
            if let Ok((mesh, _)) = read_mesh(&b, *fmt) {
                mesh.validate().unwrap();
            }
        }
    }
}

#[test]
fn ascii_ply_rows_are_elements() {
    let h = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n";
    // A vertex row with two values: the error is at that line, not where the tokens run out.
    let e = ply_err(format!("{h}0 0 0\n1 0\n0 1 0\n3 0 1 2\n").as_bytes());
    assert_eq!(e.line(), Some(11), "{e}");
    assert!(e.to_string().contains("fewer values"), "{e}");
    // Values split over lines do not read as other rows' values.
    let e = ply_err(format!("{h}1 0\n0 0 1 0\n0 0 0\n3 0 1 2\n").as_bytes());
    assert_eq!(e.line(), Some(10), "{e}");
    // Extra values on a row, and rows after the last element, are errors.
    let e = ply_err(format!("{h}0 0 0 7\n1 0 0\n0 1 0\n3 0 1 2\n").as_bytes());
    assert_eq!(e.line(), Some(10), "{e}");
    assert!(e.to_string().contains("more values"), "{e}");
    let e = ply_err(format!("{h}0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n3 0 2 1\n").as_bytes());
    assert_eq!(e.line(), Some(14), "{e}");
    assert!(e.to_string().contains("data after the last element"), "{e}");
    // Blank lines are skipped.
    assert!(read_ply(format!("{h}0 0 0\n\n1 0 0\n0 1 0\n3 0 1 2\n\n").as_bytes()).is_ok());
}

#[test]
fn a_ply_may_declare_its_faces_before_its_vertices() {
    let src = "ply\nformat ascii 1.0\nelement face 1\nproperty list uchar int vertex_indices\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nend_header\n3 0 1 2\n0 0 0\n1 0 0\n0 1 0\n";
    let (m, _) = read_ply(src.as_bytes()).unwrap();
    assert_eq!((m.positions.len(), m.triangles.clone()), (3, vec![[0, 1, 2]]));
    // An index out of range is still found, at its line.
    let bad = src.replace("3 0 1 2", "3 0 1 3");
    assert_eq!(ply_err(bad.as_bytes()).line(), Some(10));
}

#[test]
fn off_rows_beyond_the_counts_are_errors() {
    let src = "OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n3 0 2 1\n";
    let e = read_mesh(src.as_bytes(), MeshFormat::Off).unwrap_err();
    assert_eq!(e.line(), Some(7), "{e}");
    assert!(e.to_string().contains("data after the 3 vertices and 1 faces"), "{e}");
    // Comments and blank lines after the faces are fine.
    assert!(read_mesh(b"OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n\n# end\n", MeshFormat::Off).is_ok());
}

#[test]
fn non_manifold_edges_and_duplicate_faces_are_reported() {
    // Three faces on the edge (1, 2), and face 1 2 3 twice (once reversed).
    let src = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nv 1 1 1\nf 1 2 3\nf 1 2 4\nf 1 2 5\nf 3 2 1\n";
    let (_, r) = read_mesh(src.as_bytes(), MeshFormat::Obj).unwrap();
    assert_eq!((r.non_manifold_edges, r.duplicate_faces), (1, 1), "{r:?}");
    let w = r.warnings().join("\n");
    assert!(w.contains("1 edge(s) shared by three or more faces") && w.contains("1 duplicate face(s)"), "{w}");
    // A closed icosphere has neither.
    let s = mad_runtime::mesh::load_mesh_with_report("sphere:1").unwrap().1;
    assert_eq!((s.non_manifold_edges, s.duplicate_faces), (0, 0));
}

/// Messages that say what is wrong in the user's terms: a PLY format name as written, and
/// an OFF file whose vertices share lines (one vertex per line) pointing at that line.
#[test]
fn header_and_row_messages_name_the_problem() {
    let e = ply_err(b"ply\nformat binary_middle_endian 1.0\nelement vertex 0\nend_header\n").to_string();
    assert!(
        e.contains("unknown format `binary_middle_endian`") && e.contains("binary_little_endian") && !e.contains("Some("),
        "{e}"
    );
    let e = off_err("OFF\n3 1 0\n0 0 0 1 0 0 0 1 0\n3 0 1 2\n").to_string();
    assert!(e.contains("line 3 holds 9 values") && e.contains("one vertex per line"), "{e}");
}

/// A spec that looks like a generator but names none says what the generators are, and a
/// generator name in the wrong case says the names are lower case.
#[test]
fn unknown_generators_are_named_as_such() {
    let err = load_mesh("foo:3").unwrap_err().to_string();
    assert!(err.contains("or a generator: grid, sphere, disk, torus, spheres2"), "{err}");
    let err = load_mesh("GRID:3x3").unwrap_err().to_string();
    assert!(err.contains("generator names are lower case (`grid:…`)"), "{err}");
}
