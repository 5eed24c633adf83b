//! A mass-spring grid written by hand (edge springs, 2-D positions) through the runtime's
//! `HessianPattern` and `assemble`: the sparse Newton path, projected Newton, fixed dofs.


use mad_runtime::solve::{Newton, Objective, SolveError, SolveOptions, Status};
use mad_runtime::sparse::{
    CsrPattern, ElementList, Field, HessianPattern, Outputs, assemble, element_dofs,
};

struct Springs {
    ndofs: usize,
    pattern: HessianPattern,
    rest: Vec<f64>,
    k: f64,
    gravity: f64,
}

/// One spring's energy ½k(|d| − L)², gradient and Hessian over its 4 dofs (x_a, y_a, x_b, y_b);
/// with `psd`, the negative-curvature part is clamped (coefficient max(0, 1 − L/|d|)).
fn spring(x: &[f64; 4], rest: f64, k: f64, psd: bool, g: &mut [f64], h: &mut [f64]) -> f64 {
    let d = [x[2] - x[0], x[3] - x[1]];
    let len = (d[0] * d[0] + d[1] * d[1]).sqrt();
    let s = len - rest;
    let u = [d[0] / len, d[1] / len];
    let mut c = 1.0 - rest / len;
    if psd {
        c = c.max(0.0);
    }
    for a in 0..2 {
        g[a] -= k * s * u[a];
        g[2 + a] += k * s * u[a];
    }
    for a in 0..2 {
        for b in 0..2 {
            let id = if a == b { 1.0 } else { 0.0 };
            let kab = k * (u[a] * u[b] + c * (id - u[a] * u[b]));
            h[a * 4 + b] += kab;
            h[(a + 2) * 4 + b + 2] += kab;
            h[a * 4 + b + 2] -= kab;
            h[(a + 2) * 4 + b] -= kab;
        }
    }
    0.5 * k * s * s
}

impl Springs {
    fn grid(n: usize, spacing: f64, rest_scale: f64, gravity: f64) -> (Springs, Vec<f64>) {
        let id = |i: usize, j: usize| (i * n + j) as u32;
        let mut edges = Vec::new();
        for i in 0..n {
            for j in 0..n {
                if j + 1 < n {
                    edges.extend([id(i, j), id(i, j + 1)]);
                }
                if i + 1 < n {
                    edges.extend([id(i, j), id(i + 1, j)]);
                }
            }
        }
        let elements = ElementList::fixed(2, edges);
        let dofs = element_dofs(&elements, &[Field { offset: 0, dim: 2 }]);
        let ndofs = 2 * n * n;
        let pattern = HessianPattern::build(ndofs, &[dofs]).unwrap();
        let mut x = vec![0.0; ndofs];
        for i in 0..n {
            for j in 0..n {
                x[2 * (i * n + j)] = j as f64 * spacing;
                x[2 * (i * n + j) + 1] = -(i as f64) * spacing;
            }
        }
        let rest = vec![spacing * rest_scale; elements.len()];
        (
            Springs {
                ndofs,
                pattern,
                rest,
                k: 100.0,
                gravity,
            },
            x,
        )
    }

    fn eval(
        &self,
        x: &[f64],
        grad: Option<&mut [f64]>,
        hess: Option<&mut [f64]>,
        psd: bool,
    ) -> f64 {
        let term = &self.pattern.terms[0];
        let kernel = |e: usize, d: &[u32], g: &mut [f64], h: &mut [f64]| {
            let xe = [
                x[d[0] as usize],
                x[d[1] as usize],
                x[d[2] as usize],
                x[d[3] as usize],
            ];
            spring(&xe, self.rest[e], self.k, psd, g, h)
        };
        let nnz = self.pattern.csr.nnz();
        let mut e = assemble(term, self.ndofs, nnz, &kernel, Outputs { grad, hess }, true).unwrap();
        // Gravity on y, unit masses.
        e += (0..self.ndofs / 2)
            .map(|v| self.gravity * x[2 * v + 1])
            .sum::<f64>();
        e
    }
}

impl Objective for Springs {
    fn num_dofs(&self) -> usize {
        self.ndofs
    }
    fn value(&mut self, x: &[f64]) -> Result<f64, SolveError> {
        Ok(self.eval(x, None, None, false))
    }
    fn value_grad(&mut self, x: &[f64], g: &mut [f64]) -> Result<f64, SolveError> {
        let e = self.eval(x, Some(&mut *g), None, false);
        for v in 0..self.ndofs / 2 {
            g[2 * v + 1] += self.gravity;
        }
        Ok(e)
    }
    fn hessian_pattern(&self) -> Option<&CsrPattern> {
        Some(&self.pattern.csr)
    }
    fn hessian_values(
        &mut self,
        x: &[f64],
        psd: bool,
        values: &mut [f64],
    ) -> Result<(), SolveError> {
        self.eval(x, None, Some(values), psd);
        Ok(())
    }
}

#[test]
fn stretched_grid_relaxes_to_rest_shape_energy_zero() {
    // Springs of rest length 1 on a grid laid out at spacing 1.3, nothing pinned: the minimum
    // energy is 0, with every spring at its rest length.
    let n = 6;
    let (mut obj, mut x) = Springs::grid(n, 1.3, 1.0 / 1.3, 0.0);
    let mut newton = Newton::new();
    let rep = newton
        .solve(&mut obj, &mut x, &SolveOptions::default(), None)
        .unwrap();
    assert_eq!(rep.status, Status::GradientTolerance);
    assert!(rep.energy < 1e-16, "{}", rep.energy);
    assert_eq!(newton.symbolic_factorizations(), 1);
    // Every spring at its rest length 1.
    let p = |v: usize| (x[2 * v], x[2 * v + 1]);
    for i in 0..n {
        for j in 0..n - 1 {
            let (a, b) = (p(i * n + j), p(i * n + j + 1));
            assert!(((a.0 - b.0).hypot(a.1 - b.1) - 1.0).abs() < 1e-6);
        }
    }
}

#[test]
fn hanging_grid_is_in_static_equilibrium() {
    // Top corners pinned, gravity 1 per unit mass: by translation invariance of the spring
    // energy, the springs pull the pinned vertices down with the weight of the n² − 2 free
    // vertices, and the result is mirror-symmetric about the middle column.
    let n = 5;
    for (project_psd, name) in [(false, "newton"), (true, "projected newton")] {
        let (mut obj, mut x) = Springs::grid(n, 1.0, 0.9, 1.0);
        let mut fixed = vec![false; 2 * n * n];
        for v in [0, n - 1] {
            fixed[2 * v] = true;
            fixed[2 * v + 1] = true;
        }
        let opts = SolveOptions {
            fixed: Some(fixed),
            grad_abs_tol: 1e-9,
            ..Default::default()
        };
        let mut newton = Newton::new();
        newton.project_psd = project_psd;
        let rep = newton.solve(&mut obj, &mut x, &opts, None).unwrap();
        assert_eq!(rep.status, Status::GradientTolerance, "{name}");
        eprintln!("{name}: {} iterations", rep.iterations);
        // Measured: 7 iterations with and without projection.
        assert!(rep.iterations <= 15, "{name}: {}", rep.iterations);
        assert_eq!((x[0], x[1]), (0.0, 0.0));
        let mut g = vec![0.0; 2 * n * n];
        obj.eval(&x, Some(&mut g), None, false);
        let pull: f64 = [0, n - 1].iter().map(|&v| g[2 * v + 1]).sum();
        assert!((pull - (n * n - 2) as f64).abs() < 1e-6, "{name}: {pull}");
        for i in 0..n {
            for j in 0..n {
                let (a, b) = (i * n + j, i * n + (n - 1 - j));
                assert!(
                    (x[2 * a] + x[2 * b] - (n - 1) as f64).abs() < 1e-6,
                    "{name}"
                );
                assert!((x[2 * a + 1] - x[2 * b + 1]).abs() < 1e-6, "{name}");
            }
        }
    }
}
