#!/usr/bin/env python3
"""MLX affine dequantization: `gguf-lens dequant` (release build) against mlx's own
`mx.dequantize` on one 8192 x 4096 layer per bit width (33.6 M values, group 64, quantized by
`mx.quantize` from N(0, 0.02), saved by `mx.save_safetensors` with mlx-lm's config.json), CPU
time of each (the machine is shared: wall times are noisy, CPU time less so). Checks the two
outputs agree within 1e-6 of the layer's max |w| (mlx's own reading), then prints one Markdown
table row per tool and width. With `--npm PKG_DIR` (a built package, `bash scripts/build-npm.sh`
makes `pkg/`), also npm `readTensor` in Node of the same file, with the simd128 and the scalar
wasm module (benches/npm-checkpoint-read.mjs; in memory after the first read, least of 3).

  /path/to/venv-with-mlx/bin/python benches/bench_mlx.py target/release/gguf-lens [BITS,...] [--npm pkg]
"""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import mlx.core as mx
import numpy as np

NAME = "model.layers.0.mlp.up_proj"
ROWS, COLS, GROUP = 8192, 4096, 64


def best(runs, f):
    """The least CPU and wall seconds of `runs` calls of `f` (CPU: this process, all threads)."""
    cpu, wall = [], []
    for _ in range(runs):
        c0, t0 = time.process_time(), time.perf_counter()
        f()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - t0)
    return min(cpu), min(wall)


def main():
    args = sys.argv[1:]
    npm = None
    if "--npm" in args:
        i = args.index("--npm")
        npm = os.path.abspath(args[i + 1])
        del args[i : i + 2]
    binary = args[0]
    widths = [int(b) for b in (args[1] if len(args) > 1 else "4,8,3").split(",")]
    here = os.path.dirname(os.path.abspath(__file__))
    mx.set_default_device(mx.cpu)
    mx.random.seed(1)
    w = mx.random.normal((ROWS, COLS)) * 0.02
    n = ROWS * COLS
    print("| bits | tool | CPU s | wall s | M values / CPU s |")
    print("|---|---|---|---|---|")
    for bits in widths:
        wq, scales, biases = mx.quantize(w, group_size=GROUP, bits=bits)
        mx.eval(wq, scales, biases)

        def library():
            out = mx.dequantize(wq, scales, biases, group_size=GROUP, bits=bits)
            mx.eval(out)
            return out

        want = np.array(library())
        cpu, wall = best(3, library)
        print(f"| {bits} | mlx {mx.__version__} `mx.dequantize` (CPU device, in memory) | {cpu:.3f} | {wall:.3f} | {n / 1e6 / cpu:.0f} |")
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "model.safetensors")
            mx.save_safetensors(path, {f"{NAME}.weight": wq, f"{NAME}.scales": scales, f"{NAME}.biases": biases})
            with open(os.path.join(tmp, "config.json"), "w") as f:
                json.dump({"quantization": {"group_size": GROUP, "bits": bits}}, f)
            out = os.path.join(tmp, "out.f32")
            runs = []
            for _ in range(3):
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.perf_counter()
                subprocess.run([binary, "dequant", path, f"{NAME}.weight", "-o", out], check=True)
                t1 = time.perf_counter()
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                runs.append(((after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), t1 - t0))
            got = np.fromfile(out, dtype=np.float32).reshape(want.shape)
            scale = float(np.abs(want).max())
            diff = float(np.abs(got - want).max())
            assert diff <= 1e-6 * scale, f"{bits} bits: max |diff| {diff} > 1e-6 x {scale}"
            exact = np.array_equal(got.view(np.uint32), want.view(np.uint32))
            node = []
            for flag in ([], ["--scalar"]) if npm else ():
                line = subprocess.run(
                    ["node", os.path.join(here, "npm-checkpoint-read.mjs"), npm, path, f"{NAME}.weight", *flag],
                    check=True, capture_output=True, text=True,
                ).stdout.split()
                node.append((flag, float(line[1]), float(line[0])))
        cpu, wall = min(r[0] for r in runs), min(r[1] for r in runs)
        agree = "bit for bit" if exact else f"within {diff / scale:.1e} of max |w|"
        print(f"| {bits} | gguf-lens `dequant` (file to file; {agree}) | {cpu:.3f} | {wall:.3f} | {n / 1e6 / cpu:.0f} |")
        for flag, cpu, wall in node:
            module = "scalar" if flag else "simd128"
            print(f"| {bits} | npm `readTensor` in Node, {module} wasm | {cpu:.3f} | {wall:.3f} | {n / 1e6 / cpu:.0f} |")


if __name__ == "__main__":
    main()
