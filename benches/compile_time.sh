#!/usr/bin/env bash
# Compile time of `#[derive(ToolResult)]` against `#[derive(Serialize)]` on the same structs
# (issue 14's goal: the derive within 1.5× of serde_derive at 100 structs).
#
#   benches/compile_time.sh [counts…]        (default: 10 100; RUNS=5 builds of each)
#
# Generates four throwaway crates under target/compile-time/ with N structs of 8 fields each
# (ids, text, an untrusted field, a legend code, a date, a list, an option, a skipped field):
# one annotated for shape (`ToolResult`, which also writes the records: the serde-equivalent
# half), one for serde (`Serialize`), one for serde and schemars together (`Serialize` and
# `JsonSchema`: the nearest pair of derives to what `ToolResult` writes, which includes the JSON
# Schema of the output), one with no derive. Each crate's dependencies are built
# once, outside the timing (they stay in target/compile-time/ between runs); then `cargo build`
# of the crate alone (debug profile, not incremental) is timed RUNS times in CPU seconds
# (user + system: on a shared machine, far steadier than wall time), the four
# crates taking turns so a change in the machine's load hits them alike. Prints the medians,
# the ratio ToolResult ÷ serde_derive (the issue's measure), the ratio of the time each derive
# adds over no derive, and the ratio ToolResult ÷ (serde_derive + schemars_derive).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(10 100)
runs="${RUNS:-5}"
work="$root/target/compile-time"
mkdir -p "$work"
export CARGO_TARGET_DIR="$work/target"
# Every timed build compiles the crate from scratch: with incremental compilation, rustc would
# reuse most of the previous identical build and time little but cargo itself.
export CARGO_INCREMENTAL=0

for kind in shape serde schemars none; do
  mkdir -p "$work/$kind/src"
  cat >"$work/$kind/Cargo.toml" <<EOF
[package]
name = "compile-time-$kind"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
toolshape = { path = "$root/shape-runtime" }
serde = { version = "1", features = ["derive"] }
schemars = "1.2"

[workspace]
EOF
done

structs() { # $1 = count, $2 = shape | serde | none
  local n="$1" kind="$2" i
  echo "#![allow(dead_code)]"
  [ "$kind" = shape ] && echo "use toolshape::{Legend, ToolResult};"
  [ "$kind" = shape ] && echo 'pub const STATUS: Legend<u8> = Legend::new(&[(1, "open"), (2, "closed")]);'
  [ "$kind" = serde ] && echo "use serde::Serialize;"
  [ "$kind" = schemars ] && echo "use schemars::JsonSchema;" && echo "use serde::Serialize;"
  for i in $(seq 1 "$n"); do
    case "$kind" in
      shape)
        echo "#[derive(ToolResult)]"
        echo "#[shape(name = \"item$i\", plural = \"items$i\")]" ;;
      serde) echo "#[derive(Serialize)]" ;;
      schemars) echo "#[derive(Serialize, JsonSchema)]" ;;
    esac
    a() {
      [ "$kind" = shape ] && echo "    #[shape($1)]"
      { [ "$kind" = serde ] || [ "$kind" = schemars ]; } && [ -n "${2:-}" ] && echo "    #[serde($2)]"
      true
    }
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

build() { # $1 = kind; prints the CPU seconds (user + system) one `cargo build` of that crate took
  touch "$work/$1/src/lib.rs"
  local TIMEFORMAT='%U %S' t
  t=$( { time cargo build --quiet --manifest-path "$work/$1/Cargo.toml" >/dev/null; } 2>&1 )
  echo "$t" | tail -n 1 | awk '{ print $1 + $2 }'
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; } # $1 ÷ $2

echo "building the probes' dependencies (not timed)…"
for kind in shape serde schemars none; do
  structs 1 "$kind" >"$work/$kind/src/lib.rs"
  cargo build --quiet --manifest-path "$work/$kind/Cargo.toml"
done

for n in "${counts[@]}"; do
  for kind in shape serde schemars none; do
    structs "$n" "$kind" >"$work/$kind/src/lib.rs"
    : >"$work/times-$kind"
  done
  for _ in $(seq 1 "$runs"); do
    for kind in shape serde schemars none; do build "$kind" >>"$work/times-$kind"; done
  done
  shape=$(median <"$work/times-shape")
  serde=$(median <"$work/times-serde")
  schemars=$(median <"$work/times-schemars")
  none=$(median <"$work/times-none")
  echo "$n structs (median of $runs, CPU time): no derive ${none}s, serde_derive ${serde}s," \
    "serde_derive + schemars_derive ${schemars}s, ToolResult ${shape}s;" \
    "ratio ToolResult / serde_derive = $(ratio "$shape" "$serde")," \
    "of the time each adds = $(ratio "$(echo "$shape - $none" | bc)" "$(echo "$serde - $none" | bc)");" \
    "ToolResult / (serde_derive + schemars_derive) = $(ratio "$shape" "$schemars")"
done
