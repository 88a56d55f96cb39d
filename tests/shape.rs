//! The integration tests, as one binary (each test binary links separately and costs build
//! time). Each area has its own module under `tests/suite/`.

#[path = "../examples/common/desk.rs"]
mod desk;
#[path = "../examples/common/tracker.rs"]
mod tracker;

#[path = "suite/aggregate.rs"]
mod aggregate;
#[path = "suite/budget.rs"]
mod budget;
#[path = "suite/cursor.rs"]
mod cursor;
#[path = "suite/derive.rs"]
mod derive;
#[path = "suite/handle.rs"]
mod handle;
#[path = "suite/mcp.rs"]
mod mcp;
#[path = "suite/open.rs"]
mod open;
#[path = "suite/paging.rs"]
mod paging;
#[path = "suite/untrusted.rs"]
mod untrusted;
#[path = "suite/values.rs"]
mod values;
