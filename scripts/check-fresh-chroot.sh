#!/usr/bin/env bash
# Proves the README's test command on a machine where nothing was installed by hand: builds a
# Debian bookworm chroot holding only what a fresh machine of this kind starts with, clones this
# repository into it and runs `CI=true bash .ci/run` there (issue #12: "prove it from a clean
# clone in a clean environment").
#
#   bash scripts/check-fresh-chroot.sh PACKAGES.txt [DIR]     (as root; DIR default /work/chroot/fresh)
#
# PACKAGES.txt: the Debian packages a fresh machine has, one name per line (the workplace's
# list of a new machine's packages, less those from repositories this machine cannot reach).
# Taken from the host, because a fresh machine has them and no registry serves them: the
# rustup toolchain (stable only; the extra targets are removed again, so setup must add them),
# cargo-nextest, Node and npm (nodesource's build), the CA certificates and TLS settings of this
# workplace's egress proxy. Nothing else from the host: no cargo tools, no npm globals, no
# Chromium, no cross compilers, no Python packages. Output: DIR.log, last line
# `fresh-chroot: rc=N after S s`.
set -euo pipefail
packages="${1:?usage: check-fresh-chroot.sh PACKAGES.txt [DIR]}"
root="${2:-/work/chroot/fresh}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
log="$root.log"

command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap
if [ ! -x "$root/bin/bash" ]; then
  debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian
fi
rm -f "$root/etc/apt/sources.list"
cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/"
cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/" 2>/dev/null || true
cp /etc/pip.conf "$root/etc/pip.conf" 2>/dev/null || true
for f in /etc/npmrc /usr/etc/npmrc /root/.npmrc; do
  [ -f "$f" ] && mkdir -p "$root$(dirname "$f")" && cp "$f" "$root$f"
done

mountpoint -q "$root/proc" || mount --bind /proc "$root/proc"
mountpoint -q "$root/sys" || mount --bind /sys "$root/sys"
if ! mountpoint -q "$root/dev"; then
  mount --rbind /dev "$root/dev" && mount --make-rslave "$root/dev"
fi
cleanup() { umount -R "$root/dev" "$root/sys" "$root/proc" 2>/dev/null || true; }
trap cleanup EXIT

cp "$packages" "$root/root/packages.txt"
chroot "$root" bash -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(cat /root/packages.txt) >/root/apt.log && update-ca-certificates >/dev/null'

# Node and npm as the fresh machine has them (not in Debian's repositories at this version).
cp -a /usr/bin/node "$root/usr/bin/node"
rm -rf "$root/usr/lib/node_modules/npm"
mkdir -p "$root/usr/lib/node_modules"
cp -a /usr/lib/node_modules/npm "$root/usr/lib/node_modules/"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/bin/npx"

# The rustup toolchain, host target only, and the rustup proxies (no installed cargo tools).
mkdir -p "$root/root/.rustup/toolchains" "$root/root/.cargo/bin"
cp -a /root/.rustup/settings.toml "$root/root/.rustup/"
rm -rf "$root/root/.rustup/toolchains/stable-x86_64-unknown-linux-gnu"
cp -a /root/.rustup/toolchains/stable-x86_64-unknown-linux-gnu "$root/root/.rustup/toolchains/"
for proxy in cargo cargo-clippy cargo-fmt clippy-driver rustc rustdoc rustfmt rustup; do
  cp -a "/root/.cargo/bin/$proxy" "$root/root/.cargo/bin/"
done
cp -a /usr/local/bin/cargo-nextest "$root/usr/local/bin/" 2>/dev/null || true
chroot "$root" /root/.cargo/bin/rustup target list --installed --toolchain stable |
  grep -vx x86_64-unknown-linux-gnu |
  xargs -r chroot "$root" /usr/bin/env HOME=/root /root/.cargo/bin/rustup target remove --toolchain stable

rm -rf "$root/root/repo"
git clone -q "$repo" "$root/root/repo"
ca=/etc/ssl/certs/ca-certificates.crt
chroot "$root" /usr/bin/env -i HOME=/root CI=true \
  PATH=/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  SSL_CERT_FILE=$ca SSL_CERT_DIR=/etc/ssl/certs NODE_EXTRA_CA_CERTS=$ca GIT_SSL_CAINFO=$ca \
  CURL_CA_BUNDLE=$ca PIP_CERT=$ca REQUESTS_CA_BUNDLE=$ca \
  /bin/bash -c 'cd /root/repo && start=$(date +%s); bash .ci/run; rc=$?;
    echo "fresh-chroot: rc=$rc after $(( $(date +%s) - start )) s"; exit $rc' 2>&1 | tee "$log"
