//! The integration tests, as one binary (each test binary links separately and costs build
//! time). Each area has its own module here; the example domain they shape (`desk`,
//! `tracker`) is the `shape-examples` crate in `examples/common/`, compiled once.

use shape_examples::{desk, tracker};

mod aggregate;
mod budget;
mod cursor;
mod derive;
mod handle;
mod mcp;
mod nested;
mod open;
mod paging;
mod questions;
mod robustness;
mod session;
mod tokenizers;
mod untrusted;
mod upstream;
mod values;

/// Property-test settings: `cases` runs, times `SHAPE_PROPTEST_SCALE` when it is set (run the
/// properties long with `SHAPE_PROPTEST_SCALE=50`), from the seed in `PROPTEST_RNG_SEED` when
/// it is set (`.ci/run` sets one and prints it, so a failure there can be replayed).
pub fn proptest_config(cases: u32) -> proptest::test_runner::Config {
    let scale = std::env::var("SHAPE_PROPTEST_SCALE")
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
        .filter(|&s| s > 0)
        .unwrap_or(1);
    proptest::test_runner::Config::with_cases(cases.saturating_mul(scale))
}

/// The smallest budget from 1 to 4,000 tokens at which `fits` holds (it must hold at every
/// budget above one where it holds), by bisection.
pub fn smallest_budget(fits: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (1usize, 4_000usize);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if fits(mid) { hi = mid } else { lo = mid + 1 }
    }
    lo
}
