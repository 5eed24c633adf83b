//! The `spheres2:` generator: two unit copies of a closed surface with a gap of 0.2.

use mad_runtime::mesh::{load_mesh, save_mesh};

fn check(m: &mad_runtime::mesh::Mesh, nv: usize, nf: usize) {
    assert_eq!(m.positions.len(), 2 * nv);
    assert_eq!(m.triangles.len(), 2 * nf);
    for (k, c) in [(0, -1.1), (1, 1.1)] {
        let part = &m.positions[k * nv..(k + 1) * nv];
        let r = part
            .iter()
            .map(|p| ((p[0] - c).powi(2) + p[1] * p[1] + p[2] * p[2]).sqrt())
            .fold(0.0, f64::max);
        assert!((r - 1.0).abs() < 1e-12, "copy {k}: radius {r}");
    }
    assert!(
        m.triangles[nf..]
            .iter()
            .flatten()
            .all(|&v| v as usize >= nv)
    );
    let gap = m.positions[nv..]
        .iter()
        .map(|p| p[0])
        .fold(f64::INFINITY, f64::min)
        - m.positions[..nv]
            .iter()
            .map(|p| p[0])
            .fold(f64::NEG_INFINITY, f64::max);
    assert!(gap >= 0.2 - 1e-12, "gap {gap}");
}

#[test]
fn two_icospheres_and_two_copies_of_a_file() {
    let m = load_mesh("spheres2:1").unwrap();
    check(&m, 42, 80);
    let one = load_mesh("sphere:1").unwrap();
    let path = std::env::temp_dir().join(format!("mad-spheres2-{}.obj", std::process::id()));
    let path = path.to_str().unwrap();
    save_mesh(&one, path).unwrap();
    let from_file = load_mesh(&format!("spheres2:{path}")).unwrap();
    check(&from_file, 42, 80);
    assert!(load_mesh("spheres2:9").is_err());
    assert!(load_mesh("spheres2:/no/such/file.obj").is_err());
    let empty = load_mesh("spheres2:").unwrap_err().to_string();
    assert!(empty.contains("expected spheres2:LEVEL or spheres2:FILE"), "{empty}");
}

#[test]
fn an_open_surface_is_not_two_shells() {
    let path = std::env::temp_dir().join(format!("mad-spheres2-open-{}.obj", std::process::id()));
    std::fs::write(&path, "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\nf 2 4 3\n").unwrap();
    let e = load_mesh(&format!("spheres2:{}", path.display())).unwrap_err().to_string();
    assert!(e.contains("closed surface") && e.contains("4 edge(s)"), "{e}");
}
