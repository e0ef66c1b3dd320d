"""Quantizer throughput, one thread, in the same run: gguf-lens native, gguf-lens as wasm32
simd128 (the wasm32-wasip1 build under Node's WASI), and ggml's own quantizers
(`ggml_quantize_chunk` of llama-cpp-python's libggml-base, through ctypes). Issue #17 targets:
>= 0.5 Gelem/s for Q8_0/Q4_0 and >= 0.15 for the K-quants natively, wasm within 2x of native.
Each engine runs ROUNDS times interleaved (best of 3 inside each), the best is kept, so a busy
machine slows all columns alike; `uptime` is printed. CPU=1 times CPU instead of wall clock (the
calling thread for ggml and native; the whole Node process for wasm), for a busy machine.
ANCHOR_NATIVE=BIN / ANCHOR_WASM=FILE.wasm (another build of examples/quantize_bench, e.g. main's)
run in the same rounds and add columns, for before/after figures.
Run: [ROUNDS=3] [CPU=1] /root/oracle-venv/bin/python benches/bench_quantize.py [N_VALUES] [--no-wasm] [--types T,T]
"""
import ctypes, os, subprocess, sys, time
import numpy as np
import llama_cpp

TYPES = {"F16": 1, "Q4_0": 2, "Q4_1": 3, "Q5_0": 6, "Q5_1": 7, "Q8_0": 8, "Q2_K": 10, "Q3_K": 11,
         "Q4_K": 12, "Q5_K": 13, "Q6_K": 14, "IQ4_NL": 20, "IQ4_XS": 23, "BF16": 30,
         "TQ1_0": 34, "TQ2_0": 35, "MXFP4": 39}
ROUNDS = int(os.environ.get("ROUNDS", "3"))
CPU = os.environ.get("CPU") == "1"
clock = time.thread_time if CPU else time.perf_counter


def run_example(cmd, env=None):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True,
                         env={**os.environ, **(env or {})}).stdout
    return {l.split()[0]: float(l.split()[1]) for l in out.split("\n") if l.strip()}


def main():
    args = sys.argv[1:]
    wasm = "--no-wasm" not in args
    types = list(TYPES)
    if "--types" in args:
        types = args[args.index("--types") + 1].split(",")
    nums = [a for a in args if a.isdigit()]
    n = int(nums[0]) if nums else 1 << 22
    n -= n % 256
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    x = (np.random.default_rng(0).standard_normal(n) * 0.02).astype(np.float32)
    # Inside the package root: the WASI runner preopens it.
    path = os.path.join(root, "target", "quantize-bench.f32")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    x.tofile(path)
    lib = ctypes.CDLL(os.path.join(os.path.dirname(llama_cpp.__file__), "lib", "libggml-base.so"))
    q = lib.ggml_quantize_chunk
    q.restype = ctypes.c_size_t
    q.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                  ctypes.c_int64, ctypes.c_void_p]
    dst = np.zeros(n * 4, dtype=np.uint8)
    env = {"CARGO_BUILD_JOBS": "2"}
    subprocess.run(["cargo", "build", "--release", "--example", "quantize_bench"], cwd=root,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, **env})
    native_bin = os.path.join(root, "target/release/examples/quantize_bench")
    wasm_bin = os.path.join(root, "target/wasm-simd128/wasm32-wasip1/release/examples/quantize_bench.wasm")
    if wasm:
        subprocess.run(["cargo", "build", "--release", "--target", "wasm32-wasip1", "--example",
                        "quantize_bench"], cwd=root, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL,
                       env={**os.environ, **env, "RUSTFLAGS": "-C target-feature=+simd128",
                            "CARGO_TARGET_DIR": os.path.join(root, "target/wasm-simd128")})
    load_start = os.getloadavg()[0]
    best = {"ggml": {}, "native": {}, "wasm": {}, "anchor native": {}, "anchor wasm": {}}
    runner = ["node", os.path.join(root, "scripts/wasi-runner.mjs")]
    engines = [("native", [native_bin]), ("wasm", runner + [wasm_bin] if wasm else None),
               ("anchor native", [os.environ["ANCHOR_NATIVE"]] if "ANCHOR_NATIVE" in os.environ
                else None),
               ("anchor wasm", runner + [os.environ["ANCHOR_WASM"]] if "ANCHOR_WASM" in os.environ
                else None)]
    engines = [(e, c) for e, c in engines if c]
    for _ in range(ROUNDS):
        for name in types:
            t_best = float("inf")
            for _ in range(3):
                t = clock()
                q(TYPES[name], x.ctypes.data, dst.ctypes.data, 0, n // 256, 256, None)
                t_best = min(t_best, clock() - t)
            best["ggml"][name] = min(best["ggml"].get(name, t_best), t_best)
        for engine, cmd in engines:
            for name, secs in run_example(cmd + [path] + types, {"GGUF_LENS_BENCH_REPS": "5",
                                                  "GGUF_LENS_BENCH_CPU": "1" if CPU else "0"}).items():
                best[engine][name] = min(best[engine].get(name, secs), secs)
    print(f"{n} values (N(0, 0.02)), one thread, best of {ROUNDS} interleaved rounds,"
          f" {'CPU time' if CPU else 'wall clock'};"
          f" load: {load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end\n")
    anchors = [e for e, _ in engines if e.startswith("anchor")]
    print("| type | gguf-lens Gelem/s | wasm simd128 Gelem/s | native ÷ wasm | ggml Gelem/s |"
          " gguf-lens ÷ ggml |" + "".join(f" {e} Gelem/s |" for e in anchors))
    print("|---|---|---|---|---|---|" + "---|" * len(anchors))
    g = lambda s: n / s / 1e9
    for name in types:
        nat = best["native"][name]
        w = best["wasm"].get(name)
        # Two decimals: the goal is a ratio below 2.0.
        wcol = f"{g(w):.3f} | {w / nat:.2f}×" if w else "– | –"
        print(f"| {name} | {g(nat):.3f} | {wcol} | {g(best['ggml'][name]):.3f} |"
              f" {best['ggml'][name] / nat:.1f}× |"
              + "".join(f" {g(best[e][name]):.3f} |" for e in anchors))
    os.remove(path)


if __name__ == "__main__":
    main()
