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
mod open;
mod paging;
mod untrusted;
mod upstream;
mod values;
