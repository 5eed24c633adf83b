//! A small SVG writer for convergence plots (`madc run --plot conv.svg`): the
//! energy (linear axis, left panel) and ‖g‖ (log₁₀ axis, right panel) against
//! the iteration, as polylines with labelled axis ranges. No dependencies.

use std::fmt::Write as _;

const W: f64 = 360.0;
const H: f64 = 260.0;
const M: f64 = 48.0;

/// One panel: a polyline of finite `(i, y)` points scaled into its box at `x0`.
fn panel(svg: &mut String, x0: f64, title: &str, ys: &[Option<f64>], color: &str, log_label: bool) {
    let pts: Vec<(usize, f64)> = ys
        .iter()
        .enumerate()
        .filter_map(|(i, y)| y.map(|y| (i + 1, y)))
        .collect();
    let _ = writeln!(svg, r##"<g transform="translate({x0},0)">"##);
    let _ = writeln!(
        svg,
        r##"<rect x="{M}" y="{M}" width="{}" height="{}" fill="none" stroke="#444"/>"##,
        W - 1.5 * M,
        H - 2.0 * M
    );
    let _ = writeln!(
        svg,
        r##"<text x="{}" y="{}" text-anchor="middle" font-size="13">{title}</text>"##,
        W / 2.0,
        M - 12.0
    );
    let _ = writeln!(
        svg,
        r##"<text x="{}" y="{}" text-anchor="middle" font-size="11">iteration</text>"##,
        W / 2.0,
        H - 10.0
    );
    if !pts.is_empty() {
        let (mut lo, mut hi) = pts
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
                (a.min(p.1), b.max(p.1))
            });
        if hi - lo < 1e-300 {
            lo -= 0.5;
            hi += 0.5;
        }
        let n = pts.last().map_or(1, |p| p.0).max(2);
        let sx = |i: usize| M + (i - 1) as f64 / (n - 1) as f64 * (W - 1.5 * M);
        let sy = |y: f64| H - M - (y - lo) / (hi - lo) * (H - 2.0 * M);
        let mut line = String::new();
        for (i, y) in &pts {
            let _ = write!(line, "{:.2},{:.2} ", sx(*i), sy(*y));
        }
        let _ = writeln!(
            svg,
            r##"<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{}"/>"##,
            line.trim_end()
        );
        let fmt = |v: f64| {
            if log_label {
                format!("1e{v:.1}")
            } else {
                format!("{v:.4e}")
            }
        };
        let _ = writeln!(
            svg,
            r##"<text x="{}" y="{}" text-anchor="end" font-size="10">{}</text>"##,
            M - 4.0,
            M + 4.0,
            fmt(hi)
        );
        let _ = writeln!(
            svg,
            r##"<text x="{}" y="{}" text-anchor="end" font-size="10">{}</text>"##,
            M - 4.0,
            H - M,
            fmt(lo)
        );
        let _ = writeln!(
            svg,
            r##"<text x="{M}" y="{}" font-size="10">1</text>"##,
            H - M + 14.0
        );
        let _ = writeln!(
            svg,
            r##"<text x="{}" y="{}" text-anchor="end" font-size="10">{n}</text>"##,
            W - 0.5 * M,
            H - M + 14.0
        );
    }
    svg.push_str("</g>\n");
}

/// The SVG text of a convergence plot of `(energy, ‖g‖)` per iteration.
pub fn convergence(points: &[(f64, f64)], title: &str) -> String {
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}" font-family="sans-serif">"##,
        2.0 * W,
        H + 20.0,
        2.0 * W,
        H + 20.0
    );
    let _ = writeln!(svg, r##"<rect width="100%" height="100%" fill="white"/>"##);
    let esc = title
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let _ = writeln!(
        svg,
        r##"<text x="{}" y="{}" text-anchor="middle" font-size="11" fill="#666">{esc}</text>"##,
        W,
        H + 14.0
    );
    let energy: Vec<Option<f64>> = points
        .iter()
        .map(|p| p.0.is_finite().then_some(p.0))
        .collect();
    let grad: Vec<Option<f64>> = points
        .iter()
        .map(|p| (p.1 > 0.0 && p.1.is_finite()).then(|| p.1.log10()))
        .collect();
    panel(&mut svg, 0.0, "energy", &energy, "#1f77b4", false);
    panel(&mut svg, W, "|g| (log10)", &grad, "#d62728", true);
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    #[test]
    fn plot_has_two_polylines_and_is_closed() {
        let pts: Vec<(f64, f64)> = (0..5).map(|i| (10.0 - i as f64, 10f64.powi(-i))).collect();
        let s = super::convergence(&pts, "a < b");
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
        assert_eq!(s.matches("<polyline").count(), 2);
        assert!(s.contains("a &lt; b"));
    }

    #[test]
    fn empty_history_still_writes_a_valid_document() {
        let s = super::convergence(&[], "none");
        assert_eq!(s.matches("<polyline").count(), 0);
        assert!(s.trim_end().ends_with("</svg>"));
    }
}
