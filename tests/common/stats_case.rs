//! One `stats --json` result against a case of fixtures/diff/expected.json or
//! fixtures/stats/expected.json (numpy's statistics of oracle values).

use serde_json::Value as Json;

/// `got` within `rel` of `want` relative to `scale` (or to |want| when larger); null == null.
pub fn assert_close(got: &Json, want: &Json, rel: f64, scale: f64, what: &str) {
    if want.is_null() {
        assert!(got.is_null(), "{what}: got {got}, want null");
        return;
    }
    let (g, w) = (got.as_f64().unwrap(), want.as_f64().unwrap());
    let tol = rel * w.abs().max(scale);
    assert!((g - w).abs() <= tol, "{what}: got {g:e}, want {w:e}");
}

/// Counts, range, histogram and percentiles exact; mean and std to 1e-9.
pub fn check(case: &Json, got: &Json) {
    let (file, tensor) = (&case["file"], &case["tensor"]);
    let what = format!("{file} {tensor} {:?}", case["args"]);
    for field in [
        "type", "shape", "rows", "elements", "finite", "nan", "pos_inf", "neg_inf", "zeros", "min",
        "max",
    ] {
        assert_eq!(got[field], case[field], "{what} {field}");
    }
    let std = case["std"].as_f64().unwrap_or(0.0);
    assert_close(
        &got["mean"],
        &case["mean"],
        1e-9,
        std,
        &format!("{what} mean"),
    );
    assert_close(&got["std"], &case["std"], 1e-9, 0.0, &format!("{what} std"));
    // Exact order statistics, interpolated in f64 as numpy.percentile does.
    if case["percentiles"].is_null() {
        assert!(
            got["percentiles"].is_null(),
            "{what}: {}",
            got["percentiles"]
        );
    } else {
        for p in ["p1", "p50", "p99"] {
            assert_close(
                &got["percentiles"][p],
                &case["percentiles"][p],
                1e-12,
                0.0,
                &format!("{what} {p}"),
            );
        }
    }
    let (h, wh) = (&got["histogram"], &case["histogram"]);
    if wh.is_null() {
        assert!(h.is_null(), "{what}");
        return;
    }
    assert_eq!(h["bins"], wh["bins"], "{what}");
    assert_eq!(h["counts"], wh["counts"], "{what} counts");
    let edges = h["edges"].as_array().unwrap();
    let want_edges = wh["edges"].as_array().unwrap();
    assert_eq!(edges.len(), want_edges.len());
    for (g, w) in edges.iter().zip(want_edges) {
        assert_close(g, w, 1e-12, 1e-300, &format!("{what} edge"));
    }
}
