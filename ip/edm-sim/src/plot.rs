//! Dependency-free SVG plots in the layout of EDM Fig. 8: slowdown-versus-load line panels for
//! the microbenchmarks and grouped bars for the mixed and application workloads, log-scale y.

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
    /// Title above the panel.
    pub title: String,
    /// X-axis label.
    pub x_label: String,
    /// The data.
    pub data: PanelData,
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

fn values(d: &PanelData) -> impl Iterator<Item = f64> + '_ {
    let s = match d {
        PanelData::Lines { series, .. } | PanelData::Bars { series, .. } => series,
    };
    s.iter()
        .flat_map(|(_, v)| v.iter().copied())
        .filter(|v| v.is_finite() && *v > 0.0)
}

/// Render `panels` in a grid with `cols` columns and a shared legend of series names.
pub fn render(title: &str, panels: &[Panel], cols: usize) -> String {
    let cols = cols.max(1);
    let rows = panels.len().div_ceil(cols).max(1);
    let cw = ML + PW + MR;
    let ch = MT + PH + MB;
    let legend_h = 40.0;
    let (w, h) = (cw * cols as f64, ch * rows as f64 + legend_h + 30.0);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="20" text-anchor="middle" font-size="15">{}</text>"#,
        w / 2.0,
        esc(title)
    );
    // Shared legend from the first panel's series names.
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
    for (i, n) in names.iter().enumerate() {
        let x = 20.0 + i as f64 * 110.0;
        let _ = writeln!(
            s,
            r#"<rect x="{x}" y="32" width="14" height="10" fill="{}"/>"#,
            color(n)
        );
        let _ = writeln!(s, r#"<text x="{}" y="42">{}</text>"#, x + 18.0, esc(n));
    }
    for (pi, p) in panels.iter().enumerate() {
        let ox = (pi % cols) as f64 * cw + ML;
        let oy = (pi / cols) as f64 * ch + MT + legend_h + 20.0;
        let (lo, hi) = values(&p.data).fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
        let (lo, hi) = if lo > hi {
            (1.0, 10.0)
        } else {
            (lo.min(1.0), hi.max(lo * 1.5))
        };
        let (l0, l1) = (
            lo.log10().floor(),
            hi.log10().ceil().max(lo.log10().floor() + 1.0),
        );
        let y_of = |v: f64| oy + PH - (v.log10() - l0) / (l1 - l0) * PH;
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
        // Log y grid: 1, 2, 5 per decade.
        let mut d = l0;
        while d <= l1 {
            for m in [1.0, 2.0, 5.0] {
                let v = m * 10f64.powf(d);
                if v.log10() > l1 + 1e-9 {
                    continue;
                }
                let y = y_of(v);
                let _ = writeln!(
                    s,
                    r##"<line x1="{ox}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/>"##,
                    ox + PW
                );
                let _ = writeln!(
                    s,
                    r#"<text x="{}" y="{:.1}" text-anchor="end">{}</text>"#,
                    ox - 4.0,
                    y + 4.0,
                    v
                );
            }
            d += 1.0;
        }
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle" transform="rotate(-90 {} {})">slowdown (MCT / ideal)</text>"#,
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
        match &p.data {
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
                for (name, ys) in series {
                    let pts: Vec<String> = x
                        .iter()
                        .zip(ys)
                        .filter(|(_, y)| y.is_finite() && **y > 0.0)
                        .map(|(&xv, &y)| format!("{:.1},{:.1}", x_of(xv), y_of(y)))
                        .collect();
                    let c = color(name);
                    let _ = writeln!(
                        s,
                        r#"<polyline fill="none" stroke="{c}" stroke-width="2" points="{}"/>"#,
                        pts.join(" ")
                    );
                    for pnt in &pts {
                        let (px, py) = pnt.split_once(',').expect("formatted pair");
                        let _ = writeln!(s, r#"<circle cx="{px}" cy="{py}" r="3" fill="{c}"/>"#);
                    }
                }
            }
            PanelData::Bars { groups, series } => {
                let gw = PW / groups.len().max(1) as f64;
                let bw = (gw * 0.8) / series.len().max(1) as f64;
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
                        let Some(&v) = vals.get(gi) else { continue };
                        if !(v.is_finite() && v > 0.0) {
                            continue;
                        }
                        let x = gx + gw * 0.1 + si as f64 * bw;
                        let y = y_of(v).min(oy + PH);
                        let base = y_of(10f64.powf(l0));
                        let _ = writeln!(
                            s,
                            r#"<rect x="{x:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{} {}: {v:.2}</title></rect>"#,
                            bw * 0.95,
                            (base - y).max(0.0),
                            color(name),
                            esc(name),
                            esc(g)
                        );
                    }
                }
            }
        }
    }
    s.push_str("</svg>\n");
    s
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
            },
            Panel {
                title: "apps".into(),
                x_label: "workload".into(),
                data: PanelData::Bars {
                    groups: vec!["hadoop".into()],
                    series: vec![("cxl".into(), vec![6.8])],
                },
            },
        ];
        let svg = render("Fig 8 <test>", &panels, 2);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(
            svg.contains("<polyline") && svg.contains("<rect x=") && svg.contains("&lt;test&gt;")
        );
        assert_eq!(svg.matches("<circle").count(), 2);
    }
}
