//! ARCHITECTURE.md lists every module (issue 47): a file added under `shape-runtime/src`,
//! `shape-internals/src`, `shape-derive/src` or `shape-proxy/src` that the document does not
//! name fails here, with the names to add. The runtime's modules are read from the floors table (`page/` (`mod`,
//! `plan`, …), `mcp` (`mcp.rs`, `mcp/harness.rs`), `budget`); the derive's and the proxy's
//! from their tables' first column (`attr.rs`). Test-only files (`tests.rs`, `*_tests.rs`)
//! belong to the module beside them.

use std::collections::BTreeSet;
use std::path::Path;

/// Every `.rs` file under `dir`, as a path relative to it with `/` separators.
fn files(dir: &Path, prefix: &str, out: &mut BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        let path = entry.path();
        if path.is_dir() {
            files(&path, &format!("{prefix}{name}/"), out);
        } else if let Some(stem) = name.strip_suffix(".rs")
            && stem != "tests"
            && !stem.ends_with("_tests")
        {
            out.insert(format!("{prefix}{name}"));
        }
    }
}

/// The text between backticks in `line`, in order.
fn ticked(line: &str) -> Vec<&str> {
    line.split('`').skip(1).step_by(2).collect()
}

/// The runtime files the floors table names.
fn floors(doc: &str) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    for line in doc.lines().filter(|l| {
        l.strip_prefix("| ")
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
    }) {
        let modules = line.splitn(3, '|').nth(2).unwrap_or_default();
        // Each entry: a module, with its files in parentheses when it has several.
        for entry in modules.split(" · ") {
            let (head, inner) = match entry.split_once('(') {
                Some((head, inner)) => (head, Some(inner)),
                None => (entry, None),
            };
            let Some(module) = ticked(head).first().copied() else {
                continue;
            };
            let inner: Vec<&str> = inner.map(ticked).unwrap_or_default();
            if let Some(folder) = module.strip_suffix('/') {
                for file in inner {
                    named.insert(format!("{folder}/{file}.rs"));
                }
            } else if inner.iter().any(|f| f.ends_with(".rs")) {
                named.extend(inner.iter().map(|f| (*f).to_owned()));
            } else {
                named.insert(format!("{module}.rs"));
            }
        }
    }
    named
}

#[test]
fn architecture_md_names_every_module() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let mut missing: Vec<String> = Vec::new();

    let mut runtime = BTreeSet::new();
    files(&root.join("shape-runtime/src"), "", &mut runtime);
    let named = floors(&doc);
    missing.extend(
        runtime
            .iter()
            .filter(|f| !named.contains(*f))
            .map(|f| format!("shape-runtime/src/{f}")),
    );
    // Named but gone: the table would mislead.
    missing.extend(
        named
            .iter()
            .filter(|f| !runtime.contains(*f))
            .map(|f| format!("(listed, no such file) shape-runtime/src/{f}")),
    );

    let listed: BTreeSet<&str> = doc
        .lines()
        .filter(|l| l.starts_with("| `"))
        .flat_map(|l| ticked(l.split('|').nth(1).unwrap_or_default()))
        .collect();
    for krate in [
        "shape-internals",
        "shape-derive",
        "shape-eval",
        "shape-proxy",
    ] {
        let mut own = BTreeSet::new();
        files(&root.join(krate).join("src"), "", &mut own);
        for file in own {
            let name = file.rsplit('/').next().unwrap();
            if !listed.contains(file.as_str()) && !listed.contains(name) {
                missing.push(format!("{krate}/src/{file}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md does not name these modules (add each where it belongs):\n{}",
        missing.join("\n")
    );
    // The check reads the table it means to: the floors name most of the runtime.
    assert!(named.len() >= 60, "{} runtime files named", named.len());
}
