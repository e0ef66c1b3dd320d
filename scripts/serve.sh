#!/usr/bin/env bash
# Builds the viewer (scripts/build-site.sh → site/) and serves it on 127.0.0.1 with byte-range
# support. usage: bash scripts/serve.sh [PORT]   (default 8080; the URL is printed)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build-site.sh site
exec node scripts/viewer-server.mjs site "${1:-8080}"
