//! Exact Euclidean distances between contact primitives: point–point,
//! point–triangle and segment–segment (closest points as in Ericson, *Real-Time
//! Collision Detection*, §5.1.5 and §5.1.9), used to filter broad-phase candidates.
//! Degenerate inputs (a zero-length segment, a zero-area triangle) give the
//! distance to the degenerate set.

/// A point in 3-space.
pub type P3 = [f64; 3];

fn sub(a: P3, b: P3) -> P3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn dot(a: P3, b: P3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn axpy(a: P3, t: f64, d: P3) -> P3 {
    [a[0] + t * d[0], a[1] + t * d[1], a[2] + t * d[2]]
}

/// ‖p − q‖².
pub fn point_point_sq(p: P3, q: P3) -> f64 {
    let d = sub(p, q);
    dot(d, d)
}

/// The squared distance from `p` to the segment `a b`.
pub fn point_segment_sq(p: P3, a: P3, b: P3) -> f64 {
    let ab = sub(b, a);
    let l = dot(ab, ab);
    let t = if l > 0.0 {
        (dot(sub(p, a), ab) / l).clamp(0.0, 1.0)
    } else {
        0.0
    };
    point_point_sq(p, axpy(a, t, ab))
}

fn cross(a: P3, b: P3) -> P3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// The squared distance from `p` to the nearest of the segments `a b`, `a c`, `b c`.
fn nearest_edge_sq(p: P3, a: P3, b: P3, c: P3) -> f64 {
    point_segment_sq(p, a, b).min(point_segment_sq(p, a, c)).min(point_segment_sq(p, b, c))
}

/// The squared distance from `p` to the (closed) triangle `a b c`. A triangle with no area
/// (two vertices at one point, or three on a line) is the union of its edges: Ericson's
/// region tests assume a proper triangle (with a = b, the first edge region caught every
/// point and measured to the vertex, not to the edge a c).
pub fn point_triangle_sq(p: P3, a: P3, b: P3, c: P3) -> f64 {
    let ab = sub(b, a);
    let ac = sub(c, a);
    let n = cross(ab, ac);
    if dot(n, n) <= f64::EPSILON * f64::EPSILON * dot(ab, ab) * dot(ac, ac) {
        return nearest_edge_sq(p, a, b, c);
    }
    let ap = sub(p, a);
    let d1 = dot(ab, ap);
    let d2 = dot(ac, ap);
    if d1 <= 0.0 && d2 <= 0.0 {
        return point_point_sq(p, a);
    }
    let bp = sub(p, b);
    let d3 = dot(ab, bp);
    let d4 = dot(ac, bp);
    if d3 >= 0.0 && d4 <= d3 {
        return point_point_sq(p, b);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return point_segment_sq(p, a, b);
    }
    let cp = sub(p, c);
    let d5 = dot(ab, cp);
    let d6 = dot(ac, cp);
    if d6 >= 0.0 && d5 <= d6 {
        return point_point_sq(p, c);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return point_segment_sq(p, a, c);
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        return point_segment_sq(p, b, c);
    }
    let denom = va + vb + vc;
    if denom.is_nan() || denom <= 0.0 {
        // Degenerate after all (rounding): the nearest of its edges.
        return nearest_edge_sq(p, a, b, c);
    }
    let v = vb / denom;
    let w = vc / denom;
    point_point_sq(p, axpy(axpy(a, v, ab), w, ac))
}

/// The squared distance between the segments `p1 q1` and `p2 q2`.
pub fn segment_segment_sq(p1: P3, q1: P3, p2: P3, q2: P3) -> f64 {
    let d1 = sub(q1, p1);
    let d2 = sub(q2, p2);
    let r = sub(p1, p2);
    let a = dot(d1, d1);
    let e = dot(d2, d2);
    let f = dot(d2, r);
    let eps = 1e-300;
    let (s, t);
    if a <= eps && e <= eps {
        return point_point_sq(p1, p2);
    }
    if a <= eps {
        s = 0.0;
        t = (f / e).clamp(0.0, 1.0);
    } else {
        let c = dot(d1, r);
        if e <= eps {
            t = 0.0;
            s = (-c / a).clamp(0.0, 1.0);
        } else {
            let b = dot(d1, d2);
            let denom = a * e - b * b;
            let mut ss = if denom > 0.0 {
                ((b * f - c * e) / denom).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let mut tt = (b * ss + f) / e;
            if tt < 0.0 {
                tt = 0.0;
                ss = (-c / a).clamp(0.0, 1.0);
            } else if tt > 1.0 {
                tt = 1.0;
                ss = ((b - c) / a).clamp(0.0, 1.0);
            }
            s = ss;
            t = tt;
        }
    }
    let c1 = axpy(p1, s, d1);
    let c2 = axpy(p2, t, d2);
    // Parallel segments can leave the clamped pair off by rounding; the
    // endpoint distances bound the result from above and are exact candidates.
    let ends = point_segment_sq(p1, p2, q2)
        .min(point_segment_sq(q1, p2, q2))
        .min(point_segment_sq(p2, p1, q1))
        .min(point_segment_sq(q2, p1, q1));
    point_point_sq(c1, c2).min(ends)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn point_triangle_regions() {
        let (a, b, c) = ([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]);
        // Above the interior: the height.
        assert!((point_triangle_sq([0.2, 0.2, 0.5], a, b, c) - 0.25).abs() < 1e-15);
        // Beyond vertex a.
        assert!((point_triangle_sq([-1.0, -1.0, 0.0], a, b, c) - 2.0).abs() < 1e-15);
        // Beyond edge b c: distance to the hypotenuse from (1, 1, 0) is √2/2.
        assert!((point_triangle_sq([1.0, 1.0, 0.0], a, b, c) - 0.5).abs() < 1e-15);
        // Below edge a b.
        assert!((point_triangle_sq([0.5, -2.0, 1.0], a, b, c) - 5.0).abs() < 1e-15);
    }

    /// Triangles without area are their edges: two vertices at one point (in every order,
    /// so that each of the region tests meets the zero-length edge), or three on a line.
    #[test]
    fn point_triangle_of_degenerate_triangles() {
        let (o, x) = ([0.0, 0.0, 0.0], [1.0, 0.0, 0.0]);
        let p = [0.5, 0.01, 0.0];
        for (a, b, c) in [(o, o, x), (o, x, o), (x, o, o)] {
            let d = point_triangle_sq(p, a, b, c);
            assert!((d - 1e-4).abs() < 1e-18, "{a:?} {b:?} {c:?}: {d}");
        }
        let d = point_triangle_sq([0.5, 0.2, 0.0], o, [2.0, 0.0, 0.0], x);
        assert!((d - 0.04).abs() < 1e-15, "collinear: {d}");
        // A point triangle.
        assert!((point_triangle_sq([0.0, 3.0, 4.0], o, o, o) - 25.0).abs() < 1e-12);
    }

    #[test]
    fn segment_segment_cases() {
        // Skew, crossing at distance 1.
        let d = segment_segment_sq(
            [-1.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, -1.0, 1.0],
            [0.0, 1.0, 1.0],
        );
        assert!((d - 1.0).abs() < 1e-15);
        // Parallel, overlapping.
        let d = segment_segment_sq(
            [0.0, 0.0, 0.0],
            [2.0, 0.0, 0.0],
            [1.0, 0.5, 0.0],
            [3.0, 0.5, 0.0],
        );
        assert!((d - 0.25).abs() < 1e-15);
        // Collinear, apart: endpoint gap 1.
        let d = segment_segment_sq(
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [2.0, 0.0, 0.0],
            [3.0, 0.0, 0.0],
        );
        assert!((d - 1.0).abs() < 1e-15);
        // A degenerate segment (a point).
        let d = segment_segment_sq(
            [0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0],
            [1.0, -1.0, 0.0],
            [1.0, 1.0, 0.0],
        );
        assert!((d - 1.0).abs() < 1e-15);
    }

    /// Against dense sampling of both primitives (a reference that knows nothing
    /// of the case analysis): the exact distance is never above the sampled
    /// minimum, and at most the sampling resolution below it.
    #[test]
    fn against_sampling() {
        let mut seed = 7u64;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        };
        let n = 60;
        for _ in 0..30 {
            let mut p = || [rnd(), rnd(), rnd()];
            let (x, a, b, c, d) = (p(), p(), p(), p(), p());
            let exact = point_triangle_sq(x, a, b, c).sqrt();
            let mut best = f64::INFINITY;
            for i in 0..=n {
                for j in 0..=(n - i) {
                    let (u, v) = (i as f64 / n as f64, j as f64 / n as f64);
                    let q = axpy(axpy(a, u, sub(b, a)), v, sub(c, a));
                    best = best.min(point_point_sq(x, q).sqrt());
                }
            }
            assert!(
                exact <= best + 1e-12 && best - exact < 0.1,
                "pt {exact} vs {best}"
            );
            let exact = segment_segment_sq(x, a, c, d).sqrt();
            let mut best = f64::INFINITY;
            for i in 0..=n {
                for j in 0..=n {
                    let q1 = axpy(x, i as f64 / n as f64, sub(a, x));
                    let q2 = axpy(c, j as f64 / n as f64, sub(d, c));
                    best = best.min(point_point_sq(q1, q2).sqrt());
                }
            }
            assert!(
                exact <= best + 1e-12 && best - exact < 0.1,
                "ss {exact} vs {best}"
            );
        }
    }
}
