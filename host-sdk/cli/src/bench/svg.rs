//! Dependency-free SVG charts: line charts (latency CDFs, scaling curves,
//! linear or log axes) and grouped bar charts. The legend sits right of the
//! plot and the picture widens to fit its longest name; [`check`] finds text
//! that would be clipped and series that draw nothing.

use std::fmt::Write as _;

/// Width of the plot area (between the axes).
const PLOT_W: f64 = 492.0;
const H: f64 = 440.0;
const LEFT: f64 = 78.0;
/// Narrowest right margin (the legend column).
const RIGHT: f64 = 190.0;
const TOP: f64 = 44.0;
const BOTTOM: f64 = 58.0;
/// Average advance of a sans-serif glyph, in font sizes (generous, so an
/// estimate that fits also fits when rendered).
const GLYPH: f64 = 0.62;

/// Estimated width of `s` at `font_size` px.
pub fn text_width(s: &str, font_size: f64) -> f64 {
    s.chars().count() as f64 * font_size * GLYPH
}

/// The picture's geometry: its width follows the legend.
#[derive(Debug, Clone, Copy)]
struct Frame {
    w: f64,
}

impl Frame {
    fn for_legend<'a>(names: impl Iterator<Item = &'a str>) -> Frame {
        let longest = names.map(|n| text_width(n, 12.0)).fold(0.0, f64::max);
        // Swatch (28 px) and gaps either side of the text.
        let right = RIGHT.max(16.0 + 28.0 + longest + 12.0);
        Frame {
            w: LEFT + PLOT_W + right,
        }
    }
    /// Right end of the plot area.
    fn x1(&self) -> f64 {
        LEFT + PLOT_W
    }
}
const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// One axis: its label and whether it is logarithmic (base 10).
#[derive(Debug, Clone)]
pub struct Axis {
    /// Label under or beside the axis.
    pub label: String,
    /// Log scale (non-positive values are left out).
    pub log: bool,
}

impl Axis {
    /// A linear axis.
    pub fn linear(label: &str) -> Axis {
        Axis {
            label: label.into(),
            log: false,
        }
    }

    /// A log10 axis.
    pub fn log(label: &str) -> Axis {
        Axis {
            label: label.into(),
            log: true,
        }
    }

    /// Log when the largest positive value is more than 5× the smallest (a
    /// linear axis would flatten the small ones to slivers), else linear.
    pub fn auto(label: &str, values: impl IntoIterator<Item = f64>) -> Axis {
        let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
        for v in values.into_iter().filter(|v| v.is_finite() && *v > 0.0) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if lo.is_finite() && hi / lo > 5.0 {
            Axis::log(label)
        } else {
            Axis::linear(label)
        }
    }
}

/// One named line of `(x, y)` points.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// Points in drawing order.
    pub points: Vec<(f64, f64)>,
    /// Dashed line (to tell a reference, such as a floor, from a measurement).
    pub dashed: bool,
}

/// Text safe inside SVG elements and attribute values.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// A round step (1, 2 or 5 times a power of ten) giving about `n` ticks
/// over `span`.
pub fn nice_step(span: f64, n: usize) -> f64 {
    if !(span.is_finite() && span > 0.0) || n == 0 {
        return 1.0;
    }
    let raw = span / n as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let m = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// A value for a tick label: short, no trailing zeros.
pub fn tick_label(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1e9 {
        format!("{}G", trim(v / 1e9))
    } else if a >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if a >= 1e4 {
        format!("{}k", trim(v / 1e3))
    } else {
        trim(v)
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// A mapping from data to pixels along one axis.
#[derive(Debug, Clone, Copy)]
struct Scale {
    lo: f64,
    hi: f64,
    log: bool,
    p0: f64,
    p1: f64,
}

impl Scale {
    /// Fit `vals` (already filtered for the log case), padded to round ends.
    fn fit(vals: impl Iterator<Item = f64>, log: bool, p0: f64, p1: f64, zero: bool) -> Scale {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in vals {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if !lo.is_finite() {
            (lo, hi) = if log { (1.0, 10.0) } else { (0.0, 1.0) };
        }
        if log {
            lo = 10f64.powf(lo.log10().floor());
            hi = 10f64.powf(hi.log10().ceil());
            if hi <= lo {
                hi = lo * 10.0;
            }
        } else {
            if zero {
                lo = lo.min(0.0);
                hi = hi.max(0.0);
            }
            if hi <= lo {
                hi = lo + 1.0;
            }
            let step = nice_step(hi - lo, 5);
            lo = (lo / step).floor() * step;
            hi = (hi / step).ceil() * step;
        }
        Scale {
            lo,
            hi,
            log,
            p0,
            p1,
        }
    }

    fn px(&self, v: f64) -> f64 {
        let t = if self.log {
            (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        self.p0 + t * (self.p1 - self.p0)
    }

    fn ticks(&self) -> Vec<f64> {
        if self.log {
            let (a, b) = (
                self.lo.log10().round() as i32,
                self.hi.log10().round() as i32,
            );
            let decades = (b - a).max(1);
            let mut t = Vec::new();
            for e in a..=b {
                let base = 10f64.powi(e);
                t.push(base);
                // Few decades: also mark 2× and 5×.
                if decades <= 2 && e < b {
                    t.push(2.0 * base);
                    t.push(5.0 * base);
                }
            }
            t
        } else {
            let step = nice_step(self.hi - self.lo, 5);
            let n = ((self.hi - self.lo) / step).round() as usize;
            (0..=n).map(|i| self.lo + i as f64 * step).collect()
        }
    }
}

fn usable(v: f64, log: bool) -> bool {
    v.is_finite() && (!log || v > 0.0)
}

fn header(svg: &mut String, f: &Frame, title: &str) {
    let w = f.w;
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{H}" viewBox="0 0 {w} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = write!(
        svg,
        r#"<rect width="{w}" height="{H}" fill="white"/><text x="{}" y="24" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"#,
        w / 2.0,
        escape(title)
    );
}

fn axes(svg: &mut String, f: &Frame, xs: &Scale, ys: &Scale, x: &Axis, y: &Axis, x_ticks: bool) {
    let (x0, x1, y0, y1) = (LEFT, f.x1(), H - BOTTOM, TOP);
    for t in ys.ticks() {
        let py = ys.px(t);
        let _ = write!(
            svg,
            r##"<line x1="{x0}" y1="{py:.1}" x2="{x1}" y2="{py:.1}" stroke="#e4e4e4"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            x0 - 6.0,
            py + 4.0,
            tick_label(t)
        );
    }
    if x_ticks {
        for t in xs.ticks() {
            let px = xs.px(t);
            let _ = write!(
                svg,
                r##"<line x1="{px:.1}" y1="{y0}" x2="{px:.1}" y2="{y1}" stroke="#e4e4e4"/><text x="{px:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                y0 + 16.0,
                tick_label(t)
            );
        }
    }
    let _ = write!(
        svg,
        r##"<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}" stroke="#333"/><line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}" stroke="#333"/>"##
    );
    let _ = write!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        (x0 + x1) / 2.0,
        H - 14.0,
        escape(&x.label)
    );
    let _ = write!(
        svg,
        r#"<text transform="translate(18 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        (y0 + y1) / 2.0,
        escape(&y.label)
    );
}

fn legend(svg: &mut String, f: &Frame, names: &[(&str, bool)]) {
    let x = f.x1() + 16.0;
    for (i, (name, dashed)) in names.iter().enumerate() {
        let y = TOP + 10.0 + i as f64 * 18.0;
        let c = COLORS[i % COLORS.len()];
        let dash = if *dashed {
            r#" stroke-dasharray="5 3""#
        } else {
            ""
        };
        let _ = write!(
            svg,
            r#"<line x1="{x}" y1="{y}" x2="{:.1}" y2="{y}" stroke="{c}" stroke-width="2.5"{dash}/><text x="{:.1}" y="{:.1}">{}</text>"#,
            x + 22.0,
            x + 28.0,
            y + 4.0,
            escape(name)
        );
    }
}

/// A line chart of `series` (a CDF when y is a fraction and `step` is set:
/// drawn as a staircase).
pub fn line_chart(title: &str, x: &Axis, y: &Axis, series: &[Series], step: bool) -> String {
    let pts = || {
        series
            .iter()
            .flat_map(|s| s.points.iter())
            .filter(|p| usable(p.0, x.log) && usable(p.1, y.log))
    };
    let f = Frame::for_legend(series.iter().map(|s| s.name.as_str()));
    let xs = Scale::fit(pts().map(|p| p.0), x.log, LEFT, f.x1(), false);
    let ys = Scale::fit(pts().map(|p| p.1), y.log, H - BOTTOM, TOP, true);
    let mut svg = String::new();
    header(&mut svg, &f, title);
    axes(&mut svg, &f, &xs, &ys, x, y, true);
    for (i, s) in series.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        let mut path = String::new();
        let mut last: Option<(f64, f64)> = None;
        for &(vx, vy) in s
            .points
            .iter()
            .filter(|p| usable(p.0, x.log) && usable(p.1, y.log))
        {
            let (px, py) = (xs.px(vx), ys.px(vy));
            if let (true, Some((_, ly))) = (step, last) {
                let _ = write!(path, "{px:.1},{ly:.1} ");
            }
            let _ = write!(path, "{px:.1},{py:.1} ");
            last = Some((px, py));
        }
        let dash = if s.dashed {
            r#" stroke-dasharray="5 3""#
        } else {
            ""
        };
        let _ = write!(
            svg,
            r#"<polyline fill="none" stroke="{c}" stroke-width="2"{dash} points="{}"/>"#,
            path.trim_end()
        );
        if !step && s.points.len() <= 32 {
            for &(vx, vy) in s
                .points
                .iter()
                .filter(|p| usable(p.0, x.log) && usable(p.1, y.log))
            {
                let _ = write!(
                    svg,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{c}"/>"#,
                    xs.px(vx),
                    ys.px(vy)
                );
            }
        }
    }
    let names: Vec<(&str, bool)> = series.iter().map(|s| (s.name.as_str(), s.dashed)).collect();
    legend(&mut svg, &f, &names);
    svg.push_str("</svg>\n");
    svg
}

/// A grouped bar chart: one group per category, one bar per series
/// (`values[s][c]` is series `s` in category `c`; a missing value draws no bar).
pub fn bar_chart(
    title: &str,
    y: &Axis,
    categories: &[String],
    series: &[(String, Vec<f64>)],
) -> String {
    let vals = || {
        series
            .iter()
            .flat_map(|s| s.1.iter().copied())
            .filter(|&v| usable(v, y.log))
    };
    let f = Frame::for_legend(series.iter().map(|s| s.0.as_str()));
    let ys = Scale::fit(vals(), y.log, H - BOTTOM, TOP, true);
    let xs = Scale::fit([0.0, 1.0].into_iter(), false, LEFT, f.x1(), false);
    let mut svg = String::new();
    header(&mut svg, &f, title);
    axes(&mut svg, &f, &xs, &ys, &Axis::linear(""), y, false);
    let n_cat = categories.len().max(1) as f64;
    let group = PLOT_W / n_cat;
    let bar = group * 0.8 / series.len().max(1) as f64;
    let base = if y.log { H - BOTTOM } else { ys.px(0.0) };
    for (ci, cat) in categories.iter().enumerate() {
        let gx = LEFT + ci as f64 * group;
        for (si, (_, v)) in series.iter().enumerate() {
            let Some(&val) = v.get(ci) else { continue };
            if !usable(val, y.log) {
                continue;
            }
            let top = ys.px(val);
            let (ry, rh) = if top < base {
                (top, base - top)
            } else {
                (base, top - base)
            };
            let _ = write!(
                svg,
                r#"<rect x="{:.1}" y="{ry:.1}" width="{:.1}" height="{rh:.1}" fill="{}"><title>{}</title></rect>"#,
                gx + group * 0.1 + si as f64 * bar,
                bar * 0.92,
                COLORS[si % COLORS.len()],
                escape(&tick_label(val))
            );
        }
        let _ = write!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            gx + group / 2.0,
            H - BOTTOM + 16.0,
            escape(cat)
        );
    }
    let names: Vec<(&str, bool)> = series.iter().map(|s| (s.0.as_str(), false)).collect();
    legend(&mut svg, &f, &names);
    svg.push_str("</svg>\n");
    svg
}

/// The value of attribute `name` in the tag text `tag`.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let at = tag.find(&key)? + key.len();
    tag[at..].split('"').next()
}

/// Checks a chart as a reader would see it: every horizontal text (its
/// estimated extent from `x`, anchor and font size) lies inside the
/// picture, every line has points, and there is something drawn. Returns
/// what is wrong, naming the text or series.
pub fn check(svg: &str) -> Result<(), String> {
    let open = svg.split('>').next().unwrap_or("");
    let num = |tag: &str, name: &str| attr(tag, name).and_then(|v| v.parse::<f64>().ok());
    let (w, h) = (
        num(open, "width").ok_or("no width")?,
        num(open, "height").ok_or("no height")?,
    );
    let mut drawn = 0;
    for piece in svg.split("<text").skip(1) {
        let (tag, rest) = piece.split_once('>').ok_or("unclosed <text>")?;
        let content = rest.split("</text>").next().unwrap_or("");
        if tag.contains("transform=") {
            continue; // the rotated y-axis label: placed by hand
        }
        let (x, y) = (
            num(tag, "x").ok_or("text without x")?,
            num(tag, "y").ok_or("text without y")?,
        );
        let size = num(tag, "font-size").unwrap_or(12.0);
        let width = text_width(content, size);
        let (l, r) = match attr(tag, "text-anchor") {
            Some("middle") => (x - width / 2.0, x + width / 2.0),
            Some("end") => (x - width, x),
            _ => (x, x + width),
        };
        if l < 0.0 || r > w || y - size < 0.0 || y > h {
            return Err(format!(
                "text '{content}' at ({x:.0}, {y:.0}) spans {l:.0}..{r:.0} outside 0..{w:.0} × 0..{h:.0}"
            ));
        }
    }
    for piece in svg.split("<polyline").skip(1) {
        let tag = piece.split('>').next().unwrap_or("");
        if attr(tag, "points").is_none_or(|p| p.trim().is_empty()) {
            return Err("a line with no points".into());
        }
        drawn += 1;
    }
    drawn += svg.matches("<rect x=").count();
    if drawn == 0 {
        return Err("nothing drawn: no line and no bar".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(h: &str, n: &str) -> usize {
        h.matches(n).count()
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape(r#"a<b & "c">'"#),
            "a&lt;b &amp; &quot;c&quot;&gt;&#39;"
        );
    }

    #[test]
    fn nice_steps_and_labels() {
        assert_eq!(nice_step(10.0, 5), 2.0);
        assert_eq!(nice_step(1.0, 5), 0.2);
        assert_eq!(nice_step(700.0, 5), 200.0);
        assert_eq!(nice_step(0.0, 5), 1.0);
        assert_eq!(tick_label(0.2), "0.2");
        assert_eq!(tick_label(25_000.0), "25k");
        assert_eq!(tick_label(1_500_000.0), "1.5M");
        assert_eq!(tick_label(3.0), "3");
        assert_eq!(tick_label(0.0), "0");
    }

    #[test]
    fn log_scale_spaces_decades_evenly() {
        let s = Scale::fit([3.0, 4000.0].into_iter(), true, 0.0, 300.0, false);
        assert_eq!((s.lo, s.hi), (1.0, 10_000.0));
        assert!((s.px(10.0) - 75.0).abs() < 1e-9);
        assert!((s.px(1000.0) - 225.0).abs() < 1e-9);
        assert_eq!(s.ticks(), vec![1.0, 10.0, 100.0, 1000.0, 10_000.0]);
        // Linear: round ends that include the data and zero.
        let l = Scale::fit([3.0, 97.0].into_iter(), false, 0.0, 100.0, true);
        assert_eq!((l.lo, l.hi), (0.0, 100.0));
        assert_eq!(l.ticks().len(), 6);
    }

    #[test]
    fn line_chart_draws_every_series() {
        let series = vec![
            Series {
                name: "echo <floor>".into(),
                points: vec![(1000.0, 0.1), (2000.0, 0.5), (9000.0, 1.0)],
                dashed: true,
            },
            Series {
                name: "rread".into(),
                points: vec![(1500.0, 0.2), (0.0, 0.4), (20_000.0, 1.0)],
                dashed: false,
            },
        ];
        let svg = line_chart(
            "CDF",
            &Axis::log("ns"),
            &Axis::linear("fraction"),
            &series,
            true,
        );
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(count(&svg, "<polyline"), 2);
        assert_eq!(count(&svg, "stroke-dasharray"), 2); // the line and its legend entry
        assert!(svg.contains("echo &lt;floor&gt;"));
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
        // The zero x value is left out on a log axis: 3 + 2 points, and a
        // staircase doubles every point after the first.
        let rread = svg.split("<polyline").nth(2).unwrap();
        let pts = rread
            .split("points=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        assert_eq!(pts.split_whitespace().count(), 3);
    }

    #[test]
    fn long_legends_widen_the_picture_and_pass_the_check() {
        let name = "SDK over UDP, synchronous rread, 4 KiB, loopback (median of 5 laps)";
        let series = vec![Series {
            name: name.into(),
            points: vec![(1.0, 0.5), (2.0, 1.0)],
            dashed: false,
        }];
        let svg = line_chart("CDF", &Axis::log("µs"), &Axis::linear("f"), &series, true);
        check(&svg).unwrap();
        // The old fixed 760 px frame clipped this legend entry.
        let clipped = svg.replace(r#"width="#, r#"data-w="#).replacen(
            "<svg ",
            r#"<svg width="760" height="440" "#,
            1,
        );
        let e = check(&clipped).unwrap_err();
        assert!(e.contains(name), "{e}");
    }

    #[test]
    fn check_finds_empty_series_and_empty_charts() {
        let series = vec![Series {
            name: "nothing".into(),
            points: vec![],
            dashed: false,
        }];
        let svg = line_chart("x", &Axis::linear("a"), &Axis::linear("b"), &series, false);
        assert_eq!(check(&svg).unwrap_err(), "a line with no points");
        let bars = bar_chart("y", &Axis::linear("v"), &[], &[]);
        assert!(check(&bars).unwrap_err().starts_with("nothing drawn"));
    }

    #[test]
    fn auto_axis_goes_log_across_decades() {
        assert!(Axis::auto("ops", [0.03, 2.7]).log);
        assert!(Axis::auto("ops", [0.29, 2.7]).log);
        assert!(!Axis::auto("ops", [1.0, 2.7]).log);
        assert!(!Axis::auto("ops", [0.0, -1.0]).log);
    }

    #[test]
    fn bar_chart_has_one_bar_per_value() {
        let cats = vec!["16 B".to_string(), "4 KiB".to_string()];
        let series = vec![
            ("floor".to_string(), vec![10.0, 20.0]),
            ("clio".to_string(), vec![15.0]),
        ];
        let svg = bar_chart("p50", &Axis::linear("µs"), &cats, &series);
        assert_eq!(count(&svg, "<rect x="), 3);
        assert!(svg.contains(">4 KiB</text>"));
        let empty = bar_chart("none", &Axis::log("x"), &[], &[]);
        assert!(empty.trim_end().ends_with("</svg>") && !empty.contains("NaN"));
    }
}
