//! Newton keeps the Hessian pattern of an objective that reports pattern generations and
//! takes a new one when the generation changes; a solver reused on another objective (whose
//! generations differ, `next_pattern_generation`) never mistakes one pattern for the other.

// Dense reference computations index their matrices by row and column.
#![allow(clippy::needless_range_loop)]

use mad_runtime::solve::{Newton, Objective, SolveError, SolveOptions, next_pattern_generation};
use mad_runtime::sparse::CsrPattern;

/// ½ Σ_i d_i x_i² + ½ c Σ_{(i,j) ∈ couplings} (x_i − x_j)² − Σ x_i: a sparse SPD quadratic whose
/// pattern is the diagonal plus the couplings.
struct Quadratic {
    diag: Vec<f64>,
    c: f64,
    couplings: Vec<(usize, usize)>,
    pattern: CsrPattern,
    generation: u64,
}

impl Quadratic {
    fn new(diag: Vec<f64>, c: f64, couplings: Vec<(usize, usize)>) -> Quadratic {
        let n = diag.len();
        let mut q = Quadratic { diag, c, couplings: Vec::new(), pattern: CsrPattern::empty(n), generation: 0 };
        q.set_couplings(couplings);
        q
    }

    fn set_couplings(&mut self, couplings: Vec<(usize, usize)>) {
        let n = self.diag.len();
        self.pattern = CsrPattern::from_entries(
            n,
            (0..n as u32)
                .map(|i| (i, i))
                .chain(couplings.iter().flat_map(|&(i, j)| [(i as u32, j as u32), (j as u32, i as u32)])),
        );
        self.couplings = couplings;
        self.generation = next_pattern_generation();
    }

    /// The minimizer by dense Gaussian elimination.
    fn solution(&self) -> Vec<f64> {
        let n = self.diag.len();
        let mut a = vec![vec![0.0; n + 1]; n];
        for i in 0..n {
            a[i][i] = self.diag[i];
            a[i][n] = 1.0;
        }
        for &(i, j) in &self.couplings {
            a[i][i] += self.c;
            a[j][j] += self.c;
            a[i][j] -= self.c;
            a[j][i] -= self.c;
        }
        for p in 0..n {
            for r in p + 1..n {
                let f = a[r][p] / a[p][p];
                for k in p..=n {
                    a[r][k] -= f * a[p][k];
                }
            }
        }
        let mut x = vec![0.0; n];
        for p in (0..n).rev() {
            let s: f64 = (p + 1..n).map(|k| a[p][k] * x[k]).sum();
            x[p] = (a[p][n] - s) / a[p][p];
        }
        x
    }
}

impl Objective for Quadratic {
    fn num_dofs(&self) -> usize {
        self.diag.len()
    }
    fn value(&mut self, x: &[f64]) -> Result<f64, SolveError> {
        let mut e: f64 = x.iter().zip(&self.diag).map(|(v, d)| 0.5 * d * v * v - v).sum();
        for &(i, j) in &self.couplings {
            e += 0.5 * self.c * (x[i] - x[j]).powi(2);
        }
        Ok(e)
    }
    fn value_grad(&mut self, x: &[f64], g: &mut [f64]) -> Result<f64, SolveError> {
        for i in 0..x.len() {
            g[i] += self.diag[i] * x[i] - 1.0;
        }
        for &(i, j) in &self.couplings {
            let t = self.c * (x[i] - x[j]);
            g[i] += t;
            g[j] -= t;
        }
        self.value(x)
    }
    fn hessian_pattern(&self) -> Option<&CsrPattern> {
        Some(&self.pattern)
    }
    fn hessian_pattern_generation(&self) -> Option<u64> {
        Some(self.generation)
    }
    fn hessian_values(&mut self, _x: &[f64], _p: bool, values: &mut [f64]) -> Result<(), SolveError> {
        for i in 0..self.diag.len() {
            values[self.pattern.find(i, i as u32).unwrap()] += self.diag[i];
        }
        for &(i, j) in &self.couplings {
            for (r, c, v) in [(i, i, self.c), (j, j, self.c), (i, j, -self.c), (j, i, -self.c)] {
                values[self.pattern.find(r, c as u32).unwrap()] += v;
            }
        }
        Ok(())
    }
}

fn solve_and_check(newton: &mut Newton, q: &mut Quadratic) {
    let mut x = vec![0.0; q.diag.len()];
    let rep = newton.solve(q, &mut x, &SolveOptions::default(), None).unwrap();
    assert!(rep.status.converged(), "{:?}", rep.status);
    for (a, b) in x.iter().zip(q.solution()) {
        assert!((a - b).abs() < 1e-9, "{a} vs {b}");
    }
}

#[test]
fn patterns_follow_generations_across_objectives_and_changes() {
    let n = 8;
    let diag: Vec<f64> = (0..n).map(|i| 1.0 + 0.1 * i as f64).collect();
    let mut chain = Quadratic::new(diag.clone(), 3.0, (0..n - 1).map(|i| (i, i + 1)).collect());
    let mut star = Quadratic::new(diag, 5.0, (1..n).map(|i| (0, i)).collect());
    let mut newton = Newton::new();
    solve_and_check(&mut newton, &mut chain);
    assert_eq!(newton.symbolic_factorizations(), 1);
    // Another objective, the same size, another pattern.
    solve_and_check(&mut newton, &mut star);
    assert_eq!(newton.symbolic_factorizations(), 2);
    // The same objective again: the pattern is kept.
    solve_and_check(&mut newton, &mut star);
    assert_eq!(newton.symbolic_factorizations(), 2);
    // Its pattern changes (a new generation).
    star.set_couplings(vec![(0, 7), (2, 5), (3, 4)]);
    solve_and_check(&mut newton, &mut star);
    assert_eq!(newton.symbolic_factorizations(), 3);
}
