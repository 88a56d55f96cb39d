#!/usr/bin/env bash
# Installs the upstream MCP servers the proxy check drives, with the project's own files, and
# generates their data: `tests/proxy/setup.sh [DATA_DIR]` (default target/proxy-data).
#   - the reference filesystem and everything servers, from npm (package-lock.json, npm ci)
#   - mcp-server-git, from PyPI, into tests/proxy/.venv (requirements.txt)
#   - a tree of 3,000 files (ten of them 200 KB text files of 2,000+ lines) and a git
#     repository of 3,000 commits, both generated the same way every run
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
data="${1:-$here/../../target/proxy-data}"
(cd "$here" && npm ci --no-audit --no-fund --silent)
if [ ! -x "$here/.venv/bin/mcp-server-git" ]; then
  python3 -m venv "$here/.venv"
  "$here/.venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
fi
python3 "$here/gen_data.py" "$data"
echo "upstreams ready; data in $data"
