#!/usr/bin/env bash
# The viewer's browser tests: builds the site (scripts/build-site.sh), serves it on 127.0.0.1 and
# drives Debian's Chromium with playwright-core. Screenshots land in pkg-tests/viewer/artifacts/.
# The page runs on the npm package, which build-site.sh builds (scripts/build-npm.sh).
set -euo pipefail
cd "$(dirname "$0")"
bash setup.sh
# Built once here for every test file (each runs in its own process and would build it again).
bash ../../scripts/build-site.sh "$(cd ../.. && pwd)/site-test"
export GGUF_LENS_SITE_BUILT=1
# The real model the axe checks and screenshots open (all-MiniLM-L6-v2, cached; seconds once made).
GGUF_LENS_REAL_MODEL=$(bash ../../scripts/real-model.sh)
export GGUF_LENS_REAL_MODEL
node --test --test-concurrency=1 a11y.test.mjs real-model.test.mjs messages.test.mjs state.test.mjs sample.test.mjs preview.test.mjs tables.test.mjs inspector.test.mjs security.test.mjs sources.test.mjs safetensors.test.mjs quantized.test.mjs compare-worker.test.mjs compare.test.mjs compare-formats.test.mjs compare-export.test.mjs edit.test.mjs quant-error.test.mjs quant-error-pool.test.mjs memory.test.mjs fit.test.mjs lab.test.mjs repo.test.mjs worker.test.mjs
