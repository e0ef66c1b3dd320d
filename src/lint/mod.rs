//! Lint: the mistakes in a GGUF file that make llama.cpp fail or misbehave, or labels that lie
//! (errors), and the untidy but harmless ones (warnings), each with a code, a severity and where.
//!
//! A header the parser refuses (misaligned, overlapping or out-of-file tensor data, duplicate
//! keys or tensors, tensor names of 64+ bytes, …) gives one error finding whose code names the
//! parser's error ([`code_of`]). A parsed header goes through small data-driven checks:
//! - `layout`: gaps between tensors' data, bytes after the last tensor;
//! - `keys`: metadata llama.cpp reads with another type than the file's (it refuses the file);
//! - `meta`: `general.file_type` against the tensor mix, `{arch}.block_count` against the `blk.N`
//!   tensors, chat templates that do not parse;
//! - `vocab`: special-token ids outside the vocabulary, token/score/token-type arrays of different
//!   lengths, merges naming tokens that do not exist;
//! - `arch`: the tensors llama.cpp requires for common architectures, missing or mis-shaped.

mod arch;
mod keys;
mod layout;
mod meta;
mod vocab;

use std::collections::HashMap;

use serde::Serialize;

use crate::error::{Error, ErrorKind};
use crate::gguf::{parse, GgufFile, ParseStatus, TensorInfo};
use crate::model::GgufModel;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// llama.cpp fails or misbehaves on it, or a label lies.
    Error,
    /// Harmless to llama.cpp but untidy or suspicious.
    Warning,
    /// Worth knowing; not a problem.
    Info,
}

impl Severity {
    /// `"error"`, `"warning"` or `"info"`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// One problem found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable kebab-case code, e.g. `file-type-mismatch`.
    pub code: &'static str,
    pub severity: Severity,
    /// One line for people.
    pub message: String,
    /// Absolute byte offset in the file it concerns, when there is one.
    pub offset: Option<u64>,
    /// The metadata key it concerns.
    pub key: Option<String>,
    /// The tensor it concerns.
    pub tensor: Option<String>,
    /// For a split model, the shard (1-based, as in `-00002-of-00003`) the offset is in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<u32>,
}

impl Finding {
    pub(crate) fn new(code: &'static str, severity: Severity, message: String) -> Finding {
        Finding {
            code,
            severity,
            message,
            offset: None,
            key: None,
            tensor: None,
            shard: None,
        }
    }

    pub(crate) fn error(code: &'static str, message: String) -> Finding {
        Finding::new(code, Severity::Error, message)
    }

    pub(crate) fn warning(code: &'static str, message: String) -> Finding {
        Finding::new(code, Severity::Warning, message)
    }

    pub(crate) fn info(code: &'static str, message: String) -> Finding {
        Finding::new(code, Severity::Info, message)
    }

    pub(crate) fn at(mut self, offset: Option<u64>) -> Finding {
        self.offset = offset;
        self
    }

    pub(crate) fn key(mut self, key: &str) -> Finding {
        self.key = Some(key.to_string());
        self
    }

    pub(crate) fn tensor(mut self, name: &str) -> Finding {
        self.tensor = Some(name.to_string());
        self
    }

    pub(crate) fn in_shard(mut self, shard: Option<u32>) -> Finding {
        self.shard = shard;
        self
    }

    /// Where, for people: the tensor, else the key, else the byte offset, else `file`; prefixed
    /// by `shard N ` in a split model.
    pub fn place(&self) -> String {
        match self.shard {
            Some(n) => format!("shard {n} {}", self.place_in_file()),
            None => self.place_in_file(),
        }
    }

    fn place_in_file(&self) -> String {
        if let Some(tensor) = &self.tensor {
            tensor.clone()
        } else if let Some(key) = &self.key {
            key.clone()
        } else if let Some(offset) = self.offset {
            format!("byte {offset}")
        } else {
            "file".to_string()
        }
    }
}

/// The findings of one file, errors first, with counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Report {
    pub findings: Vec<Finding>,
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
    /// Set when the bytes given to [`lint_bytes`] end inside the header: lint again with at
    /// least this many bytes from the start of the file. `findings` is then empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub need_more: Option<u64>,
}

impl Report {
    /// A report of `findings`: sorted by severity (stable: check order within one), counted.
    pub fn new(mut findings: Vec<Finding>) -> Report {
        findings.sort_by_key(|f| f.severity);
        let count = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
        Report {
            errors: count(Severity::Error),
            warnings: count(Severity::Warning),
            infos: count(Severity::Info),
            findings,
            need_more: None,
        }
    }

    /// Whether any finding is an error.
    pub fn has_errors(&self) -> bool {
        self.errors > 0
    }
}

/// Most findings of one code kept; the rest become one "… and N more" finding (a wrong
/// `embedding_length` would otherwise give one finding per tensor).
pub const MAX_PER_CODE: usize = 20;

/// What the checks see: the metadata of the first shard and the tensors of every shard.
pub(crate) struct View<'a> {
    /// The file holding the model's metadata (the first shard).
    pub(crate) meta: &'a GgufFile,
    pub(crate) tensors: Vec<&'a TensorInfo>,
    by_name: HashMap<&'a str, &'a TensorInfo>,
    /// False for one shard of a split model linted alone: checks that need every tensor skip.
    pub(crate) complete: bool,
    /// `general.type` is `adapter` (a LoRA or control vector): its tensors are not a model's,
    /// so the block and required-tensor checks skip.
    pub(crate) adapter: bool,
}

impl<'a> View<'a> {
    fn new(shards: &[&'a GgufFile]) -> Option<View<'a>> {
        let meta = *shards.first()?;
        let tensors: Vec<&TensorInfo> = shards.iter().flat_map(|s| s.tensors()).collect();
        let by_name = tensors.iter().map(|t| (t.name(), *t)).collect();
        let split_count = meta
            .get("split.count")
            .and_then(|v| v.as_u64())
            .unwrap_or(1);
        Some(View {
            meta,
            tensors,
            by_name,
            complete: split_count <= shards.len() as u64,
            adapter: meta
                .get("general.type")
                .and_then(|v| v.as_str().map(|t| t == "adapter"))
                .unwrap_or(false),
        })
    }

    pub(crate) fn tensor(&self, name: &str) -> Option<&'a TensorInfo> {
        self.by_name.get(name).copied()
    }
}

/// Lints a parsed header: every check, findings in check order. A shard of a split model
/// linted alone skips the checks that need every tensor (one `split-shard` note says so): lint
/// the whole model with [`lint_model`].
pub fn lint(file: &GgufFile) -> Vec<Finding> {
    lint_shards(&[file])
}

/// Lints a model over all its shards: layout per shard, the rest over the first shard's
/// metadata and every shard's tensors.
pub fn lint_model(model: &GgufModel) -> Vec<Finding> {
    let shards: Vec<&GgufFile> = model.shards().iter().collect();
    lint_shards(&shards)
}

fn lint_shards(shards: &[&GgufFile]) -> Vec<Finding> {
    let mut findings = Vec::new();
    let Some(view) = View::new(shards) else {
        return findings;
    };
    for (i, shard) in shards.iter().enumerate() {
        let number = (shards.len() > 1).then(|| u32::try_from(i + 1).unwrap_or(u32::MAX));
        layout::check(shard, number, &mut findings);
    }
    if !view.complete {
        findings.push(Finding::info(
            "split-shard",
            "one shard of a split model: the file type, block and tensor checks need every \
             shard (lint the model by its first shard's name)"
                .to_string(),
        ));
    }
    keys::check(view.meta, &mut findings);
    meta::check(&view, &mut findings);
    vocab::check(view.meta, &mut findings);
    arch::check(&view, &mut findings);
    cap_per_code(findings)
}

/// Lints the first bytes of a file of `file_size` bytes (the whole header at least, or the whole
/// file). A header the parser refuses is one error finding.
pub fn lint_bytes(prefix: &[u8], file_size: u64) -> Report {
    match parse(prefix, Some(file_size)) {
        Ok(ParseStatus::Complete(file)) => Report::new(lint(&file)),
        Ok(ParseStatus::NeedMore { at_least, .. }) => Report {
            need_more: Some(at_least),
            ..Report::default()
        },
        Err(err) => Report::new(vec![finding_of_error(&err)]),
    }
}

/// The one error finding for a header the parser refuses.
pub fn finding_of_error(err: &Error) -> Finding {
    let mut finding = Finding::error(code_of(&err.kind), err.kind.to_string()).at(err.offset);
    use ErrorKind::*;
    match &err.kind {
        DuplicateKey { key }
        | UnknownValueType { key, .. }
        | NestingTooDeep { key, .. }
        | WrongValueType { key, .. } => finding = finding.key(key),
        DuplicateTensor { name }
        | UnknownTensorType { name, .. }
        | RemovedTensorType { name, .. }
        | TensorNameTooLong { name, .. }
        | TooManyDims { name, .. }
        | DimsOverflow { name }
        | PartialBlock { name, .. }
        | Misaligned { name, .. }
        | TensorOutOfFile { name, .. } => finding = finding.tensor(name),
        TensorsOverlap { second, .. } => finding = finding.tensor(second),
        _ => {}
    }
    finding
}

/// The lint code of a parser error.
pub fn code_of(kind: &ErrorKind) -> &'static str {
    use ErrorKind::*;
    match kind {
        Truncated { .. } => "truncated",
        BadMagic { .. } => "bad-magic",
        UnsupportedVersion { .. } => "unsupported-version",
        TooMany { .. } => "count-too-large",
        StringTooLong { .. } => "string-too-long",
        InvalidUtf8 { .. } => "invalid-utf8",
        UnknownValueType { .. } => "unknown-value-type",
        NestingTooDeep { .. } => "nesting-too-deep",
        DuplicateKey { .. } => "duplicate-key",
        DuplicateTensor { .. } => "duplicate-tensor",
        WrongValueType { .. } => "wrong-value-type",
        BadAlignment { .. } => "bad-alignment",
        UnknownTensorType { .. } => "unknown-tensor-type",
        RemovedTensorType { .. } => "removed-tensor-type",
        TensorNameTooLong { .. } => "tensor-name-too-long",
        TooManyDims { .. } => "too-many-dims",
        DimsOverflow { .. } => "dims-overflow",
        PartialBlock { .. } => "partial-block",
        Misaligned { .. } => "misaligned",
        TensorOutOfFile { .. } => "tensor-out-of-file",
        TensorsOverlap { .. } => "tensors-overlap",
        HeaderTooLarge { .. } => "header-too-large",
        BadSplit { .. } => "bad-split",
        Io { .. } => "read-failed",
        _ => "invalid-file",
    }
}

fn cap_per_code(findings: Vec<Finding>) -> Vec<Finding> {
    let mut kept: Vec<Finding> = Vec::with_capacity(findings.len());
    let mut dropped: Vec<(&'static str, Severity, usize)> = Vec::new();
    for f in findings {
        let seen = kept.iter().filter(|k| k.code == f.code).count();
        if seen < MAX_PER_CODE {
            kept.push(f);
        } else if let Some(d) = dropped.iter_mut().find(|d| d.0 == f.code) {
            d.2 += 1;
        } else {
            dropped.push((f.code, f.severity, 1));
        }
    }
    for (code, severity, n) in dropped {
        kept.push(Finding::new(
            code,
            severity,
            format!("… and {n} more like the findings above"),
        ));
    }
    kept
}

/// `general.architecture`, when it is a string.
pub(crate) fn architecture(file: &GgufFile) -> Option<String> {
    file.get("general.architecture")
        .and_then(|v| v.as_str().map(|s| s.into_owned()))
}
