#!/usr/bin/env bash
# Builds the Ollama server that `make e2e` loads, once per machine, and prints
# the binary's path on stdout (logs go to stderr).
#
# Ollama embeds llama.cpp and compiles it through cgo: about 10 minutes on
# 2 cores. The binary is installed into a cache folder and reused; the build is
# skipped when it is already there.
#
# The Go module zip of Ollama leaves out some of llama.cpp's vendored headers:
# Debian's nlohmann-json3-dev and libstb-dev provide two of them, and
# e2e/include/miniaudio/miniaudio.h (ours) stands in for the audio decoder,
# which a text-only model never uses. Without -O3 -march=x86-64-v3 the CPU
# kernels run without AVX2/FMA and prefill is about 15 times slower.
set -euo pipefail

version="${OLLAMA_VERSION:-v0.17.4}"
here="$(cd "$(dirname "$0")" && pwd)"
cache="${SERVESIM_OLLAMA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/servesim/ollama-$version}"
bin="$cache/bin/ollama"

log() { echo "build-ollama: $*" >&2; }

if [ -x "$bin" ]; then
  log "reusing $bin"
  echo "$bin"
  exit 0
fi

need=()
[ -f /usr/include/nlohmann/json.hpp ] || need+=(nlohmann-json3-dev)
[ -f /usr/include/stb/stb_image.h ] || need+=(libstb-dev)
command -v g++ >/dev/null 2>&1 || need+=(g++)
if [ "${#need[@]}" -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  log "installing ${need[*]}"
  $sudo apt-get update >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${need[@]}" >&2
fi

if ! grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
  log "warning: this CPU has no AVX2; building for x86-64-v3 will not run here"
fi

mkdir -p "$cache/bin"
flags="-O3 -march=x86-64-v3 -I$here/include"
log "go install github.com/ollama/ollama@$version into $cache/bin (about 10 minutes on 2 cores)"
start=$(date +%s)
# Build into a temporary GOBIN so an interrupted build never leaves a binary
# that looks complete.
tmp="$(mktemp -d "$cache/build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
GOBIN="$tmp" CGO_ENABLED=1 CGO_CFLAGS="$flags" CGO_CXXFLAGS="$flags" \
  GOFLAGS="${GOFLAGS:-} -trimpath" \
  go install "github.com/ollama/ollama@$version" >&2
mv "$tmp/ollama" "$bin"
log "built $bin in $(( $(date +%s) - start )) s"
echo "$bin"
