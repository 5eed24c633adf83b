//! CSR patterns against brute-force dense patterns, slots, assembly against a dense reference,
//! and bit-identical results across thread counts.

use mad_runtime::mesh::generators::{grid, icosphere};
use mad_runtime::mesh::{Mesh, Stencil, Topology};
use mad_runtime::sparse::{
    Coloring, CsrPattern, ElementList, Field, HessianPattern, Outputs, assemble, element_dofs,
    scatter_blocks, scatter_gradients,
};

fn dense_pattern(ndofs: usize, terms: &[ElementList]) -> Vec<bool> {
    let mut d = vec![false; ndofs * ndofs];
    for t in terms {
        for e in t.iter() {
            for &r in e {
                for &c in e {
                    d[r as usize * ndofs + c as usize] = true;
                }
            }
        }
    }
    d
}

fn csr_to_dense_mask(p: &CsrPattern) -> Vec<bool> {
    let mut d = vec![false; p.n * p.n];
    for r in 0..p.n {
        for &c in p.row(r) {
            d[r * p.n + c as usize] = true;
        }
    }
    d
}

fn terms_for(mesh: &Mesh, stencils: &[Stencil], fields: &[Field]) -> Vec<ElementList> {
    let t = Topology::new(mesh).unwrap();
    stencils
        .iter()
        .map(|&s| element_dofs(&t.elements(s), fields))
        .collect()
}

#[test]
fn element_dofs_layout_is_field_major_vertex_major() {
    let els = ElementList::fixed(2, vec![3, 5]);
    let d = element_dofs(
        &els,
        &[Field { offset: 0, dim: 3 }, Field { offset: 30, dim: 2 }],
    );
    assert_eq!(d.get(0), &[9, 10, 11, 15, 16, 17, 36, 37, 40, 41]);
}

#[test]
fn patterns_match_brute_force_and_slots_point_at_their_entries() {
    let x3 = [Field { offset: 0, dim: 3 }];
    let cases: Vec<(Mesh, Vec<Stencil>, Vec<Field>)> = vec![
        (grid(4, 5), vec![Stencil::Edge], x3.to_vec()),
        (
            grid(4, 4),
            vec![Stencil::Face, Stencil::Diamond],
            x3.to_vec(),
        ),
        (grid(5, 3), vec![Stencil::Ring], x3.to_vec()),
        (
            icosphere(1),
            vec![Stencil::Vertex, Stencil::Edge, Stencil::Ring],
            x3.to_vec(),
        ),
        (
            grid(3, 4),
            vec![Stencil::Face],
            vec![Field { offset: 0, dim: 2 }, Field { offset: 24, dim: 1 }],
        ),
    ];
    for (mesh, stencils, fields) in cases {
        let ndofs = fields
            .iter()
            .map(|f| f.offset + f.dim * mesh.positions.len())
            .max()
            .unwrap();
        let terms = terms_for(&mesh, &stencils, &fields);
        let hp = HessianPattern::build(ndofs, &terms).unwrap();
        assert_eq!(
            csr_to_dense_mask(&hp.csr),
            dense_pattern(ndofs, &terms),
            "{stencils:?}"
        );
        for r in 0..hp.csr.n {
            assert!(hp.csr.row(r).windows(2).all(|w| w[0] < w[1]));
        }
        // Row of each slot, found independently from row_ptr.
        let row_of = |s: usize| hp.csr.row_ptr.partition_point(|&p| p <= s) - 1;
        for ts in &hp.terms {
            for e in 0..ts.len() {
                let dofs = ts.dofs().get(e);
                let k = dofs.len();
                let slots = ts.slots().get(e);
                assert_eq!(slots.len(), k * k);
                for a in 0..k {
                    for b in 0..k {
                        let s = slots[a * k + b] as usize;
                        assert_eq!((row_of(s), hp.csr.col_idx[s]), (dofs[a] as usize, dofs[b]));
                    }
                }
            }
            // Schedule: chunks partition the elements, no shared dof within a colour.
            for c in [
                ts.coloring().clone(),
                Coloring::with_chunk_size(ts.dofs(), ndofs, 1),
                Coloring::with_chunk_size(ts.dofs(), ndofs, 5),
            ] {
                let mut all: Vec<usize> = c
                    .chunks
                    .iter()
                    .flat_map(|&ch| c.chunk_elements(ch))
                    .collect();
                all.sort_unstable();
                assert_eq!(all, (0..ts.len()).collect::<Vec<_>>());
                for col in 0..c.num_colours() {
                    let mut seen = std::collections::HashSet::new();
                    for &ch in c.colour(col) {
                        let mut mine = std::collections::HashSet::new();
                        for e in c.chunk_elements(ch) {
                            mine.extend(ts.dofs().get(e).iter().copied());
                        }
                        for d in mine {
                            assert!(seen.insert(d), "dof {d} in two chunks of colour {col}");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn w1_nnz_matches_the_benchmark_formula() {
    let n = 20;
    let m = grid(n, n);
    let terms = terms_for(&m, &[Stencil::Edge], &[Field { offset: 0, dim: 3 }]);
    let hp = HessianPattern::build(3 * n * n, &terms).unwrap();
    let (v, e) = (n * n, 2 * n * (n - 1) + (n - 1) * (n - 1));
    assert_eq!(hp.csr.nnz(), 9 * (v + 2 * e));
}

#[test]
fn build_rejects_out_of_range_dofs() {
    let t = ElementList::fixed(2, vec![0, 7]);
    assert!(HessianPattern::build(5, &[t]).is_err());
}

/// A deterministic pseudo-random value for (element, local index).
fn val(e: usize, i: usize) -> f64 {
    let x = ((e as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (i as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F))
        >> 11;
    (x as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
}

fn kernel(e: usize, dofs: &[u32], g: &mut [f64], h: &mut [f64]) -> f64 {
    let k = dofs.len();
    for a in 0..k {
        g[a] = val(e, a) * (1.0 + dofs[a] as f64).sqrt();
        for b in 0..k {
            h[a * k + b] = val(e, 1000 + a.min(b) * k + a.max(b)) / 3.0;
        }
    }
    val(e, 99_999) * 0.1
}

#[test]
fn assembly_matches_a_dense_reference() {
    let m = icosphere(2);
    let fields = [Field { offset: 0, dim: 3 }];
    let terms = terms_for(
        &m,
        &[Stencil::Face, Stencil::Ring, Stencil::Diamond],
        &fields,
    );
    let ndofs = 3 * m.positions.len();
    let hp = HessianPattern::build(ndofs, &terms).unwrap();
    let nnz = hp.csr.nnz();
    let mut grad = vec![0.0; ndofs];
    let mut hess = vec![0.0; nnz];
    let mut energy = 0.0;
    // Dense reference computed straight from the element lists.
    let mut dg = vec![0.0; ndofs];
    let mut dh = vec![0.0; ndofs * ndofs];
    let mut de = 0.0;
    for (t, ts) in hp.terms.iter().enumerate() {
        energy += assemble(
            ts,
            ndofs,
            nnz,
            &kernel,
            Outputs {
                grad: Some(&mut grad),
                hess: Some(&mut hess),
            },
            true,
        )
        .unwrap();
        for (e, dofs) in terms[t].iter().enumerate() {
            let k = dofs.len();
            let (mut g, mut h) = (vec![0.0; k], vec![0.0; k * k]);
            de += kernel(e, dofs, &mut g, &mut h);
            for a in 0..k {
                dg[dofs[a] as usize] += g[a];
                for b in 0..k {
                    dh[dofs[a] as usize * ndofs + dofs[b] as usize] += h[a * k + b];
                }
            }
        }
    }
    assert!((energy - de).abs() <= 1e-12 * de.abs().max(1.0));
    for i in 0..ndofs {
        assert!((grad[i] - dg[i]).abs() <= 1e-12 * (1.0 + dg[i].abs()));
    }
    let mut from_csr = vec![0.0; ndofs * ndofs];
    for r in 0..ndofs {
        for k in hp.csr.row_ptr[r]..hp.csr.row_ptr[r + 1] {
            from_csr[r * ndofs + hp.csr.col_idx[k] as usize] = hess[k];
        }
    }
    for i in 0..ndofs * ndofs {
        assert!(
            (from_csr[i] - dh[i]).abs() <= 1e-12 * (1.0 + dh[i].abs()),
            "entry {i}"
        );
    }
    // spmv against the dense product.
    let x: Vec<f64> = (0..ndofs).map(|i| val(7, i)).collect();
    let mut y = vec![0.0; ndofs];
    hp.csr.spmv(&hess, &x, &mut y);
    for r in 0..ndofs {
        let yd: f64 = (0..ndofs).map(|c| dh[r * ndofs + c] * x[c]).sum();
        assert!((y[r] - yd).abs() <= 1e-10);
    }
}

#[test]
fn scatter_of_precomputed_blocks_matches_kernel_assembly() {
    let m = grid(6, 6);
    let terms = terms_for(&m, &[Stencil::Edge], &[Field { offset: 0, dim: 3 }]);
    let ndofs = 108;
    let hp = HessianPattern::build(ndofs, &terms).unwrap();
    let ts = &hp.terms[0];
    let (mut blocks, mut grads) = (Vec::new(), Vec::new());
    for (e, dofs) in ts.dofs().iter().enumerate() {
        let k = dofs.len();
        let (mut g, mut h) = (vec![0.0; k], vec![0.0; k * k]);
        kernel(e, dofs, &mut g, &mut h);
        grads.extend(g);
        blocks.extend(h);
    }
    let mut v1 = vec![0.0; hp.csr.nnz()];
    let mut g1 = vec![0.0; ndofs];
    scatter_blocks(ts, &blocks, &mut v1).unwrap();
    scatter_gradients(ts, &grads, &mut g1).unwrap();
    let mut v2 = vec![0.0; hp.csr.nnz()];
    let mut g2 = vec![0.0; ndofs];
    assemble(
        ts,
        ndofs,
        hp.csr.nnz(),
        &kernel,
        Outputs {
            grad: Some(&mut g2),
            hess: Some(&mut v2),
        },
        false,
    )
    .unwrap();
    for (a, b) in v1.iter().zip(&v2).chain(g1.iter().zip(&g2)) {
        assert!((a - b).abs() <= 1e-14 * (1.0 + a.abs()));
    }
    assert!(scatter_blocks(ts, &blocks[1..], &mut v1).is_err());
    assert!(scatter_gradients(ts, &grads, &mut g1[1..]).is_err());
}

#[test]
fn wrong_buffer_lengths_are_errors() {
    let m = grid(3, 3);
    let terms = terms_for(&m, &[Stencil::Edge], &[Field { offset: 0, dim: 3 }]);
    let hp = HessianPattern::build(27, &terms).unwrap();
    let nnz = hp.csr.nnz();
    let mut g = vec![0.0; 26];
    let r = assemble(
        &hp.terms[0],
        27,
        nnz,
        &kernel,
        Outputs {
            grad: Some(&mut g),
            hess: None,
        },
        true,
    );
    assert!(r.is_err());
    let mut h = vec![0.0; nnz + 1];
    let r = assemble(
        &hp.terms[0],
        27,
        nnz,
        &kernel,
        Outputs {
            grad: None,
            hess: Some(&mut h),
        },
        true,
    );
    assert!(r.is_err());
}

fn run_with_threads(
    threads: Option<usize>,
    hp: &HessianPattern,
    ndofs: usize,
) -> (u64, Vec<u64>, Vec<u64>) {
    let nnz = hp.csr.nnz();
    let go = || {
        let mut g = vec![0.0; ndofs];
        let mut h = vec![0.0; nnz];
        let mut e = 0.0;
        for ts in &hp.terms {
            e += assemble(
                ts,
                ndofs,
                nnz,
                &kernel,
                Outputs {
                    grad: Some(&mut g),
                    hess: Some(&mut h),
                },
                threads.is_some(),
            )
            .unwrap();
        }
        (
            e.to_bits(),
            g.iter().map(|v| v.to_bits()).collect(),
            h.iter().map(|v| v.to_bits()).collect(),
        )
    };
    match threads {
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
            .install(go),
        None => go(),
    }
}

#[test]
fn assembly_is_bit_identical_across_runs_and_thread_counts() {
    let m = grid(40, 40);
    let terms = terms_for(
        &m,
        &[Stencil::Edge, Stencil::Ring, Stencil::Face],
        &[Field { offset: 0, dim: 3 }],
    );
    let ndofs = 3 * m.positions.len();
    let hp = HessianPattern::build(ndofs, &terms).unwrap();
    let serial = run_with_threads(None, &hp, ndofs);
    for threads in [1, 2, 4, 4, 3] {
        assert!(
            run_with_threads(Some(threads), &hp, ndofs) == serial,
            "{threads} threads"
        );
    }
}
