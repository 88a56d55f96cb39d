#!/usr/bin/env bash
# What the default tokenizer (bpe-openai) costs to build and ship, against tiktoken-rs (issue
# 14): three throwaway binaries that count o200k tokens of their argument, one with each crate
# and one with neither, each built from scratch in release (stripped) in its own target dir
# under target/tokenizer-cost/. Prints the CPU seconds (user + system) of each build, its
# dependencies included, and each binary's size in bytes.
#
#   benches/tokenizer_cost.sh            (needs GNU time at /usr/bin/time)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$root/target/tokenizer-cost"
rm -rf "$work"
mkdir -p "$work"
bpe_version="$(sed -n '/^name = "bpe-openai"$/{n;s/^version = "\(.*\)"$/\1/p}' "$root/Cargo.lock")"
tiktoken_version="$(sed -n '/^name = "tiktoken-rs"$/{n;s/^version = "\(.*\)"$/\1/p}' "$root/Cargo.lock")"

make_crate() { # $1 = kind, $2 = dependency line, $3 = the expression counting `text`
  mkdir -p "$work/$1/src"
  cat >"$work/$1/Cargo.toml" <<TOML
[package]
name = "size-$1"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
$2

[profile.release]
strip = true

[workspace]
TOML
  cat >"$work/$1/src/main.rs" <<RS
fn main() {
    let text = std::env::args().nth(1).unwrap_or_default();
    println!("{}", $3);
}
RS
}
make_crate none "" 'text.split_whitespace().count()'
make_crate tiktoken "tiktoken-rs = \"=$tiktoken_version\"" 'tiktoken_rs::o200k_base().unwrap().encode_ordinary(&text).len()'
make_crate bpe "bpe-openai = \"=$bpe_version\"" 'bpe_openai::o200k_base().count(&text)'

for kind in none tiktoken bpe; do
  (cd "$work/$kind" && cargo fetch -q)
  /usr/bin/time -f "$kind: build %U s user + %S s system CPU, %e s wall" \
    cargo build -q --release --manifest-path "$work/$kind/Cargo.toml" --target-dir "$work/target-$kind"
  bytes=$(stat -c %s "$work/target-$kind/release/size-$kind")
  echo "$kind: binary $bytes bytes; counts \"hello world\" as $("$work/target-$kind/release/size-$kind" "hello world")"
done
