//! The example domain: what the examples, the tests and the benchmarks shape.
//!
//! - [`desk`]: the seed's support desk (a JSON:API page of 12 tickets and a directory).
//! - [`github`]: 60 GitHub REST issues in the API's nested form.
//! - [`github_minimal`]: the same issues with exactly the facts of GitHub's MCP server's
//!   `MinimalIssue`, and what each form of them costs.
//! - [`tracker`]: an issue tracker of 1,412 generated issues.
//! - [`desk_data`]: the support desk's 5,000 tickets, generated without a database.
//! - `desk_db` (feature `sqlite`): the same desk in SQLite.

pub mod desk;
pub mod desk_data;
#[cfg(feature = "sqlite")]
pub mod desk_db;
pub mod github;
pub mod github_minimal;
pub mod tracker;
