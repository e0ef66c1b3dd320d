//! Writing the edited file: new header + the input's data section, file to file.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use super::{build_header, Edits};
use crate::gguf::read_header;

/// Writes `input` with `edits` applied to `output`, through a temporary file in `output`'s
/// directory renamed at the end (a failure leaves no `output` and removes the temporary file).
/// The data section is copied with `std::io::copy`, which uses `copy_file_range` on Linux.
pub fn edit_file(input: &Path, output: &Path, edits: &Edits) -> Result<(), String> {
    let shown = |p: &Path| p.display().to_string();
    let mut src = File::open(input).map_err(|e| format!("{}: {e}", shown(input)))?;
    let src_meta = src
        .metadata()
        .map_err(|e| format!("{}: {e}", shown(input)))?;
    if same_file(input, output) {
        return Err(format!(
            "{}: input and output are the same file",
            shown(output)
        ));
    }
    let size = src_meta.len();
    let file = read_header(&mut src, size).map_err(|e| format!("{}: {e}", shown(input)))?;
    let header = build_header(&file, edits)?;
    let data_len = size
        .checked_sub(file.data_offset())
        .ok_or_else(|| format!("{}: data section starts past the end", shown(input)))?;
    let dir = match output.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = output
        .file_name()
        .ok_or_else(|| format!("{}: not a file name", shown(output)))?;
    let tmp = dir.join(format!(
        ".{}.partial-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| -> std::io::Result<()> {
        let mut dst = File::create(&tmp)?;
        dst.write_all(&header)?;
        src.seek(SeekFrom::Start(file.data_offset()))?;
        let copied = std::io::copy(&mut (&mut src).take(data_len), &mut dst)?;
        if copied != data_len {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("input shrank: copied {copied} of {data_len} data bytes"),
            ));
        }
        dst.sync_all()?;
        drop(dst);
        std::fs::rename(&tmp, output)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("{}: {e}", shown(output))
    })
}

/// True when both paths name one file (also through links).
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return x.dev() == y.dev() && x.ino() == y.ino();
        }
    }
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}
