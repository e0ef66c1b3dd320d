#!/usr/bin/env bash
# Edits the chat template of a sparse 4 GiB GGUF (one F32 tensor, gguf-py writes the header,
# the data is a hole) with the release CLI and prints the wall time. Target: <= 2 s.
# Run: bash benches/edit_chat_template.sh
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
"${ORACLE_VENV:-/root/oracle-venv}/bin/python" - "$dir/big.gguf" <<'PY'
import sys, os, numpy as np, gguf
path = sys.argv[1]
w = gguf.GGUFWriter(path, "llama")
w.add_chat_template("{{ messages }}")
n = 1 << 30  # f32 elements: 4 GiB
w.add_tensor_info("big.weight", (n,), np.dtype(np.float32), n * 4)
w.write_header_to_file(); w.write_kv_data_to_file(); w.write_ti_data_to_file()
w.close()
size = os.path.getsize(path)
pad = (-size) % 32
with open(path, "r+b") as f:
    f.truncate(size + pad + n * 4)
PY
printf '%s' '{% for m in messages %}{{ m.role }}: {{ m.content }}{% endfor %}' > "$dir/t.jinja"
cargo build --release --bin gguf-lens -q
start=$(date +%s.%N)
target/release/gguf-lens set "$dir/big.gguf" "$dir/out.gguf" --chat-template "$dir/t.jinja"
end=$(date +%s.%N)
echo "input $(stat -c %s "$dir/big.gguf") bytes, output $(stat -c %s "$dir/out.gguf") bytes"
echo "edit chat template: $(echo "$end - $start" | bc) s (target <= 2 s)"
