//! Where an implicit Euler step starts its minimization: the prediction `x̂ = xₙ + h vₙ`
//! only where the move to it is safe. A particle predicted inside a barrier (`+∞`) starts
//! on the way there instead of failing; one predicted through a thin obstacle onto its far
//! side (finite again) is held on its side by the potential's `max_step`.

use mad_runtime::solve::{ImplicitEuler, Newton, Objective, SolveError, SolveOptions, Solver};
use mad_runtime::sparse::CsrPattern;

/// One coordinate x with the potential `k / x²` (+∞ at 0, finite on both sides: a thin wall
/// at 0), and a `max_step` that lets a step close at most 90 % of the distance to the wall.
/// With `one_sided`, x < 0 is `+∞` as well (a barrier, not a thin wall).
struct Wall {
    k: f64,
    one_sided: bool,
    pattern: CsrPattern,
}

impl Wall {
    fn new(one_sided: bool) -> Wall {
        Wall {
            k: 1e-3,
            one_sided,
            pattern: CsrPattern::from_entries(1, [(0u32, 0u32)]),
        }
    }
}

impl Objective for Wall {
    fn num_dofs(&self) -> usize {
        1
    }
    fn value(&mut self, x: &[f64]) -> Result<f64, SolveError> {
        let x = x[0];
        Ok(if x == 0.0 || (self.one_sided && x < 0.0) { f64::INFINITY } else { self.k / (x * x) })
    }
    fn value_grad(&mut self, x: &[f64], g: &mut [f64]) -> Result<f64, SolveError> {
        let f = self.value(x)?;
        if f.is_finite() {
            g[0] += -2.0 * self.k / x[0].powi(3);
        }
        Ok(f)
    }
    fn hessian_pattern(&self) -> Option<&CsrPattern> {
        Some(&self.pattern)
    }
    fn hessian_values(&mut self, x: &[f64], _: bool, v: &mut [f64]) -> Result<(), SolveError> {
        v[0] += 6.0 * self.k / x[0].powi(4);
        Ok(())
    }
    fn max_step(&mut self, x: &[f64], d: &[f64], t0: f64) -> Result<f64, SolveError> {
        // Moving towards 0: close at most 90 % of the distance.
        if x[0] * d[0] < 0.0 {
            Ok(t0.min(0.9 * x[0].abs() / d[0].abs()))
        } else {
            Ok(t0)
        }
    }
}

fn euler(one_sided: bool, v0: f64) -> ImplicitEuler<Wall> {
    ImplicitEuler::new(Wall::new(one_sided), vec![1.0], 0.1, vec![1.0], vec![v0]).unwrap()
}

#[test]
fn a_prediction_inside_a_barrier_starts_on_the_way_there() {
    // x̂ = 1 − 0.1·100 = −9: inside the barrier. The step starts where the potential is
    // finite and ends on the near side.
    let mut e = euler(true, -100.0);
    let start = e.start(None).unwrap();
    assert!(start[0] > 0.0 && start[0] < 1.0, "{start:?}");
    let mut solver = Solver::Newton(Newton::new());
    for _ in 0..5 {
        e.step(&mut solver, &SolveOptions::default(), None).unwrap();
        assert!(e.positions()[0] > 0.0, "{:?}", e.positions());
    }
}

#[test]
fn a_prediction_through_a_thin_wall_stays_on_its_side() {
    // x̂ = 1 − 0.1·30 = −2: finite again beyond the wall at 0. Starting there, Newton would
    // converge on the far side; the start is capped by `max_step` instead.
    let mut e = euler(false, -30.0);
    assert_eq!(e.predicted(), &[-2.0]);
    let start = e.start(None).unwrap();
    assert!((start[0] - 0.1).abs() < 1e-12, "0.9 of the way to the wall: {start:?}");
    let mut solver = Solver::Newton(Newton::new());
    for _ in 0..5 {
        e.step(&mut solver, &SolveOptions::default(), None).unwrap();
        assert!(e.positions()[0] > 0.0, "through the wall: {:?}", e.positions());
    }
}

#[test]
fn a_safe_prediction_is_the_start_bit_for_bit() {
    let mut e = euler(false, -1.0 / 3.0);
    let predicted = e.predicted().to_vec();
    assert_eq!(e.start(None).unwrap(), predicted);
    // Fixed dofs start where they are.
    assert_eq!(e.start(Some(&[true])).unwrap(), vec![1.0]);
}
