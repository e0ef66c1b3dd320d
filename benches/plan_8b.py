"""The memory planner at real scale: a Llama-3-8B-shaped GGUF (real header, 32 layers, 128256
tokens, Q4_0 weights with a Q6_K output; the data region a hole, so 4.3 GiB that take no disk),
planned by llama.cpp (llama-cpp-python 0.3.36, CPU) and by `gguf-lens memory`, side by side.
Not a test (the file is not committed); a check that the small oracle models' figures hold at
full size. Last run: weights 4437.80 = 4437.80 MiB, KV 512.00 = 512.00 and 1024.00 = 1024.00,
compute 308.01 vs 308.00 (0.0%), 266.50 vs 278.50 (+4.5%), 266.50 vs 276.50 (+3.8%).
With `-ngl`, per device: benches/plan_8b_offload.py.

    cargo build && /root/oracle-venv/bin/python benches/plan_8b.py [DIR]
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import gguf

root = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(root / "fixtures"))
from llama_log import LOG, L, load_model, new_context  # noqa: E402
work = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())
path = work / "llama8b.gguf"
Q = gguf.GGMLQuantizationType
n_layer, n_embd, n_head, n_kv, n_ff, V = 32, 4096, 32, 8, 14336, 128256

w = gguf.GGUFWriter(str(path), "llama")
w.add_context_length(8192)
w.add_block_count(n_layer)
w.add_embedding_length(n_embd)
w.add_feed_forward_length(n_ff)
w.add_head_count(n_head)
w.add_head_count_kv(n_kv)
w.add_layer_norm_rms_eps(1e-5)
w.add_rope_dimension_count(128)
toks = ["<unk>", "<s>", "</s>"] + [f"<0x{i:02X}>" for i in range(256)]
toks += [f"t{i}" for i in range(V - len(toks))]
w.add_tokenizer_model("llama")
w.add_token_list(toks)
w.add_token_scores([0.0] * V)
w.add_token_types([2, 3, 3] + [6] * 256 + [1] * (V - 259))


def t(name, shape, q=Q.Q4_0):
    bs, ts = gguf.GGML_QUANT_SIZES[q]
    nbytes = int(np.prod(shape)) // bs * ts
    if q == Q.F32:
        w.add_tensor_info(name, tuple(reversed(shape)), np.float32, nbytes, raw_dtype=q)
    else:
        w.add_tensor_info(name, tuple(reversed(shape[1:])) + (shape[0] // bs * ts,), np.uint8,
                          nbytes, raw_dtype=q)


t("token_embd.weight", [n_embd, V])
t("output_norm.weight", [n_embd], Q.F32)
t("output.weight", [n_embd, V], Q.Q6_K)
for i in range(n_layer):
    p = f"blk.{i}."
    t(p + "attn_norm.weight", [n_embd], Q.F32)
    t(p + "ffn_norm.weight", [n_embd], Q.F32)
    t(p + "attn_q.weight", [n_embd, n_embd])
    t(p + "attn_k.weight", [n_embd, n_kv * 128])
    t(p + "attn_v.weight", [n_embd, n_kv * 128])
    t(p + "attn_output.weight", [n_embd, n_embd])
    t(p + "ffn_gate.weight", [n_embd, n_ff])
    t(p + "ffn_up.weight", [n_embd, n_ff])
    t(p + "ffn_down.weight", [n_ff, n_embd])
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_ti_data_to_file()
w.close()
os.truncate(path, 6 << 30)  # room for the reader, then the exact end
end = max(x.data_offset + x.n_bytes for x in gguf.GGUFReader(str(path)).tensors)
os.truncate(path, end)

model = load_model(path)
print("llama.cpp:", [x.strip() for x in LOG if "model buffer size" in x])
for n_ctx, fa, n_seq in [(4096, False, 1), (4096, True, 1), (8192, True, 4)]:
    ctx = new_context(model, n_ctx, n_seq, flash_attn=fa)
    print(f"llama.cpp  -c {n_ctx} -fa {fa} -np {n_seq}:",
          [x.strip() for x in LOG if "llama_kv_cache: size" in x or "compute buffer size" in x])
    L.llama_free(ctx)
    args = [str(root / "target/debug/gguf-lens"), "memory", str(path), "--ctx", str(n_ctx),
            "--parallel", str(n_seq), "--json"] + (["--flash-attn"] if fa else [])
    v = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    mib = lambda b: f"{b / 2**20:.2f} MiB"
    print(f"gguf-lens  -c {n_ctx} -fa {fa} -np {n_seq}: weights {mib(v['weights_bytes'])}, "
          f"KV {mib(v['kv_cache_bytes'])}, compute {mib(v['compute_bytes'])}")
L.llama_model_free(model)
