#!/usr/bin/env bash
# The viewer's browser tests: builds the site (scripts/build-site.sh), serves it on 127.0.0.1 and
# drives Debian's Chromium with playwright-core. Screenshots land in pkg-tests/viewer/artifacts/.
# Engine: the npm package when its build is found (see build-site.sh; GGUF_LENS_PKG=DIR to pick
# one), else the stand-in; VIEWER_ENGINE=package|lite asserts which one the page runs on.
set -euo pipefail
cd "$(dirname "$0")"
bash setup.sh
node --test --test-concurrency=1 sample.test.mjs inspector.test.mjs security.test.mjs sources.test.mjs
