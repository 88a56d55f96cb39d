#!/usr/bin/env python3
"""Counts the names a user of `toolshape` can reach, from rustdoc's JSON.

    cargo +nightly rustdoc -p toolshape --all-features -- -Z unstable-options --output-format json
    python3 docs/tools/count_public_names.py target/doc/toolshape.json [--list]

Walks the crate from its root through public modules and re-exports (`pub use`), skipping
`#[doc(hidden)]` items (`__private`, which only generated code names). A name is an item a
path reaches: a struct, enum, trait, function, constant, static, type alias or macro (not a
module, not a field, method or variant). Prints the root's names, the names in public modules
(each once, at the first path found, breadth first), and their counts.
"""
import json
import sys
from collections import deque

NAMED = {"struct", "enum", "trait", "function", "constant", "static", "type_alias", "macro",
         "proc_macro", "union", "trait_alias"}


def kind_of(item):
    inner = item.get("inner", {})
    return next(iter(inner)) if isinstance(inner, dict) and inner else None


def hidden(item):
    attrs = item.get("attrs") or []
    text = json.dumps(attrs)
    return "hidden" in text and "doc" in text


def main():
    path = sys.argv[1]
    listing = "--list" in sys.argv
    doc = json.load(open(path))
    index = doc["index"]
    root = doc["root"]
    root = str(root)
    seen = {}
    root_names = []
    queue = deque([(root, "toolshape")])
    visited_modules = set()
    while queue:
        mid, where = queue.popleft()
        if mid in visited_modules:
            continue
        visited_modules.add(mid)
        module = index[mid]
        for child in module["inner"]["module"]["items"]:
            child = str(child)
            item = index.get(child)
            if item is None or hidden(item) or item.get("visibility") not in ("public", None):
                continue
            kind = kind_of(item)
            if kind == "use":
                use = item["inner"]["use"]
                target = use.get("id")
                name = use.get("name")
                if target is None:
                    continue
                target = str(target)
                titem = index.get(target)
                if titem is None:
                    # An item of another crate (the derive macro): named here.
                    key = f"{where}::{name}"
                    seen.setdefault(("ext", where, name), key)
                    if mid == root:
                        root_names.append(name)
                    continue
                if hidden(titem):
                    continue
                tkind = kind_of(titem)
                if tkind == "module":
                    if use.get("is_glob"):
                        queue.appendleft((target, where))
                    else:
                        queue.append((target, f"{where}::{name}"))
                    continue
                if tkind in NAMED:
                    seen.setdefault(target, f"{where}::{name}")
                    if mid == root:
                        root_names.append(name)
                continue
            if kind == "module":
                queue.append((child, f"{where}::{item['name']}"))
                continue
            if kind in NAMED:
                seen.setdefault(child, f"{where}::{item['name']}")
                if mid == root:
                    root_names.append(item["name"])
    names = sorted(set(seen.values()))
    in_modules = [n for n in names if n.count("::") > 1]
    print(f"root names: {len(set(root_names))} ({', '.join(sorted(set(root_names)))})")
    print(f"names in public modules: {len(in_modules)}")
    if listing:
        for n in in_modules:
            print("  " + n)


if __name__ == "__main__":
    main()
