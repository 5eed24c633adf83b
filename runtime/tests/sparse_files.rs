//! `.npy` and Matrix Market files, read back by small parsers written here.

use mad_runtime::npy::{read_npy, write_npy};
use mad_runtime::sparse::{CsrPattern, write_matrix_market};

/// An independent .npy v1 reader: magic, header dict by string search, little-endian f64 body.
fn parse_npy(bytes: &[u8]) -> (String, Vec<f64>) {
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
    let hlen = bytes[8] as usize | (bytes[9] as usize) << 8;
    assert_eq!((10 + hlen) % 64, 0, "header padded to 64 bytes");
    let header = std::str::from_utf8(&bytes[10..10 + hlen]).unwrap();
    assert!(header.ends_with('\n'));
    assert!(header.contains("'descr': '<f8'") && header.contains("'fortran_order': False"));
    let shape = header
        .split("'shape': ")
        .nth(1)
        .unwrap()
        .split(')')
        .next()
        .unwrap()
        .to_string()
        + ")";
    let data = bytes[10 + hlen..]
        .chunks(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    (shape, data)
}

fn npy_bytes(header: &str, data: &[f64], version: u8) -> Vec<u8> {
    let mut h = header.to_string();
    h.push('\n');
    let mut b = b"\x93NUMPY".to_vec();
    b.push(version);
    b.push(0);
    if version == 1 {
        b.extend_from_slice(&(h.len() as u16).to_le_bytes());
    } else {
        b.extend_from_slice(&(h.len() as u32).to_le_bytes());
    }
    b.extend_from_slice(h.as_bytes());
    for v in data {
        b.extend_from_slice(&v.to_le_bytes());
    }
    b
}

#[test]
fn npy_round_trip_and_independent_parse() {
    let data: Vec<f64> = (0..12)
        .map(|i| (i as f64).sin() * 1e-300 + i as f64 / 7.0)
        .collect();
    for shape in [vec![4usize, 3], vec![12]] {
        let mut buf = Vec::new();
        write_npy(&shape, &data, &mut buf).unwrap();
        let (s, d) = parse_npy(&buf);
        assert_eq!(s, if shape.len() == 2 { "(4, 3)" } else { "(12,)" });
        assert_eq!(d, data);
        let a = read_npy(&buf).unwrap();
        assert_eq!((a.shape, a.data), (shape, data.clone()));
    }
    assert!(write_npy(&[5, 3], &data, Vec::new()).is_err());
}

#[test]
fn npy_reader_accepts_numpy_variants() {
    // Version 2, Fortran order, double-quoted keys in another order.
    let d = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]; // column-major 2x3: [[1,3,5],[2,4,6]]
    let b = npy_bytes(
        "{\"shape\": (2, 3), 'fortran_order': True, 'descr': '<f8'}",
        &d,
        2,
    );
    let a = read_npy(&b).unwrap();
    assert_eq!(a.shape, vec![2, 3]);
    assert_eq!(a.data, vec![1.0, 3.0, 5.0, 2.0, 4.0, 6.0]);
    let field = read_npy(&npy_bytes(
        "{'descr': '<f8', 'fortran_order': False, 'shape': (6,), }",
        &d,
        1,
    ))
    .unwrap()
    .into_field(2, 3)
    .unwrap();
    assert_eq!(field, d);
}

#[test]
fn matrix_market_is_read_back_by_a_small_parser() {
    let p = CsrPattern {
        n: 3,
        row_ptr: vec![0, 2, 2, 4],
        col_idx: vec![0, 2, 1, 2],
    };
    let vals = [1.5, -0.1, 1e-300, 3.0];
    let mut buf = Vec::new();
    write_matrix_market(&p, &vals, &mut buf).unwrap();
    let text = String::from_utf8(buf).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("%%MatrixMarket matrix coordinate real general")
    );
    let dims: Vec<usize> = lines
        .next()
        .unwrap()
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect();
    assert_eq!(dims, vec![3, 3, 4]);
    let entries: Vec<(usize, usize, f64)> = lines
        .map(|l| {
            let t: Vec<&str> = l.split_whitespace().collect();
            (
                t[0].parse().unwrap(),
                t[1].parse().unwrap(),
                t[2].parse().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        entries,
        vec![(1, 1, 1.5), (1, 3, -0.1), (3, 2, 1e-300), (3, 3, 3.0)]
    );
    assert!(write_matrix_market(&p, &vals[..3], Vec::new()).is_err());
}
