//! The report as one JSON document (`gguf-lens diff --format json`), snake_case keys.

use serde_json::{json, Value as Json};

use super::{DiffReport, KeyChange, Metadata, Shown, TensorRow, ValueRow};
use crate::compare::FieldValue;

fn field(v: &FieldValue) -> Json {
    match v {
        FieldValue::Absent => Json::Null,
        FieldValue::Text(s) => Json::from(s.as_str()),
        FieldValue::Int(n) => Json::from(*n),
        FieldValue::Float(x) => Json::from(*x),
    }
}

fn tensor(t: &TensorRow) -> Json {
    let mut out = json!({"name": t.name, "type": t.type_name, "shape": t.shape});
    if let Some(name) = &t.file_name {
        out["file_name"] = name.as_str().into();
    }
    out
}

fn value(s: &Option<Shown>) -> Json {
    s.as_ref().map_or(Json::Null, |s| s.json.clone())
}

fn change(c: &KeyChange) -> Json {
    let mut out = json!({"key": c.key, "type_a": c.type_a, "type_b": c.type_b});
    match &c.array {
        None => {
            out["a"] = value(&c.a);
            out["b"] = value(&c.b);
        }
        Some(a) => {
            out["item_type_a"] = a.item_type_a.name().into();
            out["item_type_b"] = a.item_type_b.name().into();
            out["len_a"] = a.len_a.into();
            out["len_b"] = a.len_b.into();
            out["differing_items"] = a.differing_items.into();
            out["first_difference"] = a.first_difference.into();
            out["item_a"] = value(&c.item_a);
            out["item_b"] = value(&c.item_b);
        }
    }
    out
}

fn metadata(m: &Metadata) -> Json {
    match m {
        Metadata::NotCompared => Json::Null,
        Metadata::Gguf {
            same,
            only_a,
            only_b,
            changed,
        } => {
            let entries = |list: &[super::KeyEntry]| -> Vec<Json> {
                list.iter()
                    .map(|e| {
                        json!({
                            "key": e.key,
                            "type": e.value.as_ref().map(|v| v.type_name),
                            "value": value(&e.value),
                        })
                    })
                    .collect()
            };
            json!({
                "only_a": entries(only_a),
                "only_b": entries(only_b),
                "changed": changed.iter().map(change).collect::<Vec<_>>(),
                "same": same,
            })
        }
        Metadata::Strings {
            same,
            only_a,
            only_b,
            changed,
        } => {
            let kv = |list: &[(String, String)]| -> Vec<Json> {
                list.iter()
                    .map(|(k, v)| json!({"key": k, "value": v}))
                    .collect()
            };
            json!({
                "only_a": kv(only_a),
                "only_b": kv(only_b),
                "changed": changed.iter().map(|(k, a, b)| json!({"key": k, "a": a, "b": b})).collect::<Vec<_>>(),
                "same": same,
            })
        }
    }
}

fn metrics(c: &ValueRow) -> Json {
    let m = &c.metrics;
    json!({
        "name": c.name,
        "type_a": c.type_a,
        "type_b": c.type_b,
        "shape": c.shape,
        "elements": m.elements,
        "count": m.count,
        "rmse": m.rmse,
        "max_abs": m.max_abs,
        "mean_abs": m.mean_abs,
        "rel_rmse": m.rel_rmse,
        "cosine": m.cosine,
        "nan_mismatch": m.nan_mismatch,
        "inf_mismatch": m.inf_mismatch,
        "identical": m.is_identical(),
    })
}

pub(super) fn render(r: &DiffReport) -> Json {
    let side = |s: &super::Side| match &s.quant_mix {
        Some(mix) if !r.logical => json!({
            "path": s.path,
            "quant_mix": mix.iter().map(|m| json!({
                "type": m.type_name,
                "tensors": m.tensors,
                "elements": m.elements,
                "bytes": m.bytes,
                "byte_share": m.byte_share,
            })).collect::<Vec<_>>(),
        }),
        _ => json!({"path": s.path, "format": s.format}),
    };
    let t = &r.tensors;
    let mut doc = json!({"a": side(&r.a), "b": side(&r.b), "identical": r.identical});
    if r.logical {
        doc["shapes"] = "logical".into();
    }
    doc["summary"] = r
        .summary
        .iter()
        .map(|f| json!({"field": f.name, "a": field(&f.a), "b": field(&f.b), "differs": f.differs()}))
        .collect();
    doc["metadata"] = metadata(&r.metadata);
    doc["tensors"] = json!({
        "only_a": t.only_a.iter().map(tensor).collect::<Vec<_>>(),
        "only_b": t.only_b.iter().map(tensor).collect::<Vec<_>>(),
        "shape_changes": t.shape_changes.iter().map(|s| json!({"name": s.name, "a": s.a, "b": s.b})).collect::<Vec<_>>(),
        "type_changes": t.type_changes.iter().map(|(n, a, b)| json!({"name": n, "a": a, "b": b})).collect::<Vec<_>>(),
        "transitions": t.transitions.iter().map(|(a, b, n)| json!({"a": a, "b": b, "tensors": n})).collect::<Vec<_>>(),
        "matching": t.matching.len(),
    });
    if let Some(values) = &r.values {
        doc["values"] = values.iter().map(metrics).collect();
    }
    if r.logical {
        doc["skipped"] = r
            .skipped
            .iter()
            .map(|(name, reason)| json!({"name": name, "reason": reason}))
            .collect();
    }
    doc
}
