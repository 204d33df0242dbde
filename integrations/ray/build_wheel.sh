#!/usr/bin/env bash
# Builds the wsp-ray wheel with a wsp binary inside: build_wheel.sh WSP_BINARY OUT_DIR [PYTHON]
# With uv on PATH it builds with `uv build`; otherwise with PYTHON's pip (default python3).
# The binary is copied into the package for the build and removed after, so a checkout stays a
# pure-Python install (`pip install ./integrations/ray` then uses `wsp` from PATH).
set -euo pipefail
binary=$1 out=$2 python=${3:-python3}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$here/src/wsp_ray/bin" "$out"
cp "$binary" "$here/src/wsp_ray/bin/wsp"
chmod 755 "$here/src/wsp_ray/bin/wsp"
trap 'rm -rf "$here/src/wsp_ray/bin" "$here/build" "$here/src/wsp_ray.egg-info"' EXIT
if command -v uv >/dev/null; then
    uv build --quiet --wheel --python "$python" --out-dir "$out" "$here"
else
    "$python" -m pip wheel --quiet --disable-pip-version-check --no-deps --wheel-dir "$out" "$here"
fi
ls "$out"/wsp_ray-*.whl
