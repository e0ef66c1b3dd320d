#!/usr/bin/env -S node --no-concurrent-marking
// --no-concurrent-marking: Node 20.20's V8 sometimes dies in a concurrent-marking GC that a wasm
// memory.grow sets off ("Fatal error ... unreachable code" in ProcessEphemerons, SIGTRAP), more
// often on a loaded machine: the lib tests crashed in 9 of 16 parallel runs without such a flag.
// (--single-threaded-gc, which also avoids it, makes V8 die with SIGSEGV at the end of some
// runs instead: the stats unit tests, after all passed, in 4 of 4.)
// Runs a wasm32-wasip1 binary (a test, an example) under Node's built-in WASI, as cargo's
// `runner` for that target: `wasi-runner.mjs <binary.wasm> [args...]`.
//
// The package root (this script's parent directory, which is CARGO_MANIFEST_DIR) is preopened
// at its own absolute path, so `env!("CARGO_MANIFEST_DIR")` paths baked into tests resolve; the
// current directory is preopened too. Environment variables are passed through (tests read
// REQUIRE_SIMD, ORACLE_TYPES, GGUF_LENS_KERNEL). The binary's exit code becomes ours; a trap
// (a panic: wasm32-wasip1 aborts) gives 101, like a failed native test.
import { spawnSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";

// Node 20.20's V8 now and then dies of a signal inside its own code (SIGSEGV in an inline cache
// of the WASI glue near the end of a long test binary, every test passed; SIGTRAP in a GC), which
// loses the binary's exit code. The binary runs in a child process; when the child dies of a
// signal (a failed test exits 101, never by a signal), the whole binary runs again, at most
// three times in all, each retry said on stderr.
if (!process.env.GGUF_LENS_WASI_CHILD) {
  const child = [...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)];
  const env = { ...process.env, GGUF_LENS_WASI_CHILD: "1" };
  for (let attempt = 1; ; attempt++) {
    const run = spawnSync(process.execPath, child, { stdio: "inherit", env });
    if (run.signal && attempt < 3) {
      console.error(`wasi-runner: node died of ${run.signal} (an engine crash, not a test result); running ${process.argv[2]} again (attempt ${attempt + 1} of 3)`);
      continue;
    }
    if (run.signal) process.kill(process.pid, run.signal);
    process.exit(run.status ?? 1);
  }
}

// node:wasi prints an ExperimentalWarning on first use; keep test output clean.
const emitWarning = process.emitWarning;
process.emitWarning = (warning, ...rest) => {
  const text = typeof warning === "string" ? warning : warning?.message ?? "";
  if (/WASI/.test(text)) return;
  return emitWarning.call(process, warning, ...rest);
};
const { WASI } = await import("node:wasi");

const [wasmPath, ...args] = process.argv.slice(2);
if (!wasmPath) {
  console.error("usage: wasi-runner.mjs <binary.wasm> [args...]");
  process.exit(2);
}

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const preopens = { [root]: root };
const cwd = process.cwd();
if (!(cwd in preopens)) preopens[cwd] = cwd;
preopens["."] = cwd;

const wasi = new WASI({
  version: "preview1",
  args: [wasmPath, ...args],
  // wasm32-wasip1 panics abort (no unwinding), so libtest never gets to print a failed test's
  // captured output: don't capture, so the panic message shows.
  env: { RUST_TEST_NOCAPTURE: "1", ...process.env },
  preopens,
  returnOnExit: true,
});

const module = await WebAssembly.compile(await readFile(wasmPath));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
let code;
try {
  code = wasi.start(instance);
} catch (err) {
  // A trap lands here; `unreachable` is how a Rust panic aborts (its message is above).
  const what = err instanceof WebAssembly.RuntimeError ? `trapped (${err.message})` : err?.stack ?? err;
  console.error(`wasi-runner: ${wasmPath}: ${what}`);
  code = 101;
}
process.exitCode = code ?? 0;
