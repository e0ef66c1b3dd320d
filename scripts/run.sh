#!/usr/bin/env bash
# The main job: build everything, show the bundled sample model with the CLI (header
# summary, one quantized tensor's rows dequantized), then serve the viewer on 127.0.0.1:${PORT:-8080},
# which opens the sample. Pass another GGUF path to inspect it with the CLI only.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
cargo build --release --quiet
model="${1:-fixtures/sample/tiny-llama-Q4_K_M.gguf}"
./target/release/gguf-lens inspect "$model"
tensor=$(./target/release/gguf-lens inspect "$model" --json |
  python3 -c 'import json,sys; t=[t for t in json.load(sys.stdin)["tensors"] if len(t["shape"])>1]; print(t[0]["name"] if t else "")')
if [ -n "$tensor" ]; then
  out=$(mktemp)
  ./target/release/gguf-lens dequant "$model" "$tensor" -o "$out" --rows 0:4
  python3 - "$out" "$tensor" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
values = struct.unpack(f"<{len(data) // 4}f", data)
mean = sum(values) / len(values)
print(f"\n{sys.argv[2]} rows 0..4: {len(values)} values, min {min(values):.6f}, "
      f"max {max(values):.6f}, mean {mean:.6f}; first: {', '.join(f'{v:.5f}' for v in values[:6])}")
PY
  rm -f "$out"
fi

# Then the viewer: build the site (npm package included) and serve it with the sample model.
if [ -z "${1:-}" ]; then
  echo
  exec bash scripts/serve.sh "${PORT:-8080}"
fi
