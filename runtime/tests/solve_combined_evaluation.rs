//! Newton asks objectives that offer `value_grad_hessian` for the energy, gradient and
//! Hessian in one evaluation where it expects to go on from the new point: the iterates are
//! the same bits as with separate evaluations, fewer gradient evaluations run, and at most
//! one Hessian evaluation is spent at the point where the solve stops.

use mad_runtime::solve::{Control, Newton, Objective, SolveError, SolveOptions, next_pattern_generation};
use mad_runtime::sparse::CsrPattern;

/// Σ_i (cosh(x_i − t_i)) + ½ c Σ_i (x_i − x_{i+1})²: smooth, strictly convex, tridiagonal.
struct Chain {
    t: Vec<f64>,
    c: f64,
    pattern: CsrPattern,
    generation: u64,
    /// Whether `value_grad_hessian` is offered.
    combined: bool,
    value_grads: usize,
    hessians: usize,
    combos: usize,
    /// Whether the Hessian values overwrite their buffer (`hessian_values_overwrite`).
    overwrite: bool,
    /// Evaluations that were handed a buffer holding old (non-zero) values.
    stale_buffers: usize,
}

impl Chain {
    fn new(n: usize, combined: bool) -> Chain {
        let pattern = CsrPattern::from_entries(
            n,
            (0..n as u32).flat_map(|i| {
                let mut v = vec![(i, i)];
                if i + 1 < n as u32 {
                    v.push((i, i + 1));
                    v.push((i + 1, i));
                }
                v
            }),
        );
        Chain {
            t: (0..n).map(|i| (i as f64 * 0.7).sin() * 3.0).collect(),
            c: 2.0,
            pattern,
            generation: next_pattern_generation(),
            combined,
            value_grads: 0,
            hessians: 0,
            combos: 0,
            overwrite: false,
            stale_buffers: 0,
        }
    }
    fn grad_into(&self, x: &[f64], g: &mut [f64]) {
        let n = x.len();
        for i in 0..n {
            g[i] += (x[i] - self.t[i]).sinh();
            if i + 1 < n {
                let d = self.c * (x[i] - x[i + 1]);
                g[i] += d;
                g[i + 1] -= d;
            }
        }
    }
    fn hess_into(&mut self, x: &[f64], values: &mut [f64]) {
        if self.overwrite {
            self.stale_buffers += usize::from(values.iter().any(|&v| v != 0.0));
            values.fill(0.0);
        }
        let n = x.len();
        for i in 0..n {
            let mut diag = (x[i] - self.t[i]).cosh();
            if i > 0 {
                diag += self.c;
            }
            if i + 1 < n {
                diag += self.c;
                values[self.pattern.find(i, i as u32 + 1).unwrap()] -= self.c;
                values[self.pattern.find(i + 1, i as u32).unwrap()] -= self.c;
            }
            values[self.pattern.find(i, i as u32).unwrap()] += diag;
        }
    }
}

impl Objective for Chain {
    fn num_dofs(&self) -> usize {
        self.t.len()
    }
    fn value(&mut self, x: &[f64]) -> Result<f64, SolveError> {
        let mut e: f64 = x.iter().zip(&self.t).map(|(v, t)| (v - t).cosh()).sum();
        for w in x.windows(2) {
            e += 0.5 * self.c * (w[0] - w[1]).powi(2);
        }
        Ok(e)
    }
    fn value_grad(&mut self, x: &[f64], g: &mut [f64]) -> Result<f64, SolveError> {
        self.value_grads += 1;
        self.grad_into(x, g);
        self.value(x)
    }
    fn hessian_pattern(&self) -> Option<&CsrPattern> {
        Some(&self.pattern)
    }
    fn hessian_pattern_generation(&self) -> Option<u64> {
        Some(self.generation)
    }
    fn hessian_values_overwrite(&self) -> bool {
        self.overwrite
    }
    fn hessian_values(&mut self, x: &[f64], _p: bool, values: &mut [f64]) -> Result<(), SolveError> {
        self.hessians += 1;
        self.hess_into(x, values);
        Ok(())
    }
    fn value_grad_hessian(
        &mut self,
        x: &[f64],
        g: &mut [f64],
        _p: bool,
        values: &mut [f64],
    ) -> Result<Option<f64>, SolveError> {
        if !self.combined {
            return Ok(None);
        }
        self.combos += 1;
        self.grad_into(x, g);
        self.hess_into(x, values);
        Ok(Some(self.value(x)?))
    }
}

/// Solves from x = 0; returns the iterates' bits and the objective.
fn run(combined: bool, opts: &SolveOptions) -> (Vec<Vec<u64>>, Chain, usize) {
    run_chain(Chain::new(40, combined), opts)
}

fn run_chain(mut obj: Chain, opts: &SolveOptions) -> (Vec<Vec<u64>>, Chain, usize) {
    let mut x = vec![0.0; 40];
    let mut energies = Vec::new();
    let mut cb = |info: &mad_runtime::solve::IterationInfo| {
        energies.push(info.energy.to_bits());
        Control::Continue
    };
    let rep = Newton::new().solve(&mut obj, &mut x, opts, Some(&mut cb)).unwrap();
    let its = rep.iterations;
    assert!(rep.status.converged() || its == opts.max_iters, "{:?}", rep.status);
    (vec![energies, x.iter().map(|v| v.to_bits()).collect()], obj, its)
}

#[test]
fn combined_evaluations_keep_the_iterates_and_save_gradients() {
    let opts = SolveOptions { grad_abs_tol: 1e-10, ..SolveOptions::default() };
    let (plain, p, its) = run(false, &opts);
    let (comb, c, its2) = run(true, &opts);
    assert_eq!(plain, comb, "same iterates, bit for bit");
    assert_eq!(its, its2);
    assert!(its >= 4, "a few Newton steps ({its})");
    // Separately: one gradient per point, one Hessian per iteration.
    assert_eq!(p.value_grads, its + 1);
    assert_eq!(p.hessians, its);
    assert_eq!(p.combos, 0);
    // Combined: some points take one evaluation for both, and at most one Hessian is spent
    // beyond the iterations (where the solve stops).
    assert!(c.combos > 0);
    assert_eq!(c.value_grads + c.combos, its + 1);
    assert!(c.hessians + c.combos <= its + 1, "{} + {} for {its} iterations", c.hessians, c.combos);
}

#[test]
fn objectives_that_overwrite_get_the_old_buffer_and_the_same_iterates() {
    let opts = SolveOptions { grad_abs_tol: 1e-10, ..SolveOptions::default() };
    for combined in [false, true] {
        let (zeroed, z, its) = run(combined, &opts);
        let mut chain = Chain::new(40, combined);
        chain.overwrite = true;
        let (reused, r, its2) = run_chain(chain, &opts);
        assert_eq!(zeroed, reused, "combined {combined}: same iterates, bit for bit");
        assert_eq!(its, its2);
        assert_eq!(z.stale_buffers, 0, "zeroed when the objective adds");
        assert!(r.stale_buffers > 0, "combined {combined}: the buffer is not zeroed again");
    }
}

#[test]
fn the_last_allowed_iteration_does_not_combine() {
    // The cap stops the solve far from the tolerance: the point after the last step needs no
    // Hessian, so none is computed there.
    let opts = SolveOptions { max_iters: 2, grad_abs_tol: 1e-14, ..SolveOptions::default() };
    let (_, c, its) = run(true, &opts);
    assert_eq!(its, 2);
    assert_eq!(c.hessians + c.combos, 2, "one Hessian per iteration, none after the last");
    assert_eq!(c.combos, 1, "the point after the first step");
}

#[test]
fn implicit_euler_passes_the_combined_evaluation_through() {
    use mad_runtime::solve::ImplicitEuler;
    let n = 12;
    let x0: Vec<f64> = (0..n).map(|i| 0.1 * i as f64).collect();
    let v0: Vec<f64> = (0..n).map(|i| (i as f64).cos()).collect();
    let mass: Vec<f64> = (0..n).map(|i| 1.0 + 0.25 * i as f64).collect();
    let mut euler = ImplicitEuler::new(Chain::new(n, true), mass.clone(), 0.05, x0.clone(), v0.clone()).unwrap();
    let nnz = euler.hessian_pattern().unwrap().nnz();
    let x: Vec<f64> = (0..n).map(|i| 0.3 * (i as f64 * 1.3).sin()).collect();
    let (mut g1, mut h1) = (vec![0.0; n], vec![0.0; nnz]);
    let e1 = euler.value_grad(&x, &mut g1).unwrap();
    euler.hessian_values(&x, false, &mut h1).unwrap();
    let (mut g2, mut h2) = (vec![0.0; n], vec![0.0; nnz]);
    let e2 = euler
        .value_grad_hessian(&x, &mut g2, false, &mut h2)
        .unwrap()
        .expect("the potential offers it");
    assert_eq!(e1.to_bits(), e2.to_bits());
    assert!(g1.iter().zip(&g2).all(|(a, b)| a.to_bits() == b.to_bits()));
    assert!(h1.iter().zip(&h2).all(|(a, b)| a.to_bits() == b.to_bits()));
    // The step overwrites its values when the potential does, and adds when it does not.
    assert!(!euler.hessian_values_overwrite());
    let mut chain = Chain::new(n, true);
    chain.overwrite = true;
    let mut over = ImplicitEuler::new(chain, mass, 0.05, x0, v0).unwrap();
    assert!(over.hessian_values_overwrite());
    let mut h3 = vec![5.0; nnz];
    over.hessian_values(&x, false, &mut h3).unwrap();
    assert!(h1.iter().zip(&h3).all(|(a, b)| a.to_bits() == b.to_bits()), "stale values overwritten");
    // A potential that does not offer it: the step declines too.
    let mut plain = ImplicitEuler::new(Chain::new(n, false), vec![1.0; n], 0.05, vec![0.0; n], vec![0.0; n]).unwrap();
    let mut h = vec![0.0; nnz];
    assert_eq!(plain.value_grad_hessian(&x, &mut vec![0.0; n], false, &mut h).unwrap(), None);
}
