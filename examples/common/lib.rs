//! The example domain: what the examples, the tests and the benchmarks shape.
//!
//! - [`desk`]: the seed's support desk (a JSON:API page of 12 tickets and a directory).
//! - [`github`]: 60 GitHub REST issues in the API's nested form.
//! - [`tracker`]: an issue tracker of 1,412 generated issues.
//! - `desk_db` (feature `sqlite`): the support desk in SQLite, 5,000 tickets.

pub mod desk;
#[cfg(feature = "sqlite")]
pub mod desk_db;
pub mod github;
pub mod tracker;
