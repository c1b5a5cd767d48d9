//! The published slowdowns of EDM's simulator (mean MCT / ideal), from the design brief.

/// Loads of the published load sweeps.
pub const LOADS: [f64; 5] = [0.2, 0.4, 0.6, 0.8, 0.9];

/// Write-only all-to-all 64 B, per scheme, per load in [`LOADS`] (NaN = not published).
pub const WRITE_ONLY: [(&str, [f64; 5]); 7] = [
    ("edm", [1.01, 1.05, 1.17, 1.35, 1.38]),
    ("ird", [1.00, 1.12, 1.44, 1.61, 1.69]),
    ("pfabric", [1.16, 1.28, 1.48, 1.79, 1.81]),
    ("pfc", [1.02, 1.37, 1.51, 1.90, 1.98]),
    ("dctcp", [1.21, 1.37, 1.67, 1.93, 2.07]),
    ("cxl", [1.05, 1.16, 1.42, 1.90, 2.02]),
    ("fastpass", [6.59, f64::NAN, f64::NAN, f64::NAN, 38.94]),
];

/// Read-only all-to-all 64 B (only these schemes are published).
pub const READ_ONLY: [(&str, [f64; 5]); 3] = [
    ("edm", [1.02, 1.06, 1.11, 1.20, 1.22]),
    ("ird", [1.09, 1.20, 1.25, 1.50, 1.60]),
    ("cxl", [1.05, 1.27, 1.46, 1.66, 1.73]),
];

/// Write shares of the published mixed workload at load 0.8.
pub const MIXED_WRITE_SHARES: [f64; 3] = [0.2, 0.5, 0.8];

/// Mixed reads and writes at load 0.8, per write share in [`MIXED_WRITE_SHARES`].
pub const MIXED: [(&str, [f64; 3]); 3] = [
    ("edm", [1.23, 1.24, 1.30]),
    ("ird", [1.63, 1.64, 1.66]),
    ("cxl", [1.72, 1.79, 1.84]),
];

/// Application traces at load 0.4.
pub const APPS: [&str; 5] = ["hadoop", "spark", "sparksql", "graphlab", "memcached"];

/// Application-trace slowdowns per app in [`APPS`].
pub const APP_SLOWDOWN: [(&str, [f64; 5]); 3] = [
    ("edm", [1.31, 1.37, 1.38, 1.39, 1.39]),
    ("cxl", [6.84, 8.37, 8.68, 8.71, 11.02]),
    ("pfc", [6.33, 6.81, 7.51, 7.60, 8.27]),
];

/// Published value for `scheme` (`edm-*` maps to `edm`) in `table` at index `i`.
pub fn lookup<const K: usize>(table: &[(&str, [f64; K])], scheme: &str, i: usize) -> Option<f64> {
    let key = if scheme.starts_with("edm") {
        "edm"
    } else {
        scheme
    };
    table
        .iter()
        .find(|(s, _)| *s == key)
        .and_then(|(_, v)| v.get(i).copied())
        .filter(|v| v.is_finite())
}
