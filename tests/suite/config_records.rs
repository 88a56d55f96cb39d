//! Configured records' start-up errors, the configuration's twin of the derive's UI cases
//! (`shape-derive/tests/ui/`): each case in `tests/config/` (`.toml` or `.json`) must fail
//! to load with exactly the text of the `.err` file beside it, every mistake at once. `SHAPE_BLESS=1` writes the `.err` files from what
//! the loader says (read each before committing it). A `.schema.json` file is a schema a case
//! names, not a case.

use std::path::Path;
use toolshape::config::ShapeConfig;

#[test]
fn every_start_up_error_reads_as_its_case_says() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/config");
    let bless = std::env::var_os("SHAPE_BLESS").is_some();
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("toml" | "json")
            ) && !p.to_string_lossy().ends_with(".schema.json")
        })
        .collect();
    cases.sort();
    assert!(cases.len() >= 18, "{cases:?}");
    let mut wrong = Vec::new();
    for case in &cases {
        let said = match ShapeConfig::from_path(case) {
            Ok(_) => "loaded without an error\n".to_owned(),
            Err(e) => format!("{e}\n"),
        };
        // An absolute path would make the case pass on one checkout only.
        assert!(
            !said.contains(env!("CARGO_MANIFEST_DIR")),
            "{}: the error names the checkout's path: {said}",
            case.display()
        );
        let expected_path = case.with_extension("err");
        if bless {
            std::fs::write(&expected_path, &said).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path)
            .unwrap_or_else(|_| panic!("no {}", expected_path.display()));
        if said != expected {
            wrong.push(format!(
                "{}:\n--- expected\n{expected}--- said\n{said}",
                case.display()
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
