//! The example domain: what the examples, the tests and the benchmarks shape.
//!
//! - [`desk`]: the seed's support desk (a JSON:API page of 12 tickets and a directory).
//! - [`github`]: 60 GitHub REST issues in the API's nested form.
//! - [`github_minimal`]: the same issues with exactly the facts of GitHub's MCP server's
//!   `MinimalIssue`, and what each form of them costs.
//! - [`tracker`]: an issue tracker of 1,412 generated issues.
//! - [`desk_data`]: the support desk's 5,000 tickets, generated without a database.
//! - `desk_db` (feature `sqlite`): the same desk in SQLite.
//! - `canned` (feature `rmcp`): a server whose tools answer as written, knowing nothing of
//!   shaping; `read` (feature `rmcp`): what a client's model reads of a tool result.
//! - [`thousands`]: a count as a summary writes it.

#[cfg(feature = "rmcp")]
pub mod canned;
pub mod desk;
pub mod desk_data;
#[cfg(feature = "sqlite")]
pub mod desk_db;
pub mod github;
pub mod github_minimal;
#[cfg(feature = "rmcp")]
pub mod read;
pub mod secrets;
pub mod tracker;

/// The path of the `mcp_support_desk` example beside the running example's binary (the same
/// profile), or the one `env_var` names; an error that says how to build it when it is
/// missing (`features`: what the caller needs it built with).
pub fn support_desk_server(env_var: &str, features: &str) -> Result<String, String> {
    if let Ok(path) = std::env::var(env_var) {
        return Ok(path);
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = exe
        .parent()
        .ok_or("no directory for this example's binary")?;
    let path = dir.join("mcp_support_desk");
    if !path.exists() {
        return Err(format!(
            "{} not found: build it first with `cargo build --example mcp_support_desk \
             --features {features}` (same profile), or set {env_var}",
            path.display()
        ));
    }
    Ok(path.display().to_string())
}

/// `17825792` as `17,825,792`: a count as the library's summaries write it, for checks that
/// read them.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
