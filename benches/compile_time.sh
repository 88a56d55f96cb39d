#!/usr/bin/env bash
# Compile time of `#[derive(ToolResult)]` against `#[derive(Serialize)]` on the same structs
# (issue 14's goal: the derive within 1.5× of serde_derive at 100 structs).
#
#   benches/compile_time.sh [counts…]        (default: 10 100)
#
# Generates a throwaway crate in a temporary directory with N structs of 8 fields each (ids,
# text, an untrusted field, a legend code, a date, a list, an option, a skipped field), once
# annotated for shape and once for serde, and times `cargo build` of that crate alone (its
# dependencies are built first, outside the timing; debug profile, median of 3). Prints each
# time, the time of the same structs with no derive, and the ratios of the raw build times and
# of the time each derive adds.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(10 100)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export CARGO_TARGET_DIR="$work/target"

cat >"$work/Cargo.toml" <<EOF
[package]
name = "compile-time-probe"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
toolshape = { path = "$root/shape-runtime" }
serde = { version = "1", features = ["derive"] }
EOF
mkdir -p "$work/src"

structs() { # $1 = count, $2 = shape | serde | none
  local n="$1" kind="$2" i
  echo "#![allow(dead_code)]"
  [ "$kind" = shape ] && echo "use toolshape::{Legend, ToolResult};"
  [ "$kind" = shape ] && echo 'pub const STATUS: Legend<u8> = Legend::new(&[(1, "open"), (2, "closed")]);'
  [ "$kind" = serde ] && echo "use serde::Serialize;"
  for i in $(seq 1 "$n"); do
    case "$kind" in
      shape)
        echo "#[derive(ToolResult)]"
        echo "#[shape(name = \"item$i\", plural = \"items$i\")]" ;;
      serde) echo "#[derive(Serialize)]" ;;
    esac
    a() { [ "$kind" = shape ] && echo "    #[shape($1)]"; [ "$kind" = serde ] && [ -n "${2:-}" ] && echo "    #[serde($2)]"; true; }
    echo "pub struct Item$i {"
    a "id(short)";                        echo "    pub id: String,"
    a "show";                             echo "    pub name: String,"
    a "untrusted(max_tokens = 40)";       echo "    pub subject: String,"
    a "legend = STATUS, rename = \"status\"" 'rename = "status"'; echo "    pub status_code: u8,"
    a "date, rank = desc";                echo "    pub created_at: String,"
    a "show";                             echo "    pub labels: Vec<String>,"
    a "show";                             echo "    pub assignee: Option<String>,"
    a "skip" "skip";                      echo "    pub secret: String,"
    echo "}"
  done
}

median_build() { # times `cargo build` after touching the source; median of 3, in seconds
  local t=()
  for _ in 1 2 3; do
    touch "$work/src/lib.rs"
    local start end
    start=$(date +%s.%N)
    cargo build --quiet --manifest-path "$work/Cargo.toml"
    end=$(date +%s.%N)
    t+=("$(echo "$end - $start" | bc)")
  done
  printf '%s\n' "${t[@]}" | sort -n | sed -n 2p
}

echo "building the probe's dependencies (not timed)…"
structs 1 shape >"$work/src/lib.rs"
cargo build --quiet --manifest-path "$work/Cargo.toml"

for n in "${counts[@]}"; do
  structs "$n" none >"$work/src/lib.rs"; none=$(median_build)
  structs "$n" serde >"$work/src/lib.rs"; serde=$(median_build)
  structs "$n" shape >"$work/src/lib.rs"; shape=$(median_build)
  echo "$n structs: no derive ${none}s, serde_derive ${serde}s, ToolResult ${shape}s;" \
    "ratio ToolResult / serde_derive = $(echo "scale=2; $shape / $serde" | bc)," \
    "of the time each adds = $(echo "scale=2; ($shape - $none) / ($serde - $none)" | bc)"
done
