"""A GGUF whose every string is an HTML/JS injection attempt, for the viewer's security test.
Each payload, if it ever ran, would open a dialog and set document.title to "pwned".

usage: .venv/bin/python pkg-tests/viewer/make_malicious.py → pkg-tests/viewer/fixtures/malicious.gguf
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import gguf

HERE = Path(__file__).resolve().parent
OUT = HERE / "fixtures" / "malicious.gguf"
RUN = "alert(document.domain);document.title='pwned'"
PAYLOADS = {
    "arch": f"<svg onload=\"{RUN}\">",
    "name": f"<img src=x onerror=\"{RUN}\">",
    "description": f"<script>{RUN}</script>",
    "url": f"javascript:{RUN}",
    "key": f"evil.<script>{RUN}</script>",
    "template": f"</pre><script>{RUN}</script>{{{{ messages }}}}<iframe src=\"javascript:{RUN}\"></iframe>",
    # Shorter than the others: ggml (and gguf-lens) refuse tensor names of 64 bytes or more.
    "tensor": "<img src=x onerror=\"alert(1);document.title='pwned'\">.weight",
    "tokens": [f"<img src=x onerror=\"{RUN}\">", f"javascript:{RUN}", f"<script>{RUN}</script>", "\"><b>bold</b>", "plain"],
    "model": f"<a href=\"javascript:{RUN}\">x</a>",
    "merge": f"<i onmouseover={RUN}> x",
}


def main() -> None:
    w = gguf.GGUFWriter(str(OUT), PAYLOADS["arch"])
    w.add_name(PAYLOADS["name"])
    w.add_description(PAYLOADS["description"])
    w.add_string("general.url", PAYLOADS["url"])
    w.add_string(PAYLOADS["key"], PAYLOADS["description"])
    w.add_uint32("general.file_type", 0)
    w.add_context_length(64)
    w.add_chat_template(PAYLOADS["template"])
    w.add_tokenizer_model(PAYLOADS["model"])
    w.add_token_list(PAYLOADS["tokens"])
    w.add_token_types([1] * len(PAYLOADS["tokens"]))
    w.add_array("tokenizer.ggml.merges", [PAYLOADS["merge"], "a b"])
    w.add_bos_token_id(0)
    w.add_eos_token_id(2)
    w.add_tensor(PAYLOADS["tensor"], np.arange(64, dtype=np.float32).reshape(2, 32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    (HERE / "fixtures" / "malicious.json").write_text(json.dumps(PAYLOADS, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
