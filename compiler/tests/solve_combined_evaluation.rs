//! `MeshObjective::value_grad_hessian` (one evaluation for the energy, the gradient and the
//! Hessian values, which Newton asks for where it expects to need the Hessian) gives the bits
//! of `value_grad` and `hessian_values`, with and without the PSD projection; programs whose
//! pattern moves (pairs) or that have residual terms decline it. Plain mesh energies overwrite
//! the values they are given (`hessian_values_overwrite`), so stale buffers give the same bits.
//! Asked for the upper triangle alone (`HessianEntries::Upper`, what Newton's Cholesky reads),
//! they give those entries the same bits, and Newton's iterates do not change.

use mad::energy::{EnergyProgram, MeshObjective};
use mad_runtime::mesh::load_mesh;
use mad_runtime::solve::{
    HessianEntries, Newton, Objective, SolveError, SolveOptions, TranslationClasses,
};
use mad_runtime::sparse::CsrPattern;

/// Whether `a` and `b` have the same bits in every entry of `p`'s upper triangle.
fn same_upper(p: &CsrPattern, a: &[f64], b: &[f64]) -> bool {
    (0..p.n).all(|r| {
        (p.row_ptr[r]..p.row_ptr[r + 1]).all(|s| (p.col_idx[s] as usize) < r || a[s].to_bits() == b[s].to_bits())
    })
}

fn example(name: &str) -> String {
    let path = format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).unwrap()
}

/// Checks the combined evaluation against the separate ones at x0 and a perturbed point.
fn check_same_bits(src: &str, mesh: &str) {
    let prog = EnergyProgram::compile_str("t.mad", src).unwrap();
    let mesh = load_mesh(mesh).unwrap();
    let me = prog.bind(&mesh).unwrap();
    let x0 = me.initial_x().unwrap();
    let mut obj = MeshObjective::new(me, &x0).unwrap();
    let n = obj.num_dofs();
    let nnz = obj.hessian_pattern().unwrap().nnz();
    for (k, x) in [x0.clone(), x0.iter().enumerate().map(|(i, v)| v + 1e-3 * ((i * 7 % 5) as f64 - 2.0)).collect()]
        .iter()
        .enumerate()
    {
        for project in [false, true] {
            let (mut g1, mut h1) = (vec![0.0; n], vec![0.0; nnz]);
            let e1 = obj.value_grad(x, &mut g1).unwrap();
            obj.hessian_values(x, project, &mut h1).unwrap();
            let (mut g2, mut h2) = (vec![0.0; n], vec![0.0; nnz]);
            let e2 = obj
                .value_grad_hessian(x, &mut g2, project, &mut h2)
                .unwrap()
                .expect("offered for plain mesh energies");
            assert_eq!(e1.to_bits(), e2.to_bits(), "point {k}, project {project}: energy");
            assert!(g1.iter().zip(&g2).all(|(a, b)| a.to_bits() == b.to_bits()), "point {k}: gradient");
            assert!(h1.iter().zip(&h2).all(|(a, b)| a.to_bits() == b.to_bits()), "point {k}: Hessian");
            assert!(h2.iter().any(|&v| v != 0.0));
            // Plain mesh energies overwrite their values: a buffer of stale values gives
            // the same bits as a zeroed one (Newton skips zeroing it).
            assert!(obj.hessian_values_overwrite());
            let mut h3 = vec![1.0e3; nnz];
            obj.hessian_values(x, project, &mut h3).unwrap();
            assert!(h1.iter().zip(&h3).all(|(a, b)| a.to_bits() == b.to_bits()), "point {k}: stale values");
            let (mut g4, mut h4) = (vec![0.0; n], vec![-7.0; nnz]);
            obj.value_grad_hessian(x, &mut g4, project, &mut h4).unwrap();
            assert!(h1.iter().zip(&h4).all(|(a, b)| a.to_bits() == b.to_bits()), "point {k}: stale combined");
            // The upper triangle alone: the same bits there, from stale buffers too.
            let pattern = obj.hessian_pattern().unwrap().clone();
            let mut h5 = vec![5.0; nnz];
            obj.hessian_values_of(x, project, HessianEntries::Upper, &mut h5).unwrap();
            assert!(same_upper(&pattern, &h1, &h5), "point {k}, project {project}: upper triangle");
            let (mut g6, mut h6) = (vec![0.0; n], vec![-3.0; nnz]);
            let e6 = obj
                .value_grad_hessian_of(x, &mut g6, project, HessianEntries::Upper, &mut h6)
                .unwrap()
                .expect("offered for plain mesh energies");
            assert_eq!(e1.to_bits(), e6.to_bits(), "point {k}: energy (upper)");
            assert!(g1.iter().zip(&g6).all(|(a, b)| a.to_bits() == b.to_bits()), "point {k}: gradient (upper)");
            assert!(same_upper(&pattern, &h1, &h6), "point {k}, project {project}: combined upper triangle");
        }
    }
}

#[test]
fn the_parameterization_gets_the_same_bits() {
    check_same_bits(&example("param.mad"), "disk:6");
}

#[test]
fn the_cloth_on_a_sphere_gets_the_same_bits() {
    check_same_bits(&example("cloth_sphere.mad"), "grid:8x8");
}

#[test]
fn moving_patterns_and_residuals_decline() {
    for (src, mesh) in [
        (example("contact_barrier.mad"), "grid:4x4"),
        (example("fit_residual.mad"), "grid:4x4"),
    ] {
        let prog = EnergyProgram::compile_str("t.mad", &src).unwrap();
        let mesh = load_mesh(mesh).unwrap();
        let me = prog.bind(&mesh).unwrap();
        let x0 = me.initial_x().unwrap();
        let mut obj = MeshObjective::new(me, &x0).unwrap();
        let n = obj.num_dofs();
        let mut g = vec![0.0; n];
        let mut h = vec![0.0; obj.hessian_pattern().map_or(0, |p| p.nnz())];
        assert_eq!(obj.value_grad_hessian(&x0, &mut g, true, &mut h).unwrap(), None);
        assert!(!obj.hessian_values_overwrite(), "values merged into a pattern, or none: added");
        assert!(g.iter().all(|&v| v == 0.0), "nothing written");
    }
}

/// An objective that hides `hessian_values_of` and `value_grad_hessian_of`, so a solver gets
/// every entry of the Hessian values (the trait's defaults).
struct EveryEntry<'a>(&'a mut MeshObjective<'static>);

impl Objective for EveryEntry<'_> {
    fn num_dofs(&self) -> usize {
        self.0.num_dofs()
    }
    fn value(&mut self, x: &[f64]) -> Result<f64, SolveError> {
        self.0.value(x)
    }
    fn value_grad(&mut self, x: &[f64], grad: &mut [f64]) -> Result<f64, SolveError> {
        self.0.value_grad(x, grad)
    }
    fn hessian_pattern(&self) -> Option<&CsrPattern> {
        self.0.hessian_pattern()
    }
    fn hessian_pattern_generation(&self) -> Option<u64> {
        self.0.hessian_pattern_generation()
    }
    fn hessian_values(&mut self, x: &[f64], project_psd: bool, values: &mut [f64]) -> Result<(), SolveError> {
        self.0.hessian_values(x, project_psd, values)
    }
    fn hessian_values_overwrite(&self) -> bool {
        self.0.hessian_values_overwrite()
    }
    fn value_grad_hessian(
        &mut self,
        x: &[f64],
        grad: &mut [f64],
        project_psd: bool,
        values: &mut [f64],
    ) -> Result<Option<f64>, SolveError> {
        self.0.value_grad_hessian(x, grad, project_psd, values)
    }
    fn translation_classes(&self) -> Option<&TranslationClasses> {
        self.0.translation_classes()
    }
    fn update(&mut self, x: &mut [f64]) -> Result<bool, SolveError> {
        self.0.update(x)
    }
}

/// Projected Newton on the parameterization, asking for the upper triangle (as it does) and
/// for every entry: the same iterates bit for bit.
#[test]
fn newton_on_the_upper_triangle_takes_the_same_steps() {
    let prog: &'static EnergyProgram =
        Box::leak(Box::new(EnergyProgram::compile_str("t.mad", &example("param.mad")).unwrap()));
    let mesh: &'static _ = Box::leak(Box::new(load_mesh("disk:6").unwrap()));
    let opts = SolveOptions { max_iters: 12, ..Default::default() };
    let mut runs = Vec::new();
    for every in [false, true] {
        let me = prog.bind(mesh).unwrap();
        let mut x = me.initial_x().unwrap();
        let mut obj = MeshObjective::new(me, &x).unwrap();
        let mut energies = Vec::new();
        let mut cb = |it: &mad_runtime::solve::IterationInfo| {
            energies.push(it.energy.to_bits());
            mad_runtime::solve::Control::Continue
        };
        let mut newton = Newton::new();
        newton.project_psd = true;
        let rep = if every {
            newton.solve(&mut EveryEntry(&mut obj), &mut x, &opts, Some(&mut cb)).unwrap()
        } else {
            newton.solve(&mut obj, &mut x, &opts, Some(&mut cb)).unwrap()
        };
        assert!(rep.iterations >= 3, "{rep:?}");
        runs.push((x.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), energies));
    }
    assert_eq!(runs[0].1, runs[1].1, "energies per iteration");
    assert_eq!(runs[0].0, runs[1].0, "final point");
}
