//! Writing an edited file natively: the new header, then the plan's pieces copied file to file
//! in the kernel (`copy_file_range`), skipping the input's holes (`SEEK_DATA`/`SEEK_HOLE`) so a
//! sparse input stays sparse; through [`AtomicFile`] (a random exclusive temporary, renamed at
//! the end).

use super::bad_edit;
use crate::error::Result;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use super::plan::{plan, EditPlan};
use super::Edits;
use crate::atomic_write::{same_file, AtomicFile};
use crate::gguf::read_header;

/// Writes `input` with `edits` applied to `output` through [`AtomicFile`] (a temporary file
/// beside `output`, renamed at the end; a failure leaves no `output` and removes the temporary
/// file). `output` must not be `input`, also through a link.
pub fn edit_file(input: &Path, output: &Path, edits: &Edits) -> Result<()> {
    let shown = |p: &Path| p.display().to_string();
    let mut src = File::open(input).map_err(|e| bad_edit(format!("{}: {e}", shown(input))))?;
    let size = src
        .metadata()
        .map_err(|e| bad_edit(format!("{}: {e}", shown(input))))?
        .len();
    if same_file(input, output) {
        return Err(bad_edit(format!(
            "{}: input and output are the same file",
            shown(output)
        )));
    }
    let file =
        read_header(&mut src, size).map_err(|e| bad_edit(format!("{}: {e}", shown(input))))?;
    // Plan errors name the key or tensor, as the user gave them.
    let plan = plan(&file, size, edits)?;
    // The errors of AtomicFile name the output.
    let mut dst = AtomicFile::create(output, &[input]).map_err(|e| bad_edit(e.to_string()))?;
    write_plan(&mut src, dst.file(), &plan)
        .map_err(|e| bad_edit(format!("{}: {e}", shown(output))))?;
    dst.commit().map_err(|e| bad_edit(e.to_string()))
}

fn write_plan(src: &mut File, dst: &mut File, plan: &EditPlan) -> std::io::Result<()> {
    dst.write_all(&plan.header)?;
    let mut at = plan.header.len() as u64;
    for piece in &plan.pieces {
        if let Some(from) = piece.from {
            copy_range(src, dst, from, at, piece.len)?;
        }
        // Zeros are left unwritten: the file is new, and set_len below makes them read as 0.
        at += piece.len;
    }
    dst.set_len(plan.len)
}

/// Copies `len` bytes at `from` in `src` to `to` in `dst`, only where `src` has data.
fn copy_range(src: &mut File, dst: &mut File, from: u64, to: u64, len: u64) -> std::io::Result<()> {
    let mut pos = from;
    let end = from + len;
    while pos < end {
        let (data, hole) = sparse::next_data(src, pos, end)?;
        if data >= end {
            break;
        }
        let n = hole.min(end) - data;
        copy_bytes(src, dst, data, to + (data - from), n)?;
        pos = data + n;
    }
    Ok(())
}

/// Copies `n` bytes: in the kernel where it can, else through a buffer.
fn copy_bytes(src: &mut File, dst: &mut File, from: u64, to: u64, n: u64) -> std::io::Result<()> {
    let done = sparse::kernel_copy(src, dst, from, to, n)?;
    if done == n {
        return Ok(());
    }
    src.seek(SeekFrom::Start(from + done))?;
    dst.seek(SeekFrom::Start(to + done))?;
    let copied = std::io::copy(&mut (&mut *src).take(n - done), &mut *dst)?;
    if copied != n - done {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("input shrank: copied {copied} of {} data bytes", n - done),
        ));
    }
    Ok(())
}

#[cfg(target_os = "linux")]
mod sparse {
    use std::fs::File;
    use std::os::fd::AsRawFd;

    /// (start of the next data at or after `pos`, the hole after it), both capped at `end`;
    /// (pos, end) where the file system cannot tell.
    pub fn next_data(src: &File, pos: u64, end: u64) -> std::io::Result<(u64, u64)> {
        let fd = src.as_raw_fd();
        let Ok(at) = libc::off_t::try_from(pos) else {
            return Ok((pos, end));
        };
        // SAFETY: lseek on a file descriptor we own; it changes only the file position.
        let data = unsafe { libc::lseek(fd, at, libc::SEEK_DATA) };
        if data < 0 {
            let err = std::io::Error::last_os_error();
            return match err.raw_os_error() {
                Some(libc::ENXIO) => Ok((end, end)), // only a hole from here to the end
                Some(libc::EINVAL) | Some(libc::EOPNOTSUPP) => Ok((pos, end)),
                _ => Err(err),
            };
        }
        // SAFETY: as above.
        let hole = unsafe { libc::lseek(fd, data, libc::SEEK_HOLE) };
        let hole = if hole < 0 { end } else { hole as u64 };
        Ok(((data as u64).min(end), hole.min(end)))
    }

    /// Copies up to `n` bytes with copy_file_range; returns how many it did (0 when the kernel
    /// or the file systems cannot, so the caller copies the rest itself).
    pub fn kernel_copy(src: &File, dst: &File, from: u64, to: u64, n: u64) -> std::io::Result<u64> {
        let (Ok(mut off_in), Ok(mut off_out)) = (i64::try_from(from), i64::try_from(to)) else {
            return Ok(0);
        };
        let mut done = 0u64;
        while done < n {
            let chunk = usize::try_from(n - done).unwrap_or(usize::MAX).min(1 << 30);
            // SAFETY: both descriptors are open files we own; the offsets are valid pointers to
            // locals, which the kernel advances by the bytes copied.
            let r = unsafe {
                libc::copy_file_range(
                    src.as_raw_fd(),
                    &mut off_in,
                    dst.as_raw_fd(),
                    &mut off_out,
                    chunk,
                    0,
                )
            };
            if r < 0 {
                let err = std::io::Error::last_os_error();
                return match err.raw_os_error() {
                    Some(libc::EXDEV | libc::ENOSYS | libc::EINVAL | libc::EOPNOTSUPP) => Ok(done),
                    _ => Err(err),
                };
            }
            if r == 0 {
                break; // end of the input: the caller's copy reports it
            }
            done += r as u64;
        }
        Ok(done)
    }
}

#[cfg(not(target_os = "linux"))]
mod sparse {
    use std::fs::File;

    pub fn next_data(_src: &File, pos: u64, end: u64) -> std::io::Result<(u64, u64)> {
        Ok((pos, end))
    }

    pub fn kernel_copy(_: &File, _: &File, _: u64, _: u64, _: u64) -> std::io::Result<u64> {
        Ok(0)
    }
}
