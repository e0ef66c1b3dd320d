"""The memory planner with `-ngl` at real scale: the Llama-3-8B-shaped sparse file of
benches/plan_8b.py loaded by llama.cpp with a GPU device (its RPC backend, the build and driver of
fixtures/make_plan_offload.py) and planned by `gguf-lens memory --ngl`, per device, side by side.
Not a test (the file is not committed). Last run (MiB, llama.cpp = ours unless noted): weights
CPU/GPU 4437.80/410.99 (-ngl 1), 3969.68/879.12 (5), 281.81/4155.99 (33); KV per device equal;
compute CPU/GPU -ngl 1: 308.01/258.50 vs 308.00/258.50; -ngl 5: 308.01/300.01 vs 308.00/308.00;
-ngl 5 -fa -c 8192: 124.01/258.50 vs 116.00/282.50; -ngl 33: 28.01/300.01 vs 28.00/308.00.

    cargo build && /root/oracle-venv/bin/python benches/plan_8b.py DIR
    LLAMA_CPP_LIB_PATH=~/.cache/gguf-lens/llama-rpc/build/bin \
        /root/oracle-venv/bin/python benches/plan_8b_offload.py DIR/llama8b.gguf
"""
import json
import subprocess
import sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent
# the generator's driver (RPC server, llama.cpp run and log parsing), without its main()
generator = root / "fixtures/make_plan_offload.py"
sys.path.insert(0, str(generator.parent))  # its llama_log
g = {"__file__": str(generator), "__name__": "plan_offload"}
exec(compile(generator.read_text().rsplit("\nmain()", 1)[0], str(generator), "exec"), g)
g["scratch"].mkdir(parents=True, exist_ok=True)
path = sys.argv[1]
server = g["start_server"]()
try:
    for ngl, n_ctx, fa in [(1, 4096, False), (5, 4096, False), (5, 8192, True), (33, 4096, False)]:
        r = g["run"](path, ngl, n_ctx, 1, "f16", "f16", fa)
        args = [str(root / "target/debug/gguf-lens"), "memory", path, "--ctx", str(n_ctx),
                "--ngl", str(ngl), "--json"] + (["--flash-attn"] if fa else [])
        v = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
        m = lambda b: round(b / 2**20, 2)  # noqa: E731
        print(f"-ngl {ngl} -c {n_ctx} -fa {fa}: llama.cpp weights {r['weights_mib']} "
              f"KV {r['kv_mib']} compute {r['compute_mib']}")
        print(f"  gguf-lens weights cpu {m(v['weights']['cpu_bytes'])} gpu "
              f"{m(v['weights']['gpu_bytes'])}, KV cpu {m(v['kv_cache']['cpu_bytes'])} gpu "
              f"{m(v['kv_cache']['gpu_bytes'])}, compute cpu {m(v['compute']['cpu_bytes'])} gpu "
              f"{m(v['compute']['gpu_bytes'])}", flush=True)
finally:
    server.kill()
    server.wait()
