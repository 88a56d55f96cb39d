//! Configuration text, as TOML and as JSON: an answer or a clear error, and every shaper a
//! configuration makes answers an error envelope with nothing invisible in it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolshape::config::ShapeConfig;
use toolshape_fuzz::{invisible, well_formed};

fuzz_target!(|text: &str| {
    for parsed in [ShapeConfig::from_toml_str(text), ShapeConfig::from_json_str(text)] {
        match parsed {
            Ok(config) => {
                for tool in config.tools.keys() {
                    let shaper = config.shaper(tool).expect("a checked configuration makes its shapers");
                    assert!(!tool.chars().any(invisible), "{tool:?} accepted");
                    well_formed(&shaper.error("probe", "call again"), 0);
                }
            }
            Err(e) => assert!(!e.to_string().chars().any(invisible), "{e:?}"),
        }
    }
});
