"""Quantizer throughput, one thread, gguf-lens beside ggml in the same run (issue #17 targets:
>= 0.5 Gelem/s for Q8_0/Q4_0, >= 0.15 for the K-quants).
Run: /root/oracle-venv/bin/python benches/bench_quantize.py [N_VALUES]
"""
import ctypes, os, subprocess, sys, time
import numpy as np
import llama_cpp

TYPES = {"F16": 1, "Q4_0": 2, "Q4_1": 3, "Q5_0": 6, "Q5_1": 7, "Q8_0": 8, "Q2_K": 10, "Q3_K": 11,
         "Q4_K": 12, "Q5_K": 13, "Q6_K": 14, "IQ4_NL": 20, "IQ4_XS": 23, "BF16": 30,
         "TQ1_0": 34, "TQ2_0": 35, "MXFP4": 39}

def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 24
    n -= n % 256
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    x = (np.random.default_rng(0).standard_normal(n) * 0.02).astype(np.float32)
    path = "/tmp/gguf-lens-quantize-bench.f32"
    x.tofile(path)
    lib = ctypes.CDLL(os.path.join(os.path.dirname(llama_cpp.__file__), "lib", "libggml-base.so"))
    q = lib.ggml_quantize_chunk
    q.restype = ctypes.c_size_t
    q.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                  ctypes.c_int64, ctypes.c_void_p]
    dst = np.zeros(n * 4, dtype=np.uint8)
    ggml = {}
    for name, tid in TYPES.items():
        best = float("inf")
        for _ in range(3):
            t = time.perf_counter()
            q(tid, x.ctypes.data, dst.ctypes.data, 0, n // 256, 256, None)
            best = min(best, time.perf_counter() - t)
        ggml[name] = best
    subprocess.run(["cargo", "build", "--release", "--example", "quantize_bench"], cwd=root, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = subprocess.run([os.path.join(root, "target/release/examples/quantize_bench"), path],
                         check=True, capture_output=True, text=True).stdout
    print(f"{n} values (N(0, 0.02)), one thread, best of 3\n")
    print("| type | gguf-lens s | gguf-lens Gelem/s | ggml s | ggml Gelem/s |")
    print("|---|---|---|---|---|")
    for line in out.split("\n"):
        if not line:
            continue
        name, secs, _ = line.split()
        secs = float(secs)
        print(f"| {name} | {secs:.4f} | {n / secs / 1e9:.3f} | {ggml[name]:.4f} | {n / ggml[name] / 1e9:.3f} |")
    os.remove(path)

if __name__ == "__main__":
    main()
