//! The CLI with hostile files and outputs: what a file holds reaches the terminal escaped, and
//! no writer destroys its input or leaves a temporary file behind (on an error or on Ctrl-C).
// Spawns the gguf-lens binary, which WASI cannot do.
#![cfg(not(target_os = "wasi"))]

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::Builder;

fn run(args: &[&std::ffi::OsStr]) -> Output {
    common::gguf_lens_command().args(args).output().unwrap()
}

fn os<S: AsRef<std::ffi::OsStr> + ?Sized>(s: &S) -> &std::ffi::OsStr {
    s.as_ref()
}

const ESC_KEY: &str = "evil\u{1b}]0;owned\u{7}.key";
const ESC_VALUE: &[u8] = b"value\x1b[2J\xc2\x9b31m\xe2\x80\xaeend";
const ESC_TENSOR: &str = "blk.0.ffn_up\u{1b}[31m.weight";

/// A valid file with ESC sequences in a key, a string value and a tensor name (plus a C1 CSI
/// and a right-to-left override in the value).
fn hostile_file() -> Vec<u8> {
    let mut b = Builder::new(3);
    b.header(1, 1).kv_str(ESC_KEY, ESC_VALUE);
    b.tensor(ESC_TENSOR, &[32, 2], 0, 0);
    b.data(32, 256);
    b.build()
}

/// A file with two F32 tensors llama.cpp quantizes, [32, 2] each, the first with an infinity.
fn quantizable_file(with_inf: bool) -> Vec<u8> {
    let mut b = Builder::new(3);
    b.header(2, 0);
    b.tensor("blk.0.ffn_up.weight", &[32, 2], 0, 0);
    b.tensor("blk.0.ffn_down.weight", &[32, 2], 0, 256);
    b.data(32, 512);
    let mut bytes = b.build();
    let data = bytes.len() - 512;
    for (i, v) in bytes[data..].chunks_exact_mut(4).enumerate() {
        v.copy_from_slice(&((i % 7) as f32 - 3.0).to_le_bytes());
    }
    if with_inf {
        bytes[data + 8..data + 12].copy_from_slice(&f32::INFINITY.to_le_bytes());
    }
    bytes
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn no_raw_controls(bytes: &[u8], what: &str) {
    let text = String::from_utf8_lossy(bytes);
    assert!(
        !text.contains(['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}']),
        "{what} has a raw control character: {text:?}"
    );
}

/// The names in `dir`, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn inspect_escapes_keys_values_and_tensor_names() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "m.gguf", &hostile_file());
    let out = run(&[os("inspect"), path.as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    no_raw_controls(&out.stdout, "inspect");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("evil\\u{1b}]0;owned\\u{7}.key"), "{text}");
    assert!(text.contains("blk.0.ffn_up\\u{1b}[31m.weight"), "{text}");
    assert!(
        text.contains("value\\u{1b}[2J\\u{9b}31m\\u{202e}end"),
        "{text}"
    );

    // JSON: the same characters as \uXXXX escapes, and the document still holds them.
    let out = run(&[os("inspect"), path.as_os_str(), os("--json")]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    no_raw_controls(&out.stdout, "inspect --json");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["metadata"][0]["key"], ESC_KEY);
    assert_eq!(
        doc["metadata"][0]["value"],
        std::str::from_utf8(ESC_VALUE).unwrap()
    );
    assert_eq!(doc["tensors"][0]["name"], ESC_TENSOR);
}

#[test]
fn errors_quoting_file_content_or_names_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    // A tensor (name with ESC) past the end of the file: the error names it.
    let mut bytes = hostile_file();
    bytes.truncate(bytes.len() - 1);
    let path = write(dir.path(), "m.gguf", &bytes);
    let out = run(&[os("inspect"), path.as_os_str()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    no_raw_controls(&out.stderr, "inspect error");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("\\u{1b}[31m"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");

    // A file name with ESC and a newline, quoted in a stats error.
    let name = "bad\u{1b}[2J\nname.gguf";
    let path = write(dir.path(), name, b"not a model");
    let out = run(&[os("stats"), path.as_os_str(), os("x")]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    no_raw_controls(&out.stderr, "stats error");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bad\\u{1b}[2J\\nname.gguf"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// `args` with `{in}` and `{out}` replaced.
fn writer_args<'a>(
    args: &[&'a str],
    input: &'a Path,
    output: &'a Path,
) -> Vec<&'a std::ffi::OsStr> {
    args.iter()
        .map(|a| match *a {
            "{in}" => input.as_os_str(),
            "{out}" => output.as_os_str(),
            other => os(other),
        })
        .collect()
}

const WRITERS: [&[&str]; 3] = [
    &["dequant", "{in}", "blk.0.ffn_up.weight", "-o", "{out}"],
    &["quantize", "--type", "Q8_0", "{in}", "{out}"],
    &["set", "{in}", "{out}", "--set", "general.name=string:x"],
];

#[test]
fn no_writer_replaces_its_input_directly_or_through_a_link() {
    for args in WRITERS {
        for how in ["same path", "symlink", "hard link"] {
            let dir = tempfile::tempdir().unwrap();
            let original = quantizable_file(false);
            let input = write(dir.path(), "m.gguf", &original);
            let output = match how {
                "same path" => input.clone(),
                "symlink" => {
                    let link = dir.path().join("link.gguf");
                    std::os::unix::fs::symlink(&input, &link).unwrap();
                    link
                }
                _ => {
                    let link = dir.path().join("hard.gguf");
                    std::fs::hard_link(&input, &link).unwrap();
                    link
                }
            };
            let before = entries(dir.path());
            let out = run(&writer_args(args, &input, &output));
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_ne!(out.status.code(), Some(0), "{args:?} {how}: {stderr}");
            assert!(stderr.contains("same file"), "{args:?} {how}: {stderr}");
            assert_eq!(stderr.lines().count(), 1, "{args:?} {how}: {stderr}");
            assert_eq!(std::fs::read(&input).unwrap(), original, "{args:?} {how}");
            assert_eq!(entries(dir.path()), before, "{args:?} {how}");
        }
    }
}

#[test]
fn dequant_refuses_a_safetensors_input_as_output() {
    let dir = tempfile::tempdir().unwrap();
    let header = br#"{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#;
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header);
    bytes.extend_from_slice(&[0; 8]);
    let input = write(dir.path(), "m.safetensors", &bytes);
    let link = dir.path().join("link.f32");
    std::os::unix::fs::symlink(&input, &link).unwrap();
    let out = run(&[
        os("dequant"),
        input.as_os_str(),
        os("w"),
        os("-o"),
        link.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("same file"));
    assert_eq!(std::fs::read(&input).unwrap(), bytes);
}

#[test]
fn writers_keep_the_mode_of_the_file_they_replace() {
    use std::os::unix::fs::PermissionsExt;
    for args in WRITERS {
        let dir = tempfile::tempdir().unwrap();
        let input = write(dir.path(), "m.gguf", &quantizable_file(false));
        let output = write(dir.path(), "out.bin", b"old");
        std::fs::set_permissions(&output, std::fs::Permissions::from_mode(0o600)).unwrap();
        let out = run(&writer_args(args, &input, &output));
        assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
        assert_ne!(std::fs::read(&output).unwrap(), b"old", "{args:?}");
        let mode = std::fs::metadata(&output).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{args:?}");
        assert_eq!(entries(dir.path()), ["m.gguf", "out.bin"], "{args:?}");
    }
}

#[test]
fn a_new_output_gets_0666_less_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "m.gguf", &quantizable_file(false));
    let output = dir.path().join("new.f32");
    // Through the test runner (qemu for the aarch64 build), with the umask set in the child.
    let mut command = common::gguf_lens_command();
    command
        .arg("dequant")
        .arg(&input)
        .arg("blk.0.ffn_up.weight")
        .arg("-o")
        .arg(&output);
    // SAFETY: umask is async-signal-safe and touches only the child's own process state.
    unsafe {
        command.pre_exec(|| {
            libc::umask(0o027);
            Ok(())
        });
    }
    let status = command.output().unwrap();
    assert!(
        status.status.success(),
        "{:?}: {}",
        status.status,
        String::from_utf8_lossy(&status.stderr)
    );
    let mode = std::fs::metadata(&output).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
}

#[test]
fn a_failed_write_leaves_no_temporary_and_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "m.gguf", &quantizable_file(true));
    let output = dir.path().join("out.gguf");
    // The infinity is found while writing: after the output was started.
    let out = run(&writer_args(WRITERS[1], &input, &output));
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot quantize"));
    assert_eq!(entries(dir.path()), ["m.gguf"]);
}

/// Ctrl-C (or SIGTERM) while `quantize` writes a large output: the temporary goes, exit 130.
#[test]
fn sigint_removes_the_temporary() {
    interrupted_while_writing(libc::SIGINT);
}

#[test]
fn sigterm_removes_the_temporary() {
    interrupted_while_writing(libc::SIGTERM);
}

fn interrupted_while_writing(signal: libc::c_int) {
    let dir = tempfile::tempdir().unwrap();
    // One F32 tensor of 2 GiB, sparse (zeros read fast but quantize at the usual speed).
    let (ne0, ne1) = (4096u64, 131072u64);
    let mut b = Builder::new(3);
    b.header(1, 0)
        .tensor("blk.0.ffn_up.weight", &[ne0, ne1], 0, 0);
    b.data(32, 0);
    let header = b.build();
    let input = dir.path().join("big.gguf");
    let file = std::fs::File::create(&input).unwrap();
    std::io::Write::write_all(&mut &file, &header).unwrap();
    file.set_len(header.len() as u64 + ne0 * ne1 * 4).unwrap();
    drop(file);
    let output = dir.path().join("out.gguf");
    let mut child = common::gguf_lens_command()
        .args([
            os("quantize"),
            os("--type"),
            os("Q4_K"),
            os("--threads"),
            os("1"),
        ])
        .arg(&input)
        .arg(&output)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let is_temp = |name: &String| name.contains("tmp");
    let started = std::time::Instant::now();
    while !entries(dir.path()).iter().any(is_temp) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "quantize ended before its temporary was seen"
        );
        assert!(started.elapsed().as_secs() < 60, "no temporary after 60 s");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // SAFETY: kill sends a signal to the child we spawned (its pid is still ours: not waited).
    let sent = unsafe { libc::kill(child.id() as libc::pid_t, signal) };
    assert_eq!(sent, 0);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert_eq!(entries(dir.path()), ["big.gguf"]);
}
