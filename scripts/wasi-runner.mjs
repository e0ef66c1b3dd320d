#!/usr/bin/env -S node --single-threaded-gc
// --single-threaded-gc: Node 20.20's V8 sometimes dies in a concurrent-marking GC that a wasm
// memory.grow sets off ("Fatal error ... unreachable code" in ProcessEphemerons, SIGTRAP), more
// often on a loaded machine: the lib tests crashed in 9 of 16 parallel runs without the flag,
// in none of 16 with it.
// Runs a wasm32-wasip1 binary (a test, an example) under Node's built-in WASI, as cargo's
// `runner` for that target: `wasi-runner.mjs <binary.wasm> [args...]`.
//
// The package root (this script's parent directory, which is CARGO_MANIFEST_DIR) is preopened
// at its own absolute path, so `env!("CARGO_MANIFEST_DIR")` paths baked into tests resolve; the
// current directory is preopened too. Environment variables are passed through (tests read
// REQUIRE_SIMD, ORACLE_TYPES, GGUF_LENS_KERNEL). The binary's exit code becomes ours; a trap
// (a panic: wasm32-wasip1 aborts) gives 101, like a failed native test.
import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";

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
