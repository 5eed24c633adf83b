//! The mesh readers on mutated files: byte flips, deletions, duplicated spans and truncations
//! of valid OBJ, OFF and PLY (ASCII, binary little and big endian) files. Every result must be
//! a mesh or an error; no input may panic. An accepted mesh must be usable: every face's
//! indices below the vertex count, every coordinate finite.

use mad_runtime::mesh::ply::{PlyEncoding, write_ply};
use mad_runtime::mesh::{MeshFormat, load_mesh, read_mesh};

/// A small deterministic generator (64-bit LCG, high bits).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One random edit of `bytes`.
fn mutate(bytes: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut b = bytes.to_vec();
    let edits = 1 + rng.below(4);
    for _ in 0..edits {
        if b.is_empty() {
            break;
        }
        let at = rng.below(b.len());
        match rng.below(6) {
            0 => b[at] = rng.next() as u8,
            1 => {
                b.remove(at);
            }
            2 => {
                let end = (at + 1 + rng.below(24)).min(b.len());
                let span = b[at..end].to_vec();
                let to = rng.below(b.len());
                b.splice(to..to, span);
            }
            3 => b.truncate(at),
            // Characters that text formats give meaning to.
            4 => b[at] = b"-0123456789 \n/#.eE+nif"[rng.below(22)],
            _ => {
                let digits = format!("{}", rng.next() as i64 - (1 << 30));
                b.splice(at..at, digits.into_bytes());
            }
        }
    }
    b
}

fn check(name: &str, bytes: &[u8], format: MeshFormat) {
    if let Ok((mesh, _)) = read_mesh(bytes, format) {
        let n = mesh.positions.len();
        assert!(mesh.triangles.iter().flatten().all(|&v| (v as usize) < n), "{name}: an index out of range was accepted");
        assert!(mesh.positions.iter().flatten().all(|c| c.is_finite()), "{name}: a non-finite coordinate was accepted");
    }
}

#[test]
fn mutated_mesh_files_are_read_or_rejected_never_a_panic() {
    let mesh = load_mesh("sphere:1").unwrap();
    let mut obj = Vec::new();
    for p in &mesh.positions {
        obj.extend(format!("v {} {} {}\n", p[0], p[1], p[2]).into_bytes());
    }
    for t in &mesh.triangles {
        obj.extend(format!("f {} {} {}\n", t[0] + 1, t[1] + 1, t[2] + 1).into_bytes());
    }
    let mut off = format!("OFF\n{} {} 0\n", mesh.positions.len(), mesh.triangles.len()).into_bytes();
    for p in &mesh.positions {
        off.extend(format!("{} {} {}\n", p[0], p[1], p[2]).into_bytes());
    }
    for t in &mesh.triangles {
        off.extend(format!("3 {} {} {}\n", t[0], t[1], t[2]).into_bytes());
    }
    let mut inputs = vec![("obj", obj, MeshFormat::Obj), ("off", off, MeshFormat::Off)];
    for (name, enc) in [
        ("ply ascii", PlyEncoding::Ascii),
        ("ply le", PlyEncoding::BinaryLittleEndian),
        ("ply be", PlyEncoding::BinaryBigEndian),
    ] {
        let mut b = Vec::new();
        write_ply(&mesh, enc, &mut b).unwrap();
        inputs.push((name, b, MeshFormat::Ply));
    }
    let mut rng = Rng(0x5eed);
    for (name, bytes, format) in &inputs {
        assert!(read_mesh(bytes, *format).is_ok(), "{name}: the unmutated file reads");
        for k in 0..5000 {
            let m = mutate(bytes, &mut rng);
            let caught = std::panic::catch_unwind(|| check(name, &m, *format));
            assert!(caught.is_ok(), "{name}, mutation {k}: panicked on {:?}", String::from_utf8_lossy(&m[..m.len().min(400)]));
        }
    }
}
