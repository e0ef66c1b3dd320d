//! The options of `diff` and how its report ends, for both pairings: `diff` (two GGUF models)
//! and `diff_cross` (any pairing with safetensors), so neither imports the other.

use gguf_lens::diff_report::{DiffReport, Format};

use crate::{write_stdout, Failure};

/// The options as both pairings read them.
pub struct Options<'a> {
    pub a: &'a str,
    pub b: &'a str,
    pub values: bool,
    pub tensors: Vec<&'a str>,
    pub format: Format,
    /// Hugging Face llama names of the safetensors side read as GGUF names.
    pub llama_names: bool,
}

/// Prints `report` (warnings to stderr); exit 0 when identical, else 1 ("files differ").
pub fn finish(report: &DiffReport, format: Format) -> Result<(), Failure> {
    if format == Format::Json {
        for warning in &report.warnings {
            eprintln!("warning: {}", crate::escape::shown(warning));
        }
    }
    let text = report.render(format);
    // JSON keeps its own escapes (\uXXXX); text is escaped in write_stdout.
    let text = match format {
        Format::Json => crate::escape::json(&text).into_owned(),
        _ => text,
    };
    write_stdout(text.as_bytes())?;
    if report.identical {
        Ok(())
    } else {
        Err(Failure::Findings(1))
    }
}
