//! Self-contained SVG charts for the report: line charts (CDFs, curves over a parameter, with
//! optional log axes), histograms and grouped bar charts. Every experiment's section uses these;
//! none needs a script or an external file.

use std::fmt::Write;

const W: f64 = 720.0;
const H: f64 = 360.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 230.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 50.0;
const COLORS: [&str; 8] = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

/// One line (or set of bars) of a chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// Dashed line: a model or a published figure beside a measurement.
    pub dashed: bool,
    /// Draw a marker on every point.
    pub markers: bool,
}

impl Series {
    pub fn new(label: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series { label: label.into(), points, dashed: false, markers: false }
    }
    pub fn dashed(mut self) -> Series {
        self.dashed = true;
        self
    }
    pub fn markers(mut self) -> Series {
        self.markers = true;
        self
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Axes {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_log: bool,
    pub y_log: bool,
}

impl Axes {
    pub fn new(title: impl Into<String>, x_label: impl Into<String>, y_label: impl Into<String>) -> Axes {
        Axes { title: title.into(), x_label: x_label.into(), y_label: y_label.into(), ..Default::default() }
    }
}

pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A compact number for tick labels.
pub fn tick_label(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if !(1e-3..1e6).contains(&a) {
        format!("{v:.1e}")
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}").trim_end_matches(".0").to_string()
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').to_string()
    }
}

struct Scale {
    lo: f64,
    hi: f64,
    log: bool,
}

impl Scale {
    fn new(values: impl Iterator<Item = f64>, log: bool) -> Scale {
        let vals: Vec<f64> = values.filter(|v| v.is_finite() && (!log || *v > 0.0)).collect();
        let (mut lo, mut hi) = vals.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
        if !lo.is_finite() {
            (lo, hi) = (if log { 1.0 } else { 0.0 }, 1.0);
        }
        if log {
            (lo, hi) = (10f64.powf(lo.log10().floor()), 10f64.powf(hi.log10().ceil()));
            if hi <= lo {
                hi = lo * 10.0;
            }
        } else {
            if lo > 0.0 && lo < hi * 0.5 {
                lo = 0.0;
            }
            if hi <= lo {
                hi = lo + 1.0;
            }
        }
        Scale { lo, hi, log }
    }

    /// Position in [0, 1].
    fn frac(&self, v: f64) -> f64 {
        if self.log {
            (v.max(self.lo * 1e-3).log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        }
    }

    fn ticks(&self) -> Vec<f64> {
        if self.log {
            let (a, b) = (self.lo.log10().round() as i32, self.hi.log10().round() as i32);
            (a..=b).map(|e| 10f64.powi(e)).collect()
        } else {
            let raw = (self.hi - self.lo) / 5.0;
            let mag = 10f64.powf(raw.log10().floor());
            let step = [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(raw);
            let first = (self.lo / step).ceil() * step;
            (0..).map(|i| first + i as f64 * step).take_while(|v| *v <= self.hi + step * 1e-9).collect()
        }
    }
}

fn frame(out: &mut String, axes: &Axes, xs: &Scale, ys: &Scale) {
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let _ = write!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="11"><rect width="{W}" height="{H}" fill="#fff"/><text x="{}" y="18" text-anchor="middle" font-size="13" font-weight="bold">{}</text>"##,
        LEFT + pw / 2.0,
        escape(&axes.title)
    );
    for t in xs.ticks() {
        let x = LEFT + xs.frac(t) * pw;
        let _ = write!(
            out,
            r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#e4e4e4"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            TOP + ph,
            TOP + ph + 14.0,
            tick_label(t)
        );
    }
    for t in ys.ticks() {
        let y = TOP + ph - ys.frac(t) * ph;
        let _ = write!(
            out,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e4e4e4"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT + pw,
            LEFT - 4.0,
            y + 4.0,
            tick_label(t)
        );
    }
    plot_box(out, axes, pw, ph, H - 12.0);
}

/// The plot area's border and the axis labels (the x label's baseline at `x_label_y`).
fn plot_box(out: &mut String, axes: &Axes, pw: f64, ph: f64, x_label_y: f64) {
    let _ = write!(
        out,
        r##"<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#333"/><text x="{:.1}" y="{x_label_y:.1}" text-anchor="middle">{}</text><text transform="translate(16,{:.1}) rotate(-90)" text-anchor="middle">{}</text>"##,
        LEFT + pw / 2.0,
        escape(&axes.x_label),
        TOP + ph / 2.0,
        escape(&axes.y_label)
    );
}

fn legend(out: &mut String, labels: &[(String, bool)]) {
    for (i, (label, dashed)) in labels.iter().enumerate() {
        let y = TOP + 10.0 + i as f64 * 16.0;
        let x = W - RIGHT + 10.0;
        let c = COLORS[i % COLORS.len()];
        let dash = if *dashed { r#" stroke-dasharray="5,3""# } else { "" };
        let label: String = if label.chars().count() > 34 { label.chars().take(33).chain(['…']).collect() } else { label.clone() };
        let _ = write!(
            out,
            r##"<line x1="{x}" y1="{y}" x2="{}" y2="{y}" stroke="{c}" stroke-width="2"{dash}/><text x="{}" y="{}">{}</text>"##,
            x + 18.0,
            x + 22.0,
            y + 4.0,
            escape(&label)
        );
    }
}

/// Lines through each series' points (sorted by x as given).
pub fn line_chart(axes: &Axes, series: &[Series]) -> String {
    let xs = Scale::new(series.iter().flat_map(|s| s.points.iter().map(|p| p.0)), axes.x_log);
    let ys = Scale::new(series.iter().flat_map(|s| s.points.iter().map(|p| p.1)), axes.y_log);
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let mut out = String::new();
    frame(&mut out, axes, &xs, &ys);
    for (i, s) in series.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite() && (!axes.x_log || *x > 0.0) && (!axes.y_log || *y > 0.0))
            .map(|&(x, y)| (LEFT + xs.frac(x).clamp(0.0, 1.0) * pw, TOP + ph - ys.frac(y).clamp(0.0, 1.0) * ph))
            .collect();
        let path: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let dash = if s.dashed { r#" stroke-dasharray="5,3""# } else { "" };
        let _ = write!(out, r#"<polyline fill="none" stroke="{c}" stroke-width="2"{dash} points="{}"/>"#, path.join(" "));
        if s.markers {
            for (x, y) in &pts {
                let _ = write!(out, r#"<circle cx="{x:.1}" cy="{y:.1}" r="3" fill="{c}"/>"#);
            }
        }
    }
    legend(&mut out, &series.iter().map(|s| (s.label.clone(), s.dashed)).collect::<Vec<_>>());
    out.push_str("</svg>");
    out
}

/// Empirical CDFs of several sample sets (seed 002 Fig. 15 style); `scale` divides the values
/// (1000 to show ns samples in us). The x axis ends at the largest 99th percentile of the sets
/// (x 1.2), so a few long stalls do not squeeze the body of the distributions; the title says so.
pub fn cdf_chart(title: &str, x_label: &str, sets: &[(String, Vec<f64>)], scale: f64) -> String {
    let cap = sets.iter().filter_map(|(_, s)| crate::stats::Summary::of(s).map(|m| m.p99)).fold(f64::NEG_INFINITY, f64::max) * 1.2;
    let series: Vec<Series> = sets
        .iter()
        .map(|(label, samples)| {
            let pts = crate::stats::cdf(samples, 200).into_iter().filter(|(v, _)| *v <= cap).map(|(v, f)| (v / scale, f)).collect();
            Series::new(label.clone(), pts)
        })
        .collect();
    line_chart(&Axes::new(format!("{title} (to 1.2 x p99)"), x_label, "fraction of samples <= x"), &series)
}

/// A histogram of samples (`scale` as in [`cdf_chart`]), bars of equal width.
pub fn histogram_chart(title: &str, x_label: &str, samples: &[f64], bins: usize, scale: f64) -> String {
    let h = crate::stats::histogram(samples, bins);
    let axes = Axes::new(title, x_label, "samples");
    let xs = Scale::new(h.iter().map(|b| b.0 / scale).chain(h.last().map(|b| b.0 / scale + width(&h) / scale)), false);
    let ys = Scale::new(h.iter().map(|b| b.1 as f64), false);
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let mut out = String::new();
    frame(&mut out, &axes, &xs, &ys);
    let bw = width(&h) / scale;
    for (lo, count) in &h {
        let x0 = LEFT + xs.frac(lo / scale) * pw;
        let x1 = LEFT + xs.frac(lo / scale + bw) * pw;
        let y = TOP + ph - ys.frac(*count as f64) * ph;
        let _ = write!(
            out,
            r##"<rect x="{x0:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{}"/>"##,
            (x1 - x0 - 0.5).max(0.5),
            TOP + ph - y,
            COLORS[0]
        );
    }
    out.push_str("</svg>");
    out
}

fn width(h: &[(f64, usize)]) -> f64 {
    if h.len() >= 2 { h[1].0 - h[0].0 } else { 1.0 }
}

/// Grouped bars: one group per category, one bar per series (`points[i].1` for category i).
pub fn bar_chart(axes: &Axes, categories: &[String], series: &[Series]) -> String {
    let ys = Scale::new(series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).chain([0.0]), axes.y_log);
    // Taller than the line charts: category labels are slanted below the bars.
    let h = H + 50.0;
    let (pw, ph) = (W - LEFT - RIGHT, h - TOP - BOTTOM - 50.0);
    let mut out = String::new();
    let _ = write!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h}" viewBox="0 0 {W} {h}" font-family="sans-serif" font-size="11"><rect width="{W}" height="{h}" fill="#fff"/><text x="{}" y="18" text-anchor="middle" font-size="13" font-weight="bold">{}</text>"##,
        LEFT + pw / 2.0,
        escape(&axes.title)
    );
    for t in ys.ticks() {
        let y = TOP + ph - ys.frac(t) * ph;
        let _ = write!(
            out,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e4e4e4"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT + pw,
            LEFT - 4.0,
            y + 4.0,
            tick_label(t)
        );
    }
    let groups = categories.len().max(1) as f64;
    let gw = pw / groups;
    let bw = gw * 0.8 / series.len().max(1) as f64;
    for (ci, cat) in categories.iter().enumerate() {
        let gx = LEFT + ci as f64 * gw;
        for (si, s) in series.iter().enumerate() {
            let Some(v) = s.points.get(ci).map(|p| p.1).filter(|v| v.is_finite()) else { continue };
            let y = TOP + ph - ys.frac(v).clamp(0.0, 1.0) * ph;
            let _ = write!(
                out,
                r##"<rect x="{:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}: {}</title></rect>"##,
                gx + gw * 0.1 + si as f64 * bw,
                (bw - 1.0).max(0.5),
                TOP + ph - y,
                COLORS[si % COLORS.len()],
                escape(&s.label),
                tick_label(v)
            );
        }
        let (lx, ly) = (gx + gw / 2.0, TOP + ph + 12.0);
        let _ = write!(
            out,
            r##"<text x="{lx:.1}" y="{ly:.1}" text-anchor="end" transform="rotate(-35 {lx:.1} {ly:.1})">{}</text>"##,
            escape(cat)
        );
    }
    plot_box(&mut out, axes, pw, ph, h - 8.0);
    legend(&mut out, &series.iter().map(|s| (s.label.clone(), false)).collect::<Vec<_>>());
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn well_formed(svg: &str) {
        roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{e}\n{svg}"));
    }

    #[test]
    fn charts_are_well_formed_svg_with_their_series() {
        let s = vec![
            Series::new("measured <a>", vec![(1.0, 0.01), (10.0, 0.1), (1000.0, 1.0)]).markers(),
            Series::new("model", vec![(1.0, 0.02), (1000.0, 2.0)]).dashed(),
        ];
        let mut axes = Axes::new("loss", "slot (ms)", "loss (%)");
        axes.x_log = true;
        axes.y_log = true;
        let svg = line_chart(&axes, &s);
        well_formed(&svg);
        assert!(svg.contains("measured &lt;a&gt;") && svg.contains("stroke-dasharray"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert_eq!(svg.matches("<circle").count(), 3);
        let cdf = cdf_chart("PCS", "us", &[("a".into(), vec![1000.0, 2000.0, 3000.0])], 1000.0);
        well_formed(&cdf);
        let h = histogram_chart("lat", "us", &[1.0, 2.0, 2.0, 3.0], 3, 1.0);
        well_formed(&h);
        assert_eq!(h.matches("<rect").count(), 2 + 3);
        let b = bar_chart(&Axes::new("api", "", "ns"), &["A".into(), "B".into()], &[Series::new("x", vec![(0.0, 1.0), (1.0, 2.0)])]);
        well_formed(&b);
        assert_eq!(b.matches("<title>").count(), 2);
    }

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(tick_label(0.0), "0");
        assert_eq!(tick_label(2.5), "2.5");
        assert_eq!(tick_label(10.0), "10");
        assert_eq!(tick_label(1500.0), "1500");
        assert_eq!(tick_label(0.25), "0.25");
    }
}
