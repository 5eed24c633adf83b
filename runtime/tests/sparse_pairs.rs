//! Pair patterns: incremental updates against from-scratch rebuilds, values in merged form.

use mad_runtime::mesh::generators::grid;
use mad_runtime::mesh::{Stencil, Topology};
use mad_runtime::sparse::{
    CsrPattern, ElementList, Field, HessianPattern, PairId, PairPattern, element_dofs,
};

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The pattern of the static terms plus the live pairs, built from scratch.
fn rebuild(
    ndofs: usize,
    statics: &[ElementList],
    pairs: &[Vec<u32>],
    fields: &[Field],
) -> CsrPattern {
    let mut terms = statics.to_vec();
    if !pairs.is_empty() {
        terms.push(element_dofs(&ElementList::from_slices(pairs), fields));
    }
    HessianPattern::build(ndofs, &terms).unwrap().csr
}

#[test]
fn random_add_remove_matches_rebuild() {
    let m = grid(6, 7);
    let nv = m.positions.len();
    let fields = vec![Field { offset: 0, dim: 3 }];
    let ndofs = 3 * nv;
    let statics = vec![element_dofs(
        &Topology::new(&m).unwrap().elements(Stencil::Edge),
        &fields,
    )];
    let base = HessianPattern::build(ndofs, &statics).unwrap().csr;
    for arity in [2usize, 4] {
        let mut pp = PairPattern::new(base.clone(), fields.clone(), nv, arity).unwrap();
        let mut rng = Lcg(42 + arity as u64);
        let mut live: Vec<(PairId, Vec<u32>)> = Vec::new();
        for step in 0..400 {
            if live.is_empty() || rng.below(3) != 0 {
                // Vertices anywhere (far pairs need overlay entries), sometimes repeated.
                let mut vs: Vec<u32> = (0..arity).map(|_| rng.below(nv) as u32).collect();
                if rng.below(10) == 0 {
                    vs[arity - 1] = vs[0];
                }
                let id = pp.add_pair(&vs).unwrap();
                live.push((id, vs));
            } else {
                let (id, _) = live.swap_remove(rng.below(live.len()));
                pp.remove_pair(id).unwrap();
            }
            if step % 20 == 0 || step == 399 {
                let vs: Vec<Vec<u32>> = live.iter().map(|(_, v)| v.clone()).collect();
                assert_eq!(
                    pp.to_csr(),
                    rebuild(ndofs, &statics, &vs, &fields),
                    "step {step}"
                );
                assert_eq!(pp.num_pairs(), live.len());
            }
        }
        // Removing everything brings the overlay back to empty.
        for (id, _) in live.drain(..) {
            pp.remove_pair(id).unwrap();
        }
        assert_eq!(pp.num_overlay_entries(), 0);
        assert_eq!(pp.to_csr(), base);
    }
}

#[test]
fn pair_values_land_where_a_dense_reference_puts_them() {
    let m = grid(4, 4);
    let nv = m.positions.len();
    let fields = vec![Field { offset: 0, dim: 2 }];
    let ndofs = 2 * nv;
    let statics = vec![element_dofs(
        &Topology::new(&m).unwrap().elements(Stencil::Face),
        &fields,
    )];
    let base = HessianPattern::build(ndofs, &statics).unwrap().csr;
    let mut pp = PairPattern::new(base, fields, nv, 2).unwrap();
    let a = pp.add_pair(&[0, 15]).unwrap();
    let b = pp.add_pair(&[1, 5]).unwrap(); // inside the static pattern
    let c = pp.add_pair(&[15, 0]).unwrap();
    pp.remove_pair(a).unwrap();
    let _d = pp.add_pair(&[3, 12]).unwrap();
    let block = |id: PairId, dofs: &[u32], out: &mut [f64]| {
        for (i, o) in out.iter_mut().enumerate() {
            *o = (id.0 as f64 + 1.0) * 10.0 + i as f64 + dofs[0] as f64 * 0.01;
        }
    };
    let mut values = vec![0.0; pp.num_values()];
    pp.assemble(&mut values, block).unwrap();
    let (csr, merged) = pp.merge_values(&values).unwrap();
    // Dense reference from the live pairs' dofs.
    let mut dense = vec![0.0; ndofs * ndofs];
    for id in pp.pair_ids() {
        let (_, dofs, _) = pp.pair(id).unwrap();
        let k = dofs.len();
        let mut out = vec![0.0; k * k];
        block(id, dofs, &mut out);
        for i in 0..k {
            for j in 0..k {
                dense[dofs[i] as usize * ndofs + dofs[j] as usize] += out[i * k + j];
            }
        }
    }
    let mut from_csr = vec![0.0; ndofs * ndofs];
    for r in 0..ndofs {
        for k in csr.row_ptr[r]..csr.row_ptr[r + 1] {
            from_csr[r * ndofs + csr.col_idx[k] as usize] = merged[k];
        }
    }
    assert_eq!(from_csr, dense);
    assert_eq!(pp.pair_ids(), {
        let mut v = vec![b, c, _d];
        v.sort();
        v
    });
}

#[test]
fn bad_pairs_are_errors() {
    let base = CsrPattern::empty(12);
    let mut pp = PairPattern::new(base.clone(), vec![Field { offset: 0, dim: 3 }], 4, 2).unwrap();
    assert!(pp.add_pair(&[0]).is_err());
    assert!(pp.add_pair(&[0, 4]).is_err());
    assert!(pp.remove_pair(PairId(0)).is_err());
    let id = pp.add_pair(&[0, 3]).unwrap();
    pp.remove_pair(id).unwrap();
    assert!(pp.remove_pair(id).is_err());
    assert!(PairPattern::new(base, vec![Field { offset: 0, dim: 3 }], 5, 2).is_err());
    let mut short = vec![0.0; pp.num_values() + 1];
    assert!(pp.assemble(&mut short, |_, _, _| {}).is_err());
}
