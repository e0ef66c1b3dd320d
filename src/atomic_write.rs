//! Output files that never destroy their input and are never left half-written.
//!
//! The data goes to a temporary file created exclusively (`O_CREAT | O_EXCL`, so never through
//! a symlink or over an existing file) under a random name beside the destination; at the end
//! it is synced, given the mode of the file it replaces (a new file: 0666 less the umask, as
//! any created file), renamed over the destination, and the directory synced. On an error, a
//! panic or a drop without commit the temporary file is removed; the names of live temporaries
//! are kept in a registry so a signal handler can remove them too ([`remove_temporaries`]).
//! A destination that exists and is not a regular file (`/dev/null`, a FIFO, a terminal) is
//! written in place.
//!
//! Before anything is created, the destination is checked against every input: the same file
//! (device and inode, so also through a symlink or a hard link) is refused.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Paths of temporaries not yet committed or removed.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    // A panic while holding the lock leaves a plain list of paths: still usable.
    LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Set once [`remove_temporaries`] ran: no temporary is created after it.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Removes every temporary file not yet committed, and refuses new ones from then on (for a
/// SIGINT/SIGTERM handler, which then exits). Safe to call from any thread.
pub fn remove_temporaries() {
    let mut registry = live();
    CLOSED.store(true, Ordering::SeqCst);
    for path in registry.drain(..) {
        let _ = fs::remove_file(path);
    }
}

/// The error for an output that is one of the inputs.
fn same_file_error(output: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("{}: input and output are the same file", output.display()),
    )
}

/// True when both paths name one existing file (also through symlinks and hard links).
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (fs::metadata(a), fs::metadata(b)) {
            return x.dev() == y.dev() && x.ino() == y.ino();
        }
        // A dangling symlink as output: the rename would replace the link, not its target.
        false
    }
    #[cfg(not(unix))]
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// An output being written; [`AtomicFile::commit`] puts it in place.
pub struct AtomicFile {
    file: File,
    /// The temporary path while the output is not committed (None: written in place).
    temp: Option<PathBuf>,
    path: PathBuf,
}

impl AtomicFile {
    /// Starts writing `path`, refused (before anything is created) when it is the same file as
    /// one of `inputs`. The error names `path`.
    pub fn create(path: &Path, inputs: &[&Path]) -> io::Result<AtomicFile> {
        if inputs.iter().any(|input| same_file(input, path)) {
            return Err(same_file_error(path));
        }
        let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
        let existing = fs::metadata(path).ok();
        if existing.as_ref().is_some_and(|m| !m.is_file()) {
            let file = fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(named)?;
            return Ok(AtomicFile {
                file,
                temp: None,
                path: path.to_path_buf(),
            });
        }
        let name = path.file_name().ok_or_else(|| {
            named(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a file name",
            ))
        })?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let mut builder = tempfile::Builder::new();
        let prefix = format!(".{}.", name.to_string_lossy());
        builder.prefix(&prefix).suffix(".gguf-lens-tmp");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // Created 0666 less the umask, as a plain new file would be.
            builder.permissions(fs::Permissions::from_mode(0o666));
        }
        // Registered while the lock is held, so a signal handler cannot miss it.
        let mut registry = live();
        if CLOSED.load(Ordering::SeqCst) {
            return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"));
        }
        let (file, temp) = builder
            .tempfile_in(dir)
            .map_err(named)?
            .keep()
            .map_err(|e| named(e.error))?;
        registry.push(temp.clone());
        drop(registry);
        let out = AtomicFile {
            file,
            temp: Some(temp),
            path: path.to_path_buf(),
        };
        if let Some(old) = existing {
            // The file it replaces keeps its mode (a 0600 file stays 0600).
            out.file.set_permissions(old.permissions()).map_err(named)?;
        }
        Ok(out)
    }

    pub fn file(&mut self) -> &mut File {
        &mut self.file
    }

    /// Syncs the data, renames the file over the destination and syncs the directory. On an
    /// error the temporary file is removed; the error names the destination.
    pub fn commit(mut self) -> io::Result<()> {
        let named =
            |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", self.path.display()));
        let Some(temp) = self.temp.clone() else {
            return Ok(());
        };
        self.file.sync_all().map_err(named)?;
        fs::rename(&temp, &self.path).map_err(named)?;
        // Renamed: nothing to remove any more.
        self.temp = None;
        unregister(&temp);
        #[cfg(unix)]
        {
            let dir = match self.path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            // The rename is durable only once the directory is; a directory that cannot be
            // opened or synced (some file systems) leaves the file in place all the same.
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }
}

fn unregister(temp: &Path) {
    live().retain(|p| p != temp);
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if let Some(temp) = self.temp.take() {
            let _ = fs::remove_file(&temp);
            unregister(&temp);
        }
    }
}

// Not on WASI: its runner preopens no temporary directory for these tests to write in.
#[cfg(all(test, not(target_os = "wasi")))]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn refuses_an_input_and_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("m.gguf");
        fs::write(&input, b"model").unwrap();
        let err = AtomicFile::create(&input, &[&input]).err().unwrap();
        assert!(err.to_string().contains("same file"), "{err}");
        assert_eq!(fs::read(&input).unwrap(), b"model");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn drop_without_commit_removes_the_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("o.bin");
        {
            let mut w = AtomicFile::create(&out, &[]).unwrap();
            w.file().write_all(b"partial").unwrap();
            assert!(live().iter().any(|p| p.starts_with(dir.path())));
        }
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
        assert!(!live().iter().any(|p| p.starts_with(dir.path())));
    }

    #[cfg(unix)]
    #[test]
    fn keeps_the_mode_of_the_file_it_replaces() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("o.bin");
        fs::write(&out, b"old").unwrap();
        fs::set_permissions(&out, fs::Permissions::from_mode(0o600)).unwrap();
        let mut w = AtomicFile::create(&out, &[]).unwrap();
        w.file().write_all(b"new").unwrap();
        w.commit().unwrap();
        assert_eq!(fs::read(&out).unwrap(), b"new");
        let mode = fs::metadata(&out).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
}
