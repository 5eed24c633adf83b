//! Round trips, NumPy's variants, malformed files, and a fuzz: no input panics.

use super::*;
use crate::value::TensorData;
use proptest::prelude::*;

/// An `.npy` file with the given header text (a newline is added) and data bytes.
fn file(version: u8, header: &str, body: &[u8]) -> Vec<u8> {
    let mut b = b"\x93NUMPY".to_vec();
    b.extend([version, 0]);
    let h = format!("{header}\n");
    if version == 1 {
        b.extend((h.len() as u16).to_le_bytes());
    } else {
        b.extend((h.len() as u32).to_le_bytes());
    }
    b.extend(h.as_bytes());
    b.extend(body);
    b
}

fn f8(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn bytes_of(t: &Tensor) -> Vec<u8> {
    let mut b = Vec::new();
    write(&mut b, t).unwrap();
    b
}

#[test]
fn round_trips_every_kind_and_rank() {
    let cases = [
        Tensor { shape: vec![], data: TensorData::F64(vec![-0.5]) },
        Tensor { shape: vec![3], data: TensorData::F64(vec![1e-300, f64::NAN, -0.0]) },
        Tensor { shape: vec![2, 3], data: TensorData::F64((0..6).map(|i| i as f64 / 7.0).collect()) },
        Tensor { shape: vec![0], data: TensorData::F64(vec![]) },
        Tensor { shape: vec![2, 0], data: TensorData::I64(vec![]) },
        Tensor { shape: vec![2, 1, 2], data: TensorData::I64(vec![i64::MIN, -1, 0, i64::MAX]) },
        Tensor { shape: vec![2], data: TensorData::F32(vec![0.1, -3.5]) },
        Tensor { shape: vec![3], data: TensorData::Bool(vec![true, false, true]) },
        Tensor { shape: vec![], data: TensorData::I64(vec![7]) },
    ];
    for t in cases {
        let b = bytes_of(&t);
        // The layout NumPy writes: version 1.0, header padded to 64 bytes, ending in '\n'.
        assert_eq!(&b[..8], b"\x93NUMPY\x01\x00");
        let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
        assert_eq!((10 + hlen) % 64, 0);
        assert_eq!(b[10 + hlen - 1], b'\n');
        let back = read(&b).unwrap();
        assert_eq!(back.shape, t.shape);
        // NaN != NaN: compare the bytes written again.
        assert_eq!(bytes_of(&back), b, "{t:?}");
    }
    let header = String::from_utf8_lossy(&bytes_of(&Tensor::vector(vec![1.0, 2.0]))[10..]).into_owned();
    assert!(header.starts_with("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }"), "{header}");
    let zero_d = String::from_utf8_lossy(&bytes_of(&Tensor { shape: vec![], data: TensorData::I64(vec![3]) })).into_owned();
    assert!(zero_d.contains("'descr': '<i8'") && zero_d.contains("'shape': ()"), "{zero_d}");
}

#[test]
fn a_wrong_data_length_is_not_written() {
    let t = Tensor { shape: vec![2, 2], data: TensorData::F64(vec![1.0]) };
    assert!(matches!(write(&mut Vec::new(), &t), Err(NpyError::Shape(_))));
    assert!(write_npy(&[5, 3], &[1.0; 4], Vec::new()).is_err());
}

#[test]
fn reads_numpy_variants() {
    let v = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    // Versions 2.0 and 3.0, double quotes, keys in another order, no trailing comma.
    for version in [2, 3] {
        let b = file(version, "{\"shape\": (6,), 'fortran_order': False, 'descr': '<f8'}", &f8(&v));
        assert_eq!(read(&b).unwrap(), Tensor::vector(v.to_vec()));
    }
    // Python 2's long integers in the shape.
    let b = file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2L, 3L), }", &f8(&v));
    assert_eq!(read(&b).unwrap().shape, vec![2, 3]);
    // Fortran order is transposed: column-major 2×3 [[1,3,5],[2,4,6]].
    let b = file(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", &f8(&v));
    assert_eq!(read(&b).unwrap().data, TensorData::F64(vec![1.0, 3.0, 5.0, 2.0, 4.0, 6.0]));
    // 3-D Fortran order, shape (2, 1, 3): element (i, 0, k) is stored at i + 2k.
    let b = file(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 1, 3), }", &f8(&v));
    assert_eq!(read(&b).unwrap().data, TensorData::F64(vec![1.0, 3.0, 5.0, 2.0, 4.0, 6.0]));
}

#[test]
fn reads_every_supported_dtype() {
    let h = |d: &str, n: usize| format!("{{'descr': '{d}', 'fortran_order': False, 'shape': ({n},), }}");
    let f4: Vec<u8> = [0.5f32, -2.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(read(&file(1, &h("<f4", 2), &f4)).unwrap().data, TensorData::F32(vec![0.5, -2.0]));
    let i4: Vec<u8> = [-7i32, 9].iter().flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(read(&file(1, &h("<i4", 2), &i4)).unwrap().data, TensorData::I64(vec![-7, 9]));
    let u4: Vec<u8> = [u32::MAX].iter().flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(read(&file(1, &h("<u4", 1), &u4)).unwrap().data, TensorData::I64(vec![u32::MAX as i64]));
    let i8: Vec<u8> = [i64::MIN].iter().flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(read(&file(1, &h("<i8", 1), &i8)).unwrap().data, TensorData::I64(vec![i64::MIN]));
    assert_eq!(read(&file(1, &h("|b1", 3), &[0, 1, 2])).unwrap().data, TensorData::Bool(vec![false, true, true]));
    let u8_big = u64::MAX.to_le_bytes();
    let e = read(&file(1, &h("<u8", 1), &u8_big)).unwrap_err();
    assert!(e.to_string().contains("does not fit an i64"), "{e}");
    // The f64 view: integers as exact values.
    assert_eq!(read_npy(&file(1, &h("<i4", 2), &i4)).unwrap().data, vec![-7.0, 9.0]);
}

#[test]
fn malformed_files_are_clear_errors() {
    let ok = bytes_of(&Tensor::vector(vec![1.0, 2.0]));
    let h = |d: &str, shape: &str| format!("{{'descr': '{d}', 'fortran_order': False, 'shape': {shape}, }}");
    let err = |b: &[u8]| read(b).unwrap_err();
    assert_eq!(err(b"PK\x03\x04 a zip"), NpyError::Magic);
    assert_eq!(err(b""), NpyError::Magic);
    assert_eq!(err(b"\x93NUMPY\x04\x00\x10\x00"), NpyError::Version(4, 0));
    // Cut anywhere inside the header: a truncated header.
    for cut in [7, 9, 11, 40] {
        let e = err(&ok[..cut]);
        assert!(e.to_string().contains("truncated"), "{cut}: {e}");
    }
    // Cut inside the data, or with bytes after it.
    let e = err(&ok[..ok.len() - 3]);
    assert_eq!(e, NpyError::Data { expected: 16, found: 13 });
    assert!(e.to_string().contains("truncated data"), "{e}");
    let mut long = ok.clone();
    long.push(0);
    assert!(err(&long).to_string().contains("1 bytes after the data"));
    assert_eq!(err(&file(1, &h("<i2", "(1,)"), &[0, 0])), NpyError::Dtype("<i2".into()));
    assert_eq!(err(&file(1, &h(">f8", "(1,)"), &f8(&[1.0]))), NpyError::BigEndian(">f8".into()));
    assert!(err(&file(1, &h(">f8", "(1,)"), &[])).to_string().contains("big-endian"));
    let structured = "{'descr': [('x', '<f8')], 'fortran_order': False, 'shape': (1,), }";
    assert!(matches!(err(&file(1, structured, &f8(&[1.0]))), NpyError::Dtype(_)));
    for bad in [
        "not a dict",
        "{'descr': '<f8', 'shape': (1,), }",
        "{'descr': '<f8', 'fortran_order': False, }",
        "{'fortran_order': False, 'shape': (1,), }",
        "{'descr': '<f8', 'fortran_order': 0, 'shape': (1,), }",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (-1,), }",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (1 2), }",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (1,) 'x': 1}",
        "{'descr': '<f8, 'fortran_order': False, 'shape': (1,), }",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), } trailing",
    ] {
        assert!(matches!(err(&file(1, bad, &f8(&[1.0]))), NpyError::Header(_)), "{bad}");
    }
    // A shape that lies about the size: refused before any allocation.
    let huge = h("<f8", "(18446744073709551615, 18446744073709551615)");
    assert!(err(&file(1, &huge, &f8(&[1.0]))).to_string().contains("too large"));
    let big = h("<f8", "(4000000000000,)");
    assert!(matches!(err(&file(1, &big, &f8(&[1.0]))), NpyError::Data { .. }));
    // Not UTF-8 text.
    assert!(matches!(err(&file(1, "{\u{0}", &[])), NpyError::Header(_)));
    let mut latin = file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", &f8(&[1.0]));
    latin[12] = 0xff;
    assert!(matches!(err(&latin), NpyError::Header(_)));
}

#[test]
fn files_and_values() {
    let dir = std::env::temp_dir().join(format!("mad-npy-unit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("m.npy");
    let m = Value::Tensor(Tensor::from_f64(vec![2, 2], vec![1.0, 2.0, 3.0, 4.0]).unwrap());
    save_value(&p, &m).unwrap();
    assert_eq!(load_value(&p).unwrap(), m);
    save_value(&p, &Value::F64(2.5)).unwrap();
    assert_eq!(load_value(&p).unwrap(), Value::F64(2.5));
    assert!(save_value(&p, &Value::Tuple(vec![Value::F64(1.0)])).is_err());
    assert!(matches!(load(dir.join("missing.npy")), Err(NpyError::Io(_))));
    assert!(matches!(load(&dir), Err(NpyError::Io(_))));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn fields_accept_both_layouts() {
    let a = read_npy(&bytes_of(&Tensor::from_f64(vec![2, 3], vec![0.0; 6]).unwrap())).unwrap();
    assert_eq!(a.clone().into_field(2, 3).unwrap().len(), 6);
    let e = a.into_field(3, 2).unwrap_err();
    assert!(e.to_string().contains("(2, 3), expected (3, 2) or (6,)"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = read(&bytes);
        let mut with_magic = b"\x93NUMPY\x01\x00".to_vec();
        with_magic.extend(&bytes);
        let _ = read(&with_magic);
    }

    #[test]
    fn corrupted_files_never_panic(
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
        cut in any::<usize>(),
    ) {
        let t = Tensor::from_f64(vec![2, 3], (0..6).map(f64::from).collect()).unwrap();
        let mut b = bytes_of(&t);
        for (at, byte) in edits {
            let i = at % b.len();
            b[i] = byte;
        }
        let _ = read(&b);
        let _ = read(&b[..cut % (b.len() + 1)]);
    }

    #[test]
    fn headers_of_arbitrary_text_never_panic(text in "\\PC{0,80}") {
        let _ = read(&file(1, &text, &[0; 16]));
        let _ = read(&file(3, &format!("{{'descr': '<f8', 'fortran_order': False, 'shape': {text}}}"), &[0; 16]));
    }

    #[test]
    fn f64_arrays_round_trip(values in proptest::collection::vec(any::<f64>(), 0..40), cols in 1usize..5) {
        let rows = values.len() / cols;
        let data: Vec<f64> = values[..rows * cols].to_vec();
        let t = Tensor::from_f64(vec![rows, cols], data.clone()).unwrap();
        let back = read(&bytes_of(&t)).unwrap();
        prop_assert_eq!(&back.shape, &vec![rows, cols]);
        let back_bits: Vec<u64> = back.as_f64().unwrap().iter().map(|x| x.to_bits()).collect();
        let bits: Vec<u64> = data.iter().map(|x| x.to_bits()).collect();
        prop_assert_eq!(back_bits, bits);
    }
}
