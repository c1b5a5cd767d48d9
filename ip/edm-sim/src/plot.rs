//! Dependency-free SVG plots in the layout of EDM Fig. 8: slowdown-versus-load line panels for
//! the microbenchmarks and grouped bars for the mixed and application workloads. The y axis is
//! logarithmic when a panel's values span more than a factor of 10 (Fastpass beside the rest),
//! linear otherwise, so schemes near 1.0 stay apart; published values are drawn beside ours
//! (dashed lines and hollow markers); each panel has its own legend inside its frame.
//! [`lint`] checks a rendered plot for text outside the canvas and empty series.

use std::fmt::Write;

/// Data of one panel.
#[derive(Debug, Clone, PartialEq)]
pub enum PanelData {
    /// One line per series over shared x values.
    Lines {
        /// X values (e.g. loads).
        x: Vec<f64>,
        /// (series name, y per x; NaN = missing).
        series: Vec<(String, Vec<f64>)>,
    },
    /// Grouped bars: one group per label, one bar per series.
    Bars {
        /// Group labels (e.g. workload names).
        groups: Vec<String>,
        /// (series name, value per group; NaN = missing).
        series: Vec<(String, Vec<f64>)>,
    },
}

/// One titled panel.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// Title above the panel (with its own panel letter).
    pub title: String,
    /// X-axis label.
    pub x_label: String,
    /// The data.
    pub data: PanelData,
    /// Reference (published) values per series name, on the same x values or groups; drawn
    /// dashed (lines) or as hollow diamonds (bars) in the series' colour.
    pub reference: Vec<(String, Vec<f64>)>,
    /// Series left out of the axis range and not drawn, so they do not squash the others
    /// (Fastpass); the panel states their range in a note inside the frame.
    pub off_scale: Vec<String>,
}

const COLORS: [&str; 9] = [
    "#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#7f7f7f", "#e377c2",
    "#17becf",
];
const PW: f64 = 460.0;
const PH: f64 = 300.0;
const ML: f64 = 60.0;
const MT: f64 = 40.0;
const MB: f64 = 50.0;
const MR: f64 = 20.0;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn values(p: &Panel) -> impl Iterator<Item = f64> + '_ {
    let s = match &p.data {
        PanelData::Lines { series, .. } | PanelData::Bars { series, .. } => series,
    };
    s.iter()
        .chain(&p.reference)
        .filter(|(n, _)| !p.off_scale.contains(n))
        .flat_map(|(_, v)| v.iter().copied())
        .filter(|v| v.is_finite() && *v > 0.0)
}

/// Approximate width in pixels of `text` at `size` px (sans-serif averages ≈ 0.6 em).
fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * size * 0.6
}

/// Render `panels` in a grid with `cols` columns; every panel carries its own legend inside
/// its frame.
pub fn render(title: &str, panels: &[Panel], cols: usize) -> String {
    let cols = cols.max(1);
    let rows = panels.len().div_ceil(cols).max(1);
    let cw = ML + PW + MR;
    let ch = MT + PH + MB;
    let (w, h) = (cw * cols as f64, ch * rows as f64 + 30.0);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="20" text-anchor="middle" font-size="14">{}</text>"#,
        w / 2.0,
        esc(title)
    );
    // One colour per series name across all panels.
    let mut names: Vec<String> = Vec::new();
    for p in panels {
        let series = match &p.data {
            PanelData::Lines { series, .. } | PanelData::Bars { series, .. } => series,
        };
        for (n, _) in series {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
    }
    let color =
        |name: &str| COLORS[names.iter().position(|n| n == name).unwrap_or(0) % COLORS.len()];
    for (pi, p) in panels.iter().enumerate() {
        let ox = (pi % cols) as f64 * cw + ML;
        let oy = (pi / cols) as f64 * ch + MT + 30.0;
        let (lo, hi) = values(p).fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
        let (lo, hi) = if lo > hi {
            (1.0, 2.0)
        } else {
            (lo.min(1.0), hi)
        };
        let log = hi / lo > 10.0;
        // Axis range and ticks.
        let (y0, y1, ticks): (f64, f64, Vec<f64>) = if log {
            // Head room for the legend: a factor of 4 above the highest value.
            let (l0, l1) = (lo.log10().floor(), (hi * 4.0).log10().ceil());
            let mut t = Vec::new();
            let mut d = l0;
            while d <= l1 {
                for m in [1.0, 2.0, 5.0] {
                    let v = m * 10f64.powf(d);
                    if v.log10() <= l1 + 1e-9 {
                        t.push(v);
                    }
                }
                d += 1.0;
            }
            (l0, l1, t)
        } else {
            // Linear from 1 (or below) with a head room of 25 % for the legend.
            let top = lo + (hi - lo) * 1.35 + 0.05;
            let span = top - lo;
            let step = [0.05, 0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 5.0]
                .into_iter()
                .find(|st| span / st <= 8.0)
                .unwrap_or(10.0);
            let start = (lo / step).floor() * step;
            let mut t = Vec::new();
            let mut v = start;
            while v <= top + 1e-9 {
                t.push(v);
                v += step;
            }
            (start, top, t)
        };
        let y_of = |v: f64| {
            let f = if log {
                (v.log10() - y0) / (y1 - y0)
            } else {
                (v - y0) / (y1 - y0)
            };
            oy + PH - f * PH
        };
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle" font-size="13">{}</text>"#,
            ox + PW / 2.0,
            oy - 8.0,
            esc(&p.title)
        );
        let _ = writeln!(
            s,
            r##"<rect x="{ox}" y="{oy}" width="{PW}" height="{PH}" fill="none" stroke="#333"/>"##
        );
        for v in &ticks {
            let y = y_of(*v);
            let _ = writeln!(
                s,
                r##"<line x1="{ox}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/>"##,
                ox + PW
            );
            let label = if log {
                format!("{v}")
            } else {
                format!("{v:.2}")
            };
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{:.1}" text-anchor="end">{label}</text>"#,
                ox - 4.0,
                y + 4.0
            );
        }
        let ylab = if log {
            "slowdown (log scale)"
        } else {
            "slowdown"
        };
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle" transform="rotate(-90 {} {})">{ylab}</text>"#,
            ox - 45.0,
            oy + PH / 2.0,
            ox - 45.0,
            oy + PH / 2.0
        );
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            ox + PW / 2.0,
            oy + PH + 38.0,
            esc(&p.x_label)
        );
        let reference = |name: &str| p.reference.iter().find(|(n, _)| n == name).map(|r| &r.1);
        let series = match &p.data {
            PanelData::Lines { x, series } => {
                let (x0, x1) = x
                    .iter()
                    .fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
                let span = if x1 > x0 { x1 - x0 } else { 1.0 };
                let x_of = |v: f64| ox + 20.0 + (v - x0) / span * (PW - 40.0);
                for &xv in x {
                    let _ = writeln!(
                        s,
                        r#"<text x="{:.1}" y="{}" text-anchor="middle">{xv}</text>"#,
                        x_of(xv),
                        oy + PH + 16.0
                    );
                }
                for (name, ys) in series.iter().filter(|(n, _)| !p.off_scale.contains(n)) {
                    let c = color(name);
                    let pts = |ys: &[f64]| -> Vec<(f64, f64)> {
                        x.iter()
                            .zip(ys)
                            .filter(|(_, y)| y.is_finite() && **y > 0.0)
                            .map(|(&xv, &y)| (x_of(xv), y_of(y)))
                            .collect()
                    };
                    let ours = pts(ys);
                    let line = |v: &[(f64, f64)]| {
                        v.iter()
                            .map(|(a, b)| format!("{a:.1},{b:.1}"))
                            .collect::<Vec<_>>()
                            .join(" ")
                    };
                    let _ = writeln!(
                        s,
                        r#"<polyline class="series" data-name="{}" fill="none" stroke="{c}" stroke-width="2" points="{}"/>"#,
                        esc(name),
                        line(&ours)
                    );
                    for (px, py) in &ours {
                        let _ =
                            writeln!(s, r#"<circle cx="{px:.1}" cy="{py:.1}" r="3" fill="{c}"/>"#);
                    }
                    if let Some(r) = reference(name) {
                        let pub_pts = pts(r);
                        if pub_pts.len() > 1 {
                            let _ = writeln!(
                                s,
                                r#"<polyline class="published" fill="none" stroke="{c}" stroke-width="1.5" stroke-dasharray="5 3" points="{}"/>"#,
                                line(&pub_pts)
                            );
                        }
                        for (px, py) in &pub_pts {
                            let _ = writeln!(
                                s,
                                r#"<circle cx="{px:.1}" cy="{py:.1}" r="4" fill="white" stroke="{c}" stroke-width="1.5"/>"#
                            );
                        }
                    }
                }
                series
            }
            PanelData::Bars { groups, series } => {
                let gw = PW / groups.len().max(1) as f64;
                let bw = (gw * 0.8) / series.len().max(1) as f64;
                let base = oy + PH;
                for (gi, g) in groups.iter().enumerate() {
                    let gx = ox + gi as f64 * gw;
                    let _ = writeln!(
                        s,
                        r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
                        gx + gw / 2.0,
                        oy + PH + 16.0,
                        esc(g)
                    );
                    for (si, (name, vals)) in series.iter().enumerate() {
                        if p.off_scale.contains(name) {
                            continue;
                        }
                        let x = gx + gw * 0.1 + si as f64 * bw;
                        if let Some(&v) = vals.get(gi).filter(|v| v.is_finite() && **v > 0.0) {
                            let y = y_of(v).clamp(oy, base);
                            let _ = writeln!(
                                s,
                                r#"<rect class="bar" x="{x:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{} {}: {v:.2}</title></rect>"#,
                                bw * 0.95,
                                (base - y).max(0.0),
                                color(name),
                                esc(name),
                                esc(g)
                            );
                        }
                        if let Some(&v) = reference(name)
                            .and_then(|r| r.get(gi))
                            .filter(|v| v.is_finite() && **v > 0.0)
                        {
                            let (cx, cy) = (x + bw * 0.475, y_of(v).clamp(oy, base));
                            let _ = writeln!(
                                s,
                                r#"<path class="published" d="M{cx:.1},{:.1} L{:.1},{cy:.1} L{cx:.1},{:.1} L{:.1},{cy:.1} Z" fill="white" stroke="{}" stroke-width="1.5"><title>{} {} published: {v:.2}</title></path>"#,
                                cy - 5.0,
                                cx + 4.0,
                                cy + 5.0,
                                cx - 4.0,
                                color(name),
                                esc(name),
                                esc(g)
                            );
                        }
                    }
                }
                series
            }
        };
        // Off-scale series: their range, under the legend inside the frame.
        let legend_rows = (series.len() - p.off_scale.len().min(series.len())
            + usize::from(!p.reference.is_empty()))
        .div_ceil(2);
        for (k, name) in p.off_scale.iter().enumerate() {
            let vals: Vec<f64> = series
                .iter()
                .chain(&p.reference)
                .filter(|(n, _)| n == name)
                .flat_map(|(_, v)| v.iter().copied())
                .filter(|v| v.is_finite())
                .collect();
            if vals.is_empty() {
                continue;
            }
            let (a, b) = vals
                .iter()
                .fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
            let _ = writeln!(
                s,
                r#"<text class="offscale" x="{:.1}" y="{:.1}" font-size="11">{} off scale, not drawn: {a:.1}–{b:.1} (ours and published)</text>"#,
                ox + 8.0,
                oy + 8.0 + (legend_rows + 1 + k) as f64 * 15.0,
                esc(name)
            );
        }
        // Legend inside the frame, top left, two columns.
        let mut entries: Vec<(String, &str)> = series
            .iter()
            .filter(|(n, _)| !p.off_scale.contains(n))
            .map(|(n, _)| (n.clone(), color(n)))
            .collect();
        if !p.reference.is_empty() {
            entries.push(("hollow/dashed: published".into(), "#000"));
        }
        let per_col = entries.len().div_ceil(2);
        for (i, (n, c)) in entries.iter().enumerate() {
            let lx = ox + 8.0 + (i / per_col) as f64 * (PW / 2.0);
            let ly = oy + 8.0 + (i % per_col) as f64 * 15.0;
            let _ = writeln!(
                s,
                r##"<rect x="{lx:.1}" y="{ly:.1}" width="12" height="10" fill="{c}"/><text class="legend" x="{:.1}" y="{:.1}">{}</text>"##,
                lx + 16.0,
                ly + 9.5,
                esc(n)
            );
        }
    }
    s.push_str("</svg>\n");
    s
}

/// Check a plot from [`render`]: every text lies inside the canvas (by an estimate of its
/// width), every series has at least one drawn point or bar, and no polyline is empty. The
/// error names the offending text or series.
pub fn lint(svg: &str) -> Result<(), String> {
    let attr = |tag: &str, name: &str| -> Option<f64> {
        let k = format!(" {name}=\"");
        let i = tag.find(&k)? + k.len();
        tag[i..].split('"').next()?.parse().ok()
    };
    let head = svg.split('>').next().ok_or("no svg element")?;
    let (w, h) = (
        attr(head, "width").ok_or("svg has no width")?,
        attr(head, "height").ok_or("svg has no height")?,
    );
    let mut rest = svg;
    while let Some(i) = rest.find("<text ") {
        let tail = &rest[i..];
        let end = tail.find("</text>").ok_or("unterminated text")?;
        let (tag, content) = tail[..end].split_once('>').ok_or("bad text element")?;
        rest = &tail[end..];
        if tag.contains("rotate(") {
            continue;
        }
        let x = attr(tag, "x").ok_or("text without x")?;
        let y = attr(tag, "y").ok_or("text without y")?;
        let size = attr(tag, "font-size").unwrap_or(12.0);
        let tw = text_width(content, size);
        let (l, r) = if tag.contains(r#"text-anchor="middle""#) {
            (x - tw / 2.0, x + tw / 2.0)
        } else if tag.contains(r#"text-anchor="end""#) {
            (x - tw, x)
        } else {
            (x, x + tw)
        };
        if l < 0.0 || r > w || y - size < 0.0 || y > h {
            return Err(format!(
                "text `{content}` at ({x}, {y}) is clipped by the {w}×{h} canvas"
            ));
        }
    }
    for chunk in svg.split("<polyline").skip(1) {
        let pts = chunk
            .split("points=\"")
            .nth(1)
            .and_then(|p| p.split('"').next())
            .unwrap_or("");
        if pts.trim().is_empty() {
            let name = chunk
                .split("data-name=\"")
                .nth(1)
                .and_then(|p| p.split('"').next())
                .unwrap_or("?");
            return Err(format!("series `{name}` has no points"));
        }
    }
    if !svg.contains("<polyline") && !svg.contains(r#"class="bar""#) {
        return Err("no series drawn".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_lines_and_bars() {
        let panels = vec![
            Panel {
                title: "write-only".into(),
                x_label: "load".into(),
                data: PanelData::Lines {
                    x: vec![0.2, 0.9],
                    series: vec![("edm".into(), vec![1.0, 1.3])],
                },
                reference: vec![("edm".into(), vec![1.01, 1.38])],
                off_scale: vec![],
            },
            Panel {
                title: "apps".into(),
                x_label: "workload".into(),
                data: PanelData::Bars {
                    groups: vec!["hadoop".into()],
                    series: vec![("cxl".into(), vec![6.8])],
                },
                reference: vec![],
                off_scale: vec![],
            },
        ];
        let svg = render("Fig 8 <test>", &panels, 2);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(
            svg.contains("<polyline") && svg.contains("<rect x=") && svg.contains("&lt;test&gt;")
        );
        assert_eq!(svg.matches("<circle").count(), 4, "two ours, two published");
        assert!(svg.contains("stroke-dasharray"));
        lint(&svg).unwrap();
    }

    #[test]
    fn lint_catches_clipped_text_and_empty_series() {
        let panel = |t: &str, ys: Vec<f64>| Panel {
            title: t.into(),
            x_label: "load".into(),
            data: PanelData::Lines {
                x: vec![0.2, 0.9],
                series: vec![("edm".into(), ys)],
            },
            reference: vec![],
            off_scale: vec![],
        };
        let long = "x".repeat(200);
        let e = lint(&render("t", &[panel(&long, vec![1.0, 1.2])], 1)).unwrap_err();
        assert!(e.contains("clipped"), "{e}");
        let e = lint(&render("t", &[panel("ok", vec![f64::NAN, f64::NAN])], 1)).unwrap_err();
        assert!(e.contains("`edm` has no points"), "{e}");
    }

    #[test]
    fn log_scale_only_when_values_span_decades() {
        let mk = |v: f64| Panel {
            title: "p".into(),
            x_label: "w".into(),
            data: PanelData::Bars {
                groups: vec!["a".into()],
                series: vec![("edm".into(), vec![1.2]), ("fastpass".into(), vec![v])],
            },
            reference: vec![],
            off_scale: vec![],
        };
        assert!(render("t", &[mk(40.0)], 1).contains("log scale"));
        assert!(!render("t", &[mk(1.9)], 1).contains("log scale"));
    }
}
