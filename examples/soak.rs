//! A soak run against the MCP example over stdio: a few thousand mixed calls (searches, pages
//! walked to the end, get_ticket, open_result pages and aggregates, tampered cursors, expired
//! handles, malformed arguments), with the server's memory (VmRSS from /proc) read after a
//! warm-up and at the end. Every page walk is checked for lost and duplicated records, and
//! every error is answered by the recovery its summary names (the call repeated without the
//! cursor, a fresh search for an expired handle), which must then succeed. Prints one line.
//!
//! ```sh
//! cargo build --example mcp_support_desk --features mcp
//! cargo run --example soak --features mcp -- 3000     # calls; default 3,000
//! ```
//!
//! The server is started with a handle TTL of 2 seconds (`SHAPE_HANDLE_TTL_SECS`), so handles
//! expire during the run; `SHAPE_SOAK_SERVER` names another server binary. Exits non-zero on
//! the first broken promise (a lost or duplicated record, an error with no way to recover, an
//! answer that is not the envelope).

use serde_json::{Value, json};
// SplitMix64, so a run can be repeated.
use shape_examples::desk_data::{self, Rng};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

// The searches: first words and endings of the seeded tickets' subjects.
use desk_data::{SEARCHED_PROBLEMS as PROBLEMS, SEARCHED_THINGS as THINGS};
const STATUSES: [&str; 5] = ["new", "pending", "open", "resolved", "closed"];
const HANDLE_TTL_SECS: u64 = 2;

type Failure = Box<dyn std::error::Error>;

/// The server over stdio: newline-delimited JSON-RPC.
struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Server {
    fn start(path: &str) -> Result<Server, Failure> {
        let mut child = Command::new(path)
            .env("SHAPE_HANDLE_TTL_SECS", HANDLE_TTL_SECS.to_string())
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {path}: {e}"))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut server = Server {
            child,
            stdin,
            stdout,
            next_id: 0,
        };
        server.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "shape-soak", "version": "0.1.0"},
            }),
        )?;
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(server)
    }

    fn send(&mut self, message: &Value) -> Result<(), Failure> {
        let mut line = serde_json::to_string(message)?;
        line.push('\n');
        self.stdin.write_all(line.as_bytes())?;
        self.stdin.flush()?;
        Ok(())
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value, Failure> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let mut line = String::new();
        loop {
            line.clear();
            if self.stdout.read_line(&mut line)? == 0 {
                return Err("the server closed its stdout".into());
            }
            let message: Value = serde_json::from_str(&line)?;
            if message["id"] == id {
                if let Some(error) = message.get("error") {
                    return Err(format!("{method}: JSON-RPC error {error}").into());
                }
                return Ok(message["result"].clone());
            }
        }
    }

    /// A tool call's structured envelope.
    fn call(&mut self, tool: &str, args: Value) -> Result<Envelope, Failure> {
        let result = self.request("tools/call", json!({"name": tool, "arguments": args}))?;
        let value = result["structuredContent"].clone();
        // The envelope's keys in order: `status, summary, [untrusted,] [fields,] data[,
        // omitted, next]` (as the test suite's `envelope_keys` checks them): `omitted` and
        // `next` both or neither, neither only on a page that is not partial.
        let keys: Vec<&str> = value
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let mut expected = vec!["status", "summary"];
        expected.extend(
            ["untrusted", "fields"]
                .into_iter()
                .filter(|k| value.get(k).is_some()),
        );
        expected.push("data");
        if value.get("omitted").is_some() || value["status"] == "partial" {
            expected.extend(["omitted", "next"]);
        }
        if keys != expected {
            return Err(format!("{tool}: not the envelope: {result}").into());
        }
        if (value["status"] == "error") != (result["isError"] == true) {
            return Err(format!("{tool}: isError disagrees with status: {result}").into());
        }
        Ok(Envelope(value))
    }

    fn rss_kib(&self) -> Result<u64, Failure> {
        desk_data::rss_kib(self.child.id()).ok_or_else(|| "no VmRSS in /proc".into())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Envelope(Value);

impl Envelope {
    fn is_error(&self) -> bool {
        self.0["status"] == "error"
    }
    fn summary(&self) -> &str {
        self.0["summary"].as_str().unwrap_or_default()
    }
    fn next(&self) -> Option<String> {
        self.0["next"].as_str().map(str::to_owned)
    }
    fn handle(&self) -> Option<String> {
        self.0["omitted"]["handle"].as_str().map(str::to_owned)
    }
    fn ids(&self) -> Vec<String> {
        self.0["data"]
            .as_array()
            .map(|d| {
                d.iter()
                    .filter_map(|r| r["id"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }
    fn omitted(&self) -> u64 {
        self.0["omitted"]["count"].as_u64().unwrap_or(0)
    }
}

#[derive(Default)]
struct Counts {
    calls: u64,
    searches: u64,
    pages: u64,
    walks: u64,
    records: u64,
    lost: u64,
    duplicated: u64,
    gets: u64,
    opens: u64,
    aggregates: u64,
    tampered: u64,
    expired: u64,
    malformed: u64,
    errors: u64,
    recovered: u64,
}

/// An error must say what happened and then what to do (call again, use, pass, fix, search
/// for…); the caller then makes that recovery call and checks it succeeds.
fn recoverable(e: &Envelope) -> Result<(), Failure> {
    let s = e.summary();
    let remedy = s.split_once([';', ':']).map_or("", |(_, rest)| rest);
    let says = [
        "call ", "use ", "pass ", "fix ", "search ", "again", "repeat ",
    ];
    if says.iter().any(|w| remedy.contains(w)) {
        Ok(())
    } else {
        Err(format!("an error that does not say how to recover: {s}").into())
    }
}

/// Pages one search to its end; checks every record shows exactly once and the count adds up
/// to the first page's shown + omitted. Returns the handle if the first page stored one.
fn walk(server: &mut Server, args: Value, n: &mut Counts) -> Result<Option<String>, Failure> {
    let first = server.call("search_tickets", args.clone())?;
    n.calls += 1;
    n.searches += 1;
    if first.is_error() {
        return Err(format!("search failed: {}", first.summary()).into());
    }
    let handle = first.handle();
    if handle.is_some() {
        // A stored result's first page: its rest is open_result's to page.
        return Ok(handle);
    }
    if let Some(failed) = follow(server, "search_tickets", &args, first, n, |n| n.pages += 1)? {
        return Err(format!("a page failed: {}", failed.summary()).into());
    }
    Ok(None)
}

/// Pages a stored result through open_result to its end, with the same checks.
fn walk_open(server: &mut Server, handle: &str, n: &mut Counts) -> Result<bool, Failure> {
    let args = json!({"handle": handle, "page_size": 50, "select": ["id", "status"]});
    let first = server.call("open_result", args.clone())?;
    n.calls += 1;
    n.opens += 1;
    if first.is_error() {
        return Ok(false); // expired meanwhile: the caller recovers
    }
    // A page answering with an error: expired meanwhile, the caller recovers.
    Ok(follow(server, "open_result", &args, first, n, |n| n.opens += 1)?.is_none())
}

/// Follows `next` from `first` to the end of a walk, counting each record shown, each shown
/// twice and, at the end, each never shown of the total the first page stated; `count_page`
/// counts each further page. Returns the page that answered with an error, if one did (the
/// walk is then not counted).
fn follow(
    server: &mut Server,
    tool: &str,
    args: &Value,
    first: Envelope,
    n: &mut Counts,
    count_page: fn(&mut Counts),
) -> Result<Option<Envelope>, Failure> {
    let total = first.ids().len() as u64 + first.omitted();
    let mut seen = HashSet::new();
    let mut page = first;
    loop {
        for id in page.ids() {
            n.records += 1;
            if !seen.insert(id) {
                n.duplicated += 1;
            }
        }
        let Some(cursor) = page.next() else { break };
        let mut next_args = args.clone();
        next_args["cursor"] = json!(cursor);
        page = server.call(tool, next_args)?;
        n.calls += 1;
        count_page(n);
        if page.is_error() {
            return Ok(Some(page));
        }
    }
    n.walks += 1;
    n.lost += total.saturating_sub(seen.len() as u64);
    Ok(None)
}

fn main() -> Result<(), Failure> {
    let target: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(3_000);
    let server_path = shape_examples::support_desk_server("SHAPE_SOAK_SERVER", "mcp")?;
    let started = Instant::now();
    let mut server = Server::start(&server_path)?;
    let mut rng = Rng(20_261_201);
    let mut n = Counts::default();

    // Warm-up: one of each kind, so the start figure is the server at work, not at rest.
    let warm = walk(&mut server, json!({"query": "SSO login"}), &mut n)?;
    if let Some(h) = warm {
        walk_open(&mut server, &h, &mut n)?;
    }
    let rss_start = server.rss_kib()?;
    let mut rss_peak = rss_start;
    let mut old_handles: Vec<(String, Instant)> = Vec::new();

    while n.calls < target {
        let roll = rng.next_u64() % 100;
        match roll {
            // A narrow search walked to the end (paged, not stored).
            0..=29 => {
                let args = json!({
                    "query": rng.pick(&THINGS),
                    "status": rng.pick(&STATUSES),
                });
                walk(&mut server, args, &mut n)?;
            }
            // A broad search: stored behind a handle, then reopened and aggregated.
            30..=44 => {
                let args = if rng.next_u64().is_multiple_of(2) {
                    json!({"query": rng.pick(&THINGS)})
                } else {
                    json!({"query": rng.pick(&PROBLEMS)})
                };
                if let Some(h) = walk(&mut server, args, &mut n)? {
                    let agg = server.call(
                        "open_result",
                        json!({"handle": h, "aggregate": {"count_by": "status"}, "page_size": 1}),
                    )?;
                    n.calls += 1;
                    n.aggregates += 1;
                    if agg.is_error() {
                        return Err(format!("aggregate failed: {}", agg.summary()).into());
                    }
                    if rng.next_u64().is_multiple_of(3) {
                        walk_open(&mut server, &h, &mut n)?;
                    }
                    old_handles.push((h, Instant::now()));
                }
            }
            // get_ticket: by an id a search showed, or one that is not an id.
            45..=59 => {
                let page = server.call(
                    "search_tickets",
                    json!({"status": rng.pick(&STATUSES), "query": rng.pick(&PROBLEMS)}),
                )?;
                n.calls += 1;
                n.searches += 1;
                let ids = page.ids();
                let id = if ids.is_empty() || rng.next_u64().is_multiple_of(4) {
                    n.malformed += 1;
                    format!("tkt_{}", "z".repeat((rng.next_u64() % 60) as usize))
                } else {
                    rng.pick(&ids).clone()
                };
                let got = server.call("get_ticket", json!({"id": id}))?;
                n.calls += 1;
                n.gets += 1;
                if got.is_error() {
                    n.errors += 1;
                    recoverable(&got)?;
                    if let Some(real) = ids.first() {
                        let again = server.call("get_ticket", json!({"id": real}))?;
                        n.calls += 1;
                        if again.is_error() {
                            return Err(format!("recovery failed: {}", again.summary()).into());
                        }
                        n.recovered += 1;
                    } else {
                        n.recovered += 1; // nothing to look up: the search itself was the answer
                    }
                } else if got.ids().len() != 1 {
                    return Err(format!("get_ticket {id}: {} records", got.ids().len()).into());
                }
            }
            // A tampered cursor: refused with a remedy; the remedy (no cursor) works.
            60..=74 => {
                let args = json!({"query": rng.pick(&THINGS), "status": rng.pick(&STATUSES)});
                let first = server.call("search_tickets", args.clone())?;
                n.calls += 1;
                n.searches += 1;
                let Some(cursor) = first.next() else { continue };
                let mut bytes = cursor.into_bytes();
                let at = (rng.next_u64() % bytes.len() as u64) as usize;
                bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
                let tampered = String::from_utf8(bytes)?;
                let mut bad = args.clone();
                bad["cursor"] = json!(tampered);
                let refused = server.call("search_tickets", bad)?;
                n.calls += 1;
                n.tampered += 1;
                if !refused.is_error() {
                    return Err(format!("a tampered cursor was accepted: {tampered}").into());
                }
                n.errors += 1;
                recoverable(&refused)?;
                let again = server.call("search_tickets", args)?;
                n.calls += 1;
                if again.is_error() {
                    return Err(format!("recovery failed: {}", again.summary()).into());
                }
                n.recovered += 1;
            }
            // An expired handle: refused with a remedy; a fresh search gives a new one.
            75..=84 => {
                let Some(pos) = old_handles
                    .iter()
                    .position(|(_, at)| at.elapsed() > Duration::from_secs(HANDLE_TTL_SECS + 1))
                else {
                    continue;
                };
                let (handle, _) = old_handles.swap_remove(pos);
                let refused = server.call("open_result", json!({"handle": handle}))?;
                n.calls += 1;
                n.expired += 1;
                if !refused.is_error() || !refused.summary().contains("expired") {
                    return Err(format!("an expired handle answered: {}", refused.summary()).into());
                }
                n.errors += 1;
                recoverable(&refused)?;
                match walk(&mut server, json!({"query": "SSO login"}), &mut n)? {
                    Some(fresh) => {
                        let open =
                            server.call("open_result", json!({"handle": fresh, "page_size": 5}))?;
                        n.calls += 1;
                        n.opens += 1;
                        if open.is_error() {
                            return Err(format!("recovery failed: {}", open.summary()).into());
                        }
                        n.recovered += 1;
                    }
                    None => return Err("a broad search stored no handle".into()),
                }
            }
            // Arguments that do not fit: an error that says what to fix.
            _ => {
                let (tool, args) = match rng.next_u64() % 4 {
                    0 => ("search_tickets", json!({"status": "\u{202e}open\u{200b}"})),
                    1 => ("search_tickets", json!({"query": "x".repeat(5_000)})),
                    2 => (
                        "open_result",
                        json!({"handle": "h_nope", "sort": {"field": "k".repeat(20_000)}}),
                    ),
                    _ => (
                        "search_tickets",
                        json!({"cursor": "not a cursor", "query": "SSO"}),
                    ),
                };
                let refused = server.call(tool, args)?;
                n.calls += 1;
                n.malformed += 1;
                if !refused.is_error() {
                    return Err(format!("{tool} accepted a malformed call").into());
                }
                if refused.summary().contains(['\u{202e}', '\u{200b}']) {
                    return Err(
                        format!("an invisible character echoed: {:?}", refused.summary()).into(),
                    );
                }
                n.errors += 1;
                recoverable(&refused)?;
                let again = server.call(
                    "search_tickets",
                    json!({"query": "CSV import", "status": "open"}),
                )?;
                n.calls += 1;
                if again.is_error() {
                    return Err(format!("recovery failed: {}", again.summary()).into());
                }
                n.recovered += 1;
            }
        }
        if n.calls % 100 < 3 {
            rss_peak = rss_peak.max(server.rss_kib()?);
        }
        // Let some handles age past their TTL now and then.
        if rng.next_u64().is_multiple_of(400) {
            std::thread::sleep(Duration::from_millis(HANDLE_TTL_SECS * 1_000 + 200));
        }
    }
    let rss_end = server.rss_kib()?;
    rss_peak = rss_peak.max(rss_end);
    let mib = |kib: u64| kib as f64 / 1024.0;
    println!(
        "soak: {} calls in {:.1}s ({} searches, {} further pages, {} walks to the end, {} gets, \
         {} open_result, {} aggregates; {} tampered cursors, {} expired handles, {} malformed \
         calls); {} records paged, {} lost, {} duplicated; {} errors, {} recovered; server RSS \
         {:.1} MiB after warm-up, {:.1} MiB at the end (peak {:.1} MiB, store cap 64 MiB)",
        n.calls,
        started.elapsed().as_secs_f64(),
        n.searches,
        n.pages,
        n.walks,
        n.gets,
        n.opens,
        n.aggregates,
        n.tampered,
        n.expired,
        n.malformed,
        n.records,
        n.lost,
        n.duplicated,
        n.errors,
        n.recovered,
        mib(rss_start),
        mib(rss_end),
        mib(rss_peak),
    );
    if n.lost > 0 || n.duplicated > 0 || n.recovered != n.errors {
        return Err("records lost or duplicated, or an error not recovered".into());
    }
    Ok(())
}
