//! Three replicas of the MCP example behind random routing, sharing one Redis, under load and
//! faults.
//!
//! Starts a `redis-server` of its own on a free loopback port (it stops and restarts it, and
//! shrinks its memory, during the run) and three replicas of `examples/mcp_support_desk.rs`,
//! each serving MCP's streamable HTTP transport statelessly (`--http`) with its stored results
//! and cursor positions in that Redis (`--redis`) and the same cursor key. Then many
//! concurrent sessions (64 unless told) call tools, each call sent to a random replica: narrow
//! searches walked to their end, broad searches whose handle is opened on every replica, paged
//! and aggregated, `get_ticket` by an id a page showed, tampered cursors, old handles and
//! malformed arguments. The clients are rmcp's, over HTTP, in the 2026-07-28 lifecycle
//! (`server/discover`, then each request names its client in `_meta`): the sessions are
//! `claude-code` (the structured profile); a probe client named `langchain-mcp-adapters`
//! checks that the text profile follows the request's `_meta` on a server that keeps no
//! session.
//!
//! Checked from what the clients read, against a reference computed here from the seeded
//! database by plain filtering (not by the library): every walk shows each matching ticket
//! exactly once and nothing else; every stated total is the true one; an aggregate's counts
//! are the true counts; a handle opens on every replica and shows only its own result's
//! tickets; no answer's text is over the budget (o200k); every error is the envelope, says
//! what to do, and what it says works.
//!
//! The run, by share of the calls: the first fifth goes to replica 0 alone (the one-replica
//! figures), the next sixth to all three (the three-replica figures), the rest with faults:
//! replica 2 is killed (SIGKILL) and later started again, Redis is stopped and started again
//! (its contents are gone: nothing is persisted), and Redis is given a small `maxmemory` with
//! `allkeys-lru` so stored results and positions are evicted under load.
//!
//! ```sh
//! cargo build --release --example mcp_support_desk --features http
//! cargo run --release --example load --features http -- 20000   # calls; default 20,000
//! ```
//!
//! `--sessions N` sets the concurrent sessions (default 64); `--no-faults` skips the faults.
//! `redis-server` is found on `PATH` or as `SHAPE_REDIS_SERVER_BIN`; `SHAPE_LOAD_SERVER`
//! names another server binary. Exits non-zero on any lost, duplicated or wrong answer, an
//! answer over budget, or an error whose remedy did not work. The last line:
//! `load: calls=<n> … lost=0 duplicated=0 wrong=0 over_budget=0 unrecoverable=0`.

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    ProtocolVersion,
};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::{Map, Value, json};
use shape_examples::desk::STATUS;
use shape_examples::desk_data::{self, Rng};
use shape_examples::desk_db::{DeskDb, TicketFilter};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use toolshape::tokens::{Bpe, Tokenizer};

type Client = RunningService<RoleClient, ClientConfig>;
type Error = Box<dyn std::error::Error + Send + Sync>;

const REPLICAS: usize = 3;
/// The server's budget for every answer (`mcp_support_desk`'s `BUDGET` and `OPEN_BUDGET`).
const BUDGET: usize = 1_500;
/// The cursor key every replica shares (it signs cursors and keys the owner tags).
const CURSOR_KEY: &str = "load-example-shared-cursor-key-2026";
/// The two principals the sessions call as (half each), and their bearer tokens: each one's
/// handles and cursors must open for it alone.
const PRINCIPALS: [(&str, &str); 2] = [
    ("alice", "load-alice-bearer-token-7f3a9c21"),
    ("bob", "load-bob-bearer-token-0d94e6b8"),
];
/// The longest a call may take before it counts as lost in transport (and is sent elsewhere).
const CALL_TIMEOUT: Duration = Duration::from_secs(20);
/// How long a session keeps following a remedy ("try again shortly") before giving up.
const RECOVERY_WINDOW: Duration = Duration::from_secs(60);
/// Redis's memory during the eviction fault.
const SMALL_MAXMEMORY: &str = "3mb";

// The searches: first words and endings of the seeded tickets' subjects.
use desk_data::{SEARCHED_PROBLEMS as PROBLEMS, SEARCHED_THINGS as THINGS};

// ---------------------------------------------------------------------------------------------
// The reference: the seeded tickets, filtered plainly.

struct Reference {
    /// Full id → (subject in lowercase, status word).
    tickets: BTreeMap<String, (String, &'static str)>,
}

impl Reference {
    fn load() -> Result<Reference, Error> {
        let db = DeskDb::seeded().map_err(|e| e.0)?;
        let all = db
            .tickets(&TicketFilter::default(), None, 100_000)
            .map_err(|e| e.0)?;
        let mut tickets = BTreeMap::new();
        for t in all {
            let status = STATUS
                .entries()
                .iter()
                .find(|(code, _)| *code == t.status_code)
                .map(|(_, w)| *w)
                .ok_or("a ticket with a status outside the legend")?;
            tickets.insert(t.id, (t.subject.to_ascii_lowercase(), status));
        }
        Ok(Reference { tickets })
    }

    /// The full ids matching a search's arguments.
    fn matching(&self, args: &Value) -> BTreeSet<String> {
        let query = args["query"].as_str().map(str::to_ascii_lowercase);
        let status = args["status"].as_str();
        self.tickets
            .iter()
            .filter(|(_, (subject, s))| {
                query.as_deref().is_none_or(|q| subject.contains(q))
                    && status.is_none_or(|want| want == *s)
            })
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// The one full id an id as shown names (a prefix of exactly one ticket's id).
    fn resolve(&self, shown: &str) -> Option<&str> {
        let mut from = self.tickets.range(shown.to_owned()..);
        let (first, _) = from.next()?;
        if !first.starts_with(shown) {
            return None;
        }
        match from.next() {
            Some((second, _)) if second.starts_with(shown) => None,
            _ => Some(first),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Processes: Redis and the replicas.

fn free_port() -> Result<u16, Error> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

fn wait_for_port(port: u16, child: &mut Child, what: &str) -> Result<(), Error> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait()? {
            return Err(format!("{what} exited at start ({status})").into());
        }
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(format!("{what} did not listen on 127.0.0.1:{port} within 60 s").into())
}

struct Redis {
    bin: String,
    port: u16,
    dir: std::path::PathBuf,
    child: Option<Child>,
}

impl Redis {
    fn start() -> Result<Redis, Error> {
        let bin = std::env::var("SHAPE_REDIS_SERVER_BIN").unwrap_or_else(|_| "redis-server".into());
        let dir = std::env::temp_dir().join(format!("shape-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let mut redis = Redis {
            bin,
            port: free_port()?,
            dir,
            child: None,
        };
        redis.up()?;
        Ok(redis)
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Starts the server (empty: nothing is persisted).
    fn up(&mut self) -> Result<(), Error> {
        let mut child = Command::new(&self.bin)
            .args(["--port", &self.port.to_string()])
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                format!(
                    "cannot start {} ({e}): install redis-server or set SHAPE_REDIS_SERVER_BIN",
                    self.bin
                )
            })?;
        wait_for_port(self.port, &mut child, "redis-server")?;
        self.child = Some(child);
        Ok(())
    }

    fn down(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn command(&self, args: &[&str]) -> Result<redis::Value, Error> {
        let client = redis::Client::open(self.url())?;
        let mut conn = client.get_connection_with_timeout(Duration::from_secs(2))?;
        let mut cmd = redis::cmd(args[0]);
        for a in &args[1..] {
            cmd.arg(*a);
        }
        Ok(cmd.query(&mut conn)?)
    }

    /// `INFO` fields, by name.
    fn info(&self) -> HashMap<String, String> {
        let text: String = self
            .command(&["INFO"])
            .ok()
            .and_then(|v| redis::from_redis_value(v).ok())
            .unwrap_or_default();
        text.lines()
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.to_owned(), v.trim().to_owned()))
            .collect()
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.down();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

struct Replica {
    port: u16,
    child: Option<Child>,
    rss_start_kib: u64,
}

fn start_replica(server: &str, port: u16, redis_url: &str) -> Result<Child, Error> {
    let mut child = Command::new(server)
        .args(["--http", &format!("127.0.0.1:{port}"), "--redis", redis_url])
        .env("SHAPE_CURSOR_KEY", CURSOR_KEY)
        .env(
            "SHAPE_TOKENS",
            PRINCIPALS
                .iter()
                .map(|(p, t)| format!("{p}={t}"))
                .collect::<Vec<_>>()
                .join(","),
        )
        .env("RUST_LOG", "error")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {server}: {e}"))?;
    wait_for_port(port, &mut child, "a replica")?;
    Ok(child)
}

// ---------------------------------------------------------------------------------------------
// Shared state: the run's phase, the replicas' state, the tallies.

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Phase {
    /// Every call to replica 0.
    One,
    /// Random routing over three, no fault yet.
    Three,
    /// Random routing, faults injected.
    Faults,
}

impl Phase {
    const ALL: [Phase; 3] = [Phase::One, Phase::Three, Phase::Faults];
    fn name(self) -> &'static str {
        match self {
            Phase::One => "1 replica",
            Phase::Three => "3 replicas",
            Phase::Faults => "3 replicas, faults",
        }
    }
}

#[derive(Default)]
struct Tally {
    lost: u64,
    duplicated: u64,
    wrong: u64,
    over_budget: u64,
    unrecoverable: u64,
    walks: u64,
    walk_restarts: u64,
    records: u64,
    handles: u64,
    handles_everywhere: u64,
    aggregates: u64,
    gets: u64,
    tampered: u64,
    malformed: u64,
    stale_opened: u64,
    text_probes: u64,
    unavailable: u64,
    gone: u64,
    refused: u64,
    recovered: u64,
    rerouted: u64,
    after_kill: u64,
    /// Another principal's handle or cursor tried, and how many of them opened (must be 0).
    foreign_tried: u64,
    foreign_opened: u64,
    failures: Vec<String>,
}

impl Tally {
    fn fail(&mut self, what: String) {
        if self.failures.len() < 20 {
            self.failures.push(what);
        }
    }
}

struct Shared {
    reference: Reference,
    target: u64,
    calls: AtomicU64,
    phase: Mutex<Phase>,
    /// Each replica's port, whether it is up, and how many times it was started.
    ports: [u16; REPLICAS],
    up: [AtomicBool; REPLICAS],
    generation: [AtomicUsize; REPLICAS],
    /// Replica 2 was killed: cursors and handles it issued before are counted when they open
    /// elsewhere.
    killed_at: Mutex<Option<Instant>>,
    /// Latencies in µs, by phase and kind of call.
    latencies: Mutex<HashMap<(Phase, &'static str), Vec<u32>>>,
    tally: Mutex<Tally>,
    o200k: Bpe,
    stop: AtomicBool,
    /// The latest handles and cursors each principal was given (with their search's
    /// arguments), for the other to try.
    issued: Mutex<[Vec<Issued>; 2]>,
}

/// What a principal was given: a handle, or a cursor with the arguments it continues.
#[derive(Clone)]
enum Issued {
    Handle(String),
    Cursor(Value, String),
}

impl Shared {
    fn phase(&self) -> Phase {
        *self.phase.lock().unwrap_or_else(|e| e.into_inner())
    }
    fn tally(&self) -> std::sync::MutexGuard<'_, Tally> {
        self.tally.lock().unwrap_or_else(|e| e.into_inner())
    }
    fn fail(&self, what: String) {
        self.tally().fail(what);
    }
}

async fn connect(port: u16, name: &str, principal: usize) -> Result<Client, Error> {
    let config =
        StreamableHttpClientTransportConfig::with_uri(format!("http://127.0.0.1:{port}/mcp"))
            .auth_header(PRINCIPALS[principal].1.to_owned());
    let transport = StreamableHttpClientTransport::from_config(config);
    let client = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new(name, "1.0"),
    )
    .serve_with_lifecycle(
        transport,
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    )
    .await?;
    Ok(client)
}

// ---------------------------------------------------------------------------------------------
// What a client reads.

struct Answer {
    envelope: Value,
    replica: usize,
}

impl Answer {
    fn is_error(&self) -> bool {
        self.envelope["status"] == "error"
    }
    fn summary(&self) -> &str {
        self.envelope["summary"].as_str().unwrap_or_default()
    }
    fn next(&self) -> Option<String> {
        self.envelope["next"].as_str().map(str::to_owned)
    }
    fn handle(&self) -> Option<String> {
        self.envelope["omitted"]["handle"]
            .as_str()
            .map(str::to_owned)
    }
    fn omitted(&self) -> u64 {
        self.envelope["omitted"]["count"].as_u64().unwrap_or(0)
    }
    /// The records, each as field → value, in the rows form (`fields` then arrays) or as
    /// objects.
    fn records(&self) -> Vec<Map<String, Value>> {
        let data = self.envelope["data"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        match self.envelope["fields"].as_array() {
            Some(fields) => data
                .iter()
                .map(|row| {
                    fields
                        .iter()
                        .filter_map(Value::as_str)
                        .zip(row.as_array().into_iter().flatten())
                        .map(|(f, v)| (f.to_owned(), v.clone()))
                        .collect()
                })
                .collect(),
            None => data
                .into_iter()
                .filter_map(|r| r.as_object().cloned())
                .collect(),
        }
    }
}

/// How an error reads: what happened, by what it says.
#[derive(Debug, PartialEq, Eq)]
enum Class {
    /// The store is unavailable: try again shortly.
    Unavailable,
    /// A stored result or position is gone (expired, evicted, not held, not found): start again.
    Gone,
    /// The arguments or the cursor were refused: fix them or start again.
    Refused,
}

fn classify(summary: &str) -> Option<Class> {
    let s = summary.to_ascii_lowercase();
    let remedy = [
        "call ", "again", "use ", "pass ", "fix ", "search ", "repeat ",
    ];
    if !remedy.iter().any(|w| s.contains(w)) {
        return None;
    }
    if s.contains("unavailable") {
        Some(Class::Unavailable)
    } else if s.contains("expired")
        || s.contains("no longer held")
        || s.contains("removed to make room")
        || s.contains("evicted")
        || s.contains("no stored result")
    {
        Some(Class::Gone)
    } else {
        Some(Class::Refused)
    }
}

// ---------------------------------------------------------------------------------------------
// A session: its clients (one per replica, made when first needed) and what it holds.

struct Session {
    shared: Arc<Shared>,
    /// Which of [`PRINCIPALS`] it calls as.
    principal: usize,
    rng: Rng,
    clients: Vec<Option<(Client, usize)>>,
    /// When this session last failed to reach each replica.
    down_since: [Option<Instant>; REPLICAS],
    /// Handles it was given, with the arguments of their search and which replica issued them.
    handles: Vec<(String, Value, usize)>,
    gone_log: Vec<String>,
}

impl Session {
    fn new(shared: Arc<Shared>, seed: u64, principal: usize) -> Session {
        Session {
            shared,
            principal,
            rng: Rng(seed),
            clients: (0..REPLICAS).map(|_| None).collect(),
            down_since: [None; REPLICAS],
            handles: Vec::new(),
            gone_log: Vec::new(),
        }
    }

    fn pick(&mut self) -> usize {
        if self.shared.phase() == Phase::One {
            return 0;
        }
        let usable: Vec<usize> = (0..REPLICAS)
            .filter(|&r| {
                self.down_since[r].is_none_or(|t| t.elapsed() > Duration::from_millis(500))
            })
            .collect();
        if usable.is_empty() {
            return self.rng.below(REPLICAS as u64) as usize;
        }
        *self.rng.pick(&usable)
    }

    async fn client(&mut self, r: usize) -> Result<&Client, Error> {
        let generation = self.shared.generation[r].load(Ordering::SeqCst);
        let stale = match &self.clients[r] {
            Some((_, g)) => *g != generation,
            None => true,
        };
        if stale {
            self.clients[r] = None;
            let client = connect(self.shared.ports[r], "claude-code", self.principal).await?;
            self.clients[r] = Some((client, generation));
        }
        Ok(&self.clients[r].as_ref().ok_or("no client")?.0)
    }

    /// One call, sent to `to` or a random replica; a replica that cannot be reached (killed,
    /// not started yet) is left for half a second and the call is sent to another, as a load
    /// balancer's health check would. Checks what every answer must be.
    async fn call_on(
        &mut self,
        to: Option<usize>,
        tool: &str,
        args: &Value,
        kind: &'static str,
    ) -> Result<Answer, Error> {
        let started = Instant::now();
        loop {
            if started.elapsed() > RECOVERY_WINDOW {
                return Err(format!("{tool}: no replica answered for 60 s").into());
            }
            let r = to.unwrap_or_else(|| self.pick());
            let mut params = CallToolRequestParams::new(tool.to_owned());
            if let Value::Object(map) = args {
                params = params.with_arguments(map.clone());
            }
            let sent = Instant::now();
            let result = match self.client(r).await {
                Ok(client) => tokio::time::timeout(CALL_TIMEOUT, client.call_tool(params))
                    .await
                    .map_err(|_| Error::from("timed out"))
                    .and_then(|r| r.map_err(Error::from)),
                Err(e) => Err(e),
            };
            let result = match result {
                Ok(result) => result,
                Err(e) => {
                    // Not reached: leave it, go to another (or wait for it, when it is the
                    // one asked for).
                    self.clients[r] = None;
                    self.down_since[r] = Some(Instant::now());
                    self.shared.tally().rerouted += 1;
                    if to.is_some() {
                        if !self.shared.up[r].load(Ordering::SeqCst) {
                            return Err(format!("replica {r} is down").into());
                        }
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                    let _ = e;
                    continue;
                }
            };
            self.down_since[r] = None;
            let micros = u32::try_from(sent.elapsed().as_micros()).unwrap_or(u32::MAX);
            let phase = self.shared.phase();
            self.shared.calls.fetch_add(1, Ordering::SeqCst);
            self.shared
                .latencies
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .entry((phase, kind))
                .or_default()
                .push(micros);
            return self.read(r, tool, &result);
        }
    }

    /// What every answer must be: the envelope in `structuredContent` (the structured
    /// profile), `isError` as its status says, its text within the budget.
    fn read(&self, r: usize, tool: &str, result: &CallToolResult) -> Result<Answer, Error> {
        let text: String = result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect();
        let Some(envelope) = result.structured_content.clone() else {
            return Err(format!("{tool}: no structuredContent for claude-code: {text}").into());
        };
        let tokens = self.shared.o200k.count(&text);
        if tokens > BUDGET {
            let mut t = self.shared.tally();
            t.over_budget += 1;
            t.fail(format!("{tool}: {tokens} tokens over {BUDGET}"));
        }
        // `omitted` and `next` both or neither: neither only on a complete page (nothing
        // left out, no cursor), which is never partial.
        let cut = envelope.get("omitted").is_some() || envelope["status"] == "partial";
        let keys: &[&str] = if cut {
            &["status", "summary", "data", "omitted", "next"]
        } else {
            &["status", "summary", "data"]
        };
        for key in keys {
            if envelope.get(*key).is_none() {
                return Err(format!("{tool}: not the envelope (no {key}): {envelope}").into());
            }
        }
        if !cut && envelope.get("next").is_some() {
            return Err(format!("{tool}: a next without omitted: {envelope}").into());
        }
        if (envelope["status"] == "error") != (result.is_error == Some(true)) {
            return Err(format!("{tool}: isError disagrees with the status: {envelope}").into());
        }
        Ok(Answer {
            envelope,
            replica: r,
        })
    }

    /// A call whose "unavailable" errors are followed as they say (try again shortly) until
    /// it answers otherwise; an unavailable store that does not come back within a minute is
    /// unrecoverable.
    async fn call_through(
        &mut self,
        to: Option<usize>,
        tool: &str,
        args: &Value,
        kind: &'static str,
    ) -> Result<Option<Answer>, Error> {
        let started = Instant::now();
        let mut waited = false;
        loop {
            let answer = self.call_on(to, tool, args, kind).await?;
            if answer.is_error() && classify(answer.summary()) == Some(Class::Unavailable) {
                self.shared.tally().unavailable += 1;
                if started.elapsed() > RECOVERY_WINDOW {
                    let mut t = self.shared.tally();
                    t.unrecoverable += 1;
                    t.fail(format!(
                        "{tool}: still unavailable after 60 s: {}",
                        answer.summary()
                    ));
                    return Ok(None);
                }
                waited = true;
                tokio::time::sleep(Duration::from_millis(250)).await;
                continue;
            }
            if waited {
                self.shared.tally().recovered += 1;
            }
            return Ok(Some(answer));
        }
    }

    /// Counts a page's records against the reference: each must be one of `expected` and
    /// shown once; `status` (when asked) must be the record's. Returns the full ids.
    fn check_page(
        &self,
        what: &str,
        answer: &Answer,
        expected: &BTreeSet<String>,
        seen: &mut BTreeSet<String>,
        status: Option<&str>,
    ) {
        let mut t = self.shared.tally();
        for record in answer.records() {
            t.records += 1;
            let shown = record.get("id").and_then(Value::as_str).unwrap_or_default();
            let Some(full) = self.shared.reference.resolve(shown) else {
                t.wrong += 1;
                t.fail(format!("{what}: an id that names no one ticket: {shown:?}"));
                continue;
            };
            if !expected.contains(full) {
                t.wrong += 1;
                t.fail(format!("{what}: {shown} is not in this result"));
                continue;
            }
            if let (Some(want), Some(got)) = (status, record.get("status").and_then(Value::as_str))
                && want != got
            {
                t.wrong += 1;
                t.fail(format!("{what}: {shown} shown as {got}, asked {want}"));
            }
            let (_, true_status) = &self.shared.reference.tickets[full];
            if let Some(got) = record.get("status").and_then(Value::as_str)
                && got != *true_status
            {
                t.wrong += 1;
                t.fail(format!("{what}: {shown} shown as {got}, is {true_status}"));
            }
            if !seen.insert(full.to_owned()) {
                t.duplicated += 1;
                t.fail(format!("{what}: {shown} shown twice"));
            }
        }
    }

    /// Pages from `first` to the end of a walk with `args` (plus `cursor`), checking every
    /// page. `Ok(true)` when the walk reached its end; `Ok(false)` when a page said its
    /// position is gone (the caller starts again, as it says).
    async fn follow(
        &mut self,
        tool: &str,
        args: &Value,
        first: Answer,
        expected: &BTreeSet<String>,
        kind: &'static str,
    ) -> Result<bool, Error> {
        let stated = first.records().len() as u64 + first.omitted();
        if stated != expected.len() as u64 {
            let mut t = self.shared.tally();
            t.wrong += 1;
            t.fail(format!(
                "{tool} {args}: says {stated} in all, there are {}",
                expected.len()
            ));
        }
        let status = args["status"].as_str().map(str::to_owned);
        let mut seen = BTreeSet::new();
        let mut page = first;
        loop {
            self.check_page(tool, &page, expected, &mut seen, status.as_deref());
            let Some(cursor) = page.next() else { break };
            let issuer = page.replica;
            let mut next_args = args.clone();
            next_args["cursor"] = json!(cursor);
            let Some(next) = self.call_through(None, tool, &next_args, kind).await? else {
                return Ok(false);
            };
            if next.is_error() {
                match classify(next.summary()) {
                    Some(Class::Gone) => {
                        self.gone(tool, next.summary());
                        self.gone_log.push(format!(
                            "{:?} page {} on {} (cursor from {}): {}",
                            self.shared.phase(),
                            seen.len(),
                            next.replica,
                            issuer,
                            next.summary()
                        ));
                        return Ok(false);
                    }
                    _ => {
                        let mut t = self.shared.tally();
                        t.unrecoverable += 1;
                        t.fail(format!("{tool}: a page failed: {}", next.summary()));
                        return Ok(true);
                    }
                }
            }
            self.count_after_kill(issuer, next.replica);
            page = next;
        }
        let lost = expected.len().saturating_sub(seen.len()) as u64;
        let mut t = self.shared.tally();
        t.walks += 1;
        if lost > 0 {
            t.lost += lost;
            t.fail(format!("{tool} {args}: {lost} never shown"));
        }
        Ok(true)
    }

    /// A stored result or position said to be gone: true only once a fault could have made
    /// it so (before, nothing expires, nothing is evicted, nothing restarts).
    fn gone(&self, tool: &str, summary: &str) {
        let phase = self.shared.phase();
        let mut t = self.shared.tally();
        t.gone += 1;
        if phase != Phase::Faults {
            t.wrong += 1;
            t.fail(format!(
                "{tool} in phase {}, before any fault: {summary}",
                phase.name()
            ));
        }
    }

    /// A cursor or handle issued by replica 2 before it was killed, opened on another after.
    fn count_after_kill(&self, issuer: usize, answered_by: usize) {
        if issuer == REPLICAS - 1
            && answered_by != issuer
            && self
                .shared
                .killed_at
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_some()
        {
            self.shared.tally().after_kill += 1;
        }
    }

    /// A search walked to its end; started again (as the error says) when a position is
    /// gone. Returns the handle, with the replica that issued it, if the search stored one.
    async fn walk(&mut self, args: Value) -> Result<Option<(String, usize)>, Error> {
        let expected = self.shared.reference.matching(&args);
        let started = Instant::now();
        let mut attempt = 0;
        // Started again as told while the fault lasts (a minute at most).
        while started.elapsed() < RECOVERY_WINDOW {
            if attempt > 0 {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            attempt += 1;
            let Some(first) = self
                .call_through(None, "search_tickets", &args, "search")
                .await?
            else {
                return Ok(None);
            };
            if first.is_error() {
                let mut t = self.shared.tally();
                t.unrecoverable += 1;
                t.fail(format!("search {args} failed: {}", first.summary()));
                return Ok(None);
            }
            if let Some(handle) = first.handle() {
                // Its rest is open_result's to page; its first page is checked as a page.
                let stated = first.records().len() as u64 + first.omitted();
                let mut seen = BTreeSet::new();
                self.check_page("search", &first, &expected, &mut seen, None);
                if stated != expected.len() as u64 {
                    let mut t = self.shared.tally();
                    t.wrong += 1;
                    t.fail(format!(
                        "search {args}: says {stated}, there are {}",
                        expected.len()
                    ));
                }
                return Ok(Some((handle, first.replica)));
            }
            if self
                .follow("search_tickets", &args, first, &expected, "page")
                .await?
            {
                if attempt > 1 {
                    self.shared.tally().recovered += 1;
                }
                return Ok(None);
            }
            self.shared.tally().walk_restarts += 1;
        }
        let mut t = self.shared.tally();
        t.unrecoverable += 1;
        t.fail(format!(
            "search {args}: {attempt} walks in a minute lost their position: {:?}",
            &self.gone_log[self.gone_log.len().saturating_sub(5)..]
        ));
        Ok(None)
    }

    /// A broad search's handle: opened on every replica, aggregated, and (now and then) paged
    /// to its end.
    async fn use_handle(&mut self, handle: &str, args: &Value, issuer: usize) -> Result<(), Error> {
        let expected = self.shared.reference.matching(args);
        self.shared.tally().handles += 1;
        // On every replica that is up.
        let mut everywhere = true;
        // (With one replica serving, only on it: the one-replica figures are its alone.)
        let replicas = if self.shared.phase() == Phase::One {
            1
        } else {
            REPLICAS
        };
        for r in 0..replicas {
            if !self.shared.up[r].load(Ordering::SeqCst) {
                everywhere = false;
                continue;
            }
            let open = json!({"handle": handle, "page_size": 1, "select": ["id", "status"]});
            let answer = match self
                .call_through(Some(r), "open_result", &open, "open")
                .await
            {
                Ok(Some(a)) => a,
                Ok(None) | Err(_) => {
                    everywhere = false;
                    continue;
                }
            };
            if answer.is_error() {
                self.gone_handle(&answer, args).await?;
                return Ok(());
            }
            self.count_after_kill(issuer, r);
            let mut seen = BTreeSet::new();
            self.check_page("open_result", &answer, &expected, &mut seen, None);
        }
        if everywhere && replicas == REPLICAS {
            self.shared.tally().handles_everywhere += 1;
        }
        // Aggregated: the counts by status are the true ones.
        let agg = json!({"handle": handle, "aggregate": {"count_by": "status"}, "page_size": 1});
        if let Some(answer) = self
            .call_through(None, "open_result", &agg, "aggregate")
            .await?
        {
            if answer.is_error() {
                return self.gone_handle(&answer, args).await;
            }
            self.check_aggregate(&answer, &expected);
        }
        if self.rng.below(3) == 0 {
            let open = json!({"handle": handle, "page_size": 50, "select": ["id", "status"]});
            if let Some(first) = self
                .call_through(None, "open_result", &open, "open")
                .await?
            {
                if first.is_error() {
                    return self.gone_handle(&first, args).await;
                }
                if !self
                    .follow("open_result", &open, first, &expected, "open")
                    .await?
                {
                    // Gone meanwhile: a fresh search, as the error says.
                    self.walk(args.clone()).await?;
                }
            }
        }
        Ok(())
    }

    fn check_aggregate(&self, answer: &Answer, expected: &BTreeSet<String>) {
        let mut truth: BTreeMap<&str, u64> = BTreeMap::new();
        for id in expected {
            *truth
                .entry(self.shared.reference.tickets[id].1)
                .or_default() += 1;
        }
        let counts = find_counts(answer.summary());
        let mut t = self.shared.tally();
        t.aggregates += 1;
        match counts {
            Some(counts)
                if counts == truth.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect() => {}
            Some(counts) => {
                t.wrong += 1;
                t.fail(format!("aggregate {counts:?}, true {truth:?}"));
            }
            None => {
                t.wrong += 1;
                t.fail(format!("no counts by status in {:?}", answer.summary()));
            }
        }
    }

    /// A handle that answered with an error: it must say it is gone (expired, evicted, not
    /// found) and to search again; the fresh search is made and its handle opened.
    async fn gone_handle(&mut self, answer: &Answer, args: &Value) -> Result<(), Error> {
        if classify(answer.summary()) != Some(Class::Gone) {
            let mut t = self.shared.tally();
            t.unrecoverable += 1;
            t.fail(format!("open_result: {}", answer.summary()));
            return Ok(());
        }
        self.gone("open_result", answer.summary());
        // The remedy: call search_tickets again for a fresh handle, as long as the fault that
        // took the last one lasts (a minute at most).
        let started = Instant::now();
        let mut tries = 0;
        while started.elapsed() < RECOVERY_WINDOW {
            if tries > 0 {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            tries += 1;
            match self.walk(args.clone()).await? {
                Some((fresh, _)) => {
                    let open = json!({"handle": fresh, "page_size": 5});
                    match self
                        .call_through(None, "open_result", &open, "open")
                        .await?
                    {
                        Some(a) if !a.is_error() => {
                            self.shared.tally().recovered += 1;
                            return Ok(());
                        }
                        Some(a) if classify(a.summary()) != Some(Class::Gone) => {
                            let mut t = self.shared.tally();
                            t.unrecoverable += 1;
                            t.fail(format!("a fresh handle: {}", a.summary()));
                            return Ok(());
                        }
                        Some(a) => self.gone("open_result", a.summary()),
                        None => {}
                    }
                }
                None => {
                    // Stored nowhere (the store refused it): the walk was the answer.
                    self.shared.tally().recovered += 1;
                    return Ok(());
                }
            }
        }
        let mut t = self.shared.tally();
        t.unrecoverable += 1;
        t.fail(format!(
            "a fresh handle for {args} did not open in a minute ({tries} tries)"
        ));
        Ok(())
    }

    /// A tampered cursor: refused, saying to start again; starting again works.
    async fn tamper(&mut self, args: Value) -> Result<(), Error> {
        let Some(first) = self
            .call_through(None, "search_tickets", &args, "search")
            .await?
        else {
            return Ok(());
        };
        let Some(cursor) = first.next() else {
            return Ok(());
        };
        self.issue(Issued::Cursor(args.clone(), cursor.clone()));
        let mut bytes = cursor.into_bytes();
        let at = 1 + self.rng.below(bytes.len() as u64 - 1) as usize;
        bytes[at] = if bytes[at] == b'7' { b'3' } else { b'7' };
        let tampered = String::from_utf8(bytes)?;
        let mut bad = args.clone();
        bad["cursor"] = json!(tampered);
        let Some(refused) = self
            .call_through(None, "search_tickets", &bad, "refused")
            .await?
        else {
            return Ok(());
        };
        self.shared.tally().tampered += 1;
        if !refused.is_error() {
            let mut t = self.shared.tally();
            t.wrong += 1;
            t.fail(format!("a tampered cursor was accepted: {tampered}"));
            return Ok(());
        }
        match classify(refused.summary()) {
            Some(Class::Refused | Class::Gone) => {}
            _ => {
                let mut t = self.shared.tally();
                t.unrecoverable += 1;
                t.fail(format!("tampered cursor: {}", refused.summary()));
                return Ok(());
            }
        }
        self.shared.tally().refused += 1;
        self.follow_remedy(&args, "starting again").await
    }

    /// Keeps what this session's principal was given, for the other principal to try.
    fn issue(&self, issued: Issued) {
        let mut all = self.shared.issued.lock().unwrap_or_else(|e| e.into_inner());
        let mine = &mut all[self.principal];
        mine.push(issued);
        if mine.len() > 16 {
            mine.remove(0);
        }
    }

    /// The other principal's latest handle or cursor, tried as this one: it must not open,
    /// and must read exactly as one that never existed (a handle never issued; a cursor
    /// altered in its last digit), so nothing tells "someone else's" from "none".
    async fn foreign(&mut self) -> Result<(), Error> {
        let theirs = {
            let all = self.shared.issued.lock().unwrap_or_else(|e| e.into_inner());
            let theirs = &all[1 - self.principal];
            if theirs.is_empty() {
                return Ok(());
            }
            theirs[self.rng.below(theirs.len() as u64) as usize].clone()
        };
        // Another digit in each place (a handle), or a smaller last digit (a cursor: its
        // last bytes are the signature, and a smaller digit stays a number of that width).
        let (tool, taken, never, secret, made_up) = match theirs {
            Issued::Handle(handle) => {
                let made_up: String = handle
                    .chars()
                    .map(|c| match c.to_digit(10) {
                        Some(d) => char::from_digit((d + 1) % 10, 10).unwrap_or(c),
                        None => c,
                    })
                    .collect();
                (
                    "open_result",
                    json!({"handle": handle, "page_size": 1}),
                    json!({"handle": made_up, "page_size": 1}),
                    handle,
                    made_up,
                )
            }
            Issued::Cursor(args, cursor) => {
                let mut made_up = cursor.clone().into_bytes();
                if let Some(last) = made_up.last_mut() {
                    *last = if *last > b'0' { *last - 1 } else { *last + 1 };
                }
                let made_up = String::from_utf8(made_up)?;
                let mut taken = args.clone();
                taken["cursor"] = json!(cursor);
                let mut never = args;
                never["cursor"] = json!(made_up);
                ("search_tickets", taken, never, cursor, made_up)
            }
        };
        let Some(answer) = self.call_through(None, tool, &taken, "refused").await? else {
            return Ok(());
        };
        {
            let mut t = self.shared.tally();
            t.foreign_tried += 1;
            if !answer.is_error() {
                t.foreign_opened += 1;
                t.fail(format!(
                    "{} opened the other principal's {tool} {secret}",
                    PRINCIPALS[self.principal].0
                ));
                return Ok(());
            }
        }
        // The same words as for one that never existed (unless the store was unavailable
        // for one of the two calls: that answer is about the store, not the handle).
        let Some(none) = self.call_through(None, tool, &never, "refused").await? else {
            return Ok(());
        };
        let unavailable = |a: &Answer| classify(a.summary()) == Some(Class::Unavailable);
        if !unavailable(&answer)
            && !unavailable(&none)
            && answer.summary().replace(&secret, "…") != none.summary().replace(&made_up, "…")
        {
            let mut t = self.shared.tally();
            t.wrong += 1;
            t.fail(format!(
                "another principal's {tool} reads {:?}, one never issued {:?}",
                answer.summary(),
                none.summary()
            ));
        }
        Ok(())
    }

    /// Follows a refusal's remedy, a search that must then work: counted as recovered, or
    /// as unrecoverable with what it answered.
    async fn follow_remedy(&mut self, args: &Value, what: &str) -> Result<(), Error> {
        if let Some(again) = self
            .call_through(None, "search_tickets", args, "search")
            .await?
        {
            let mut t = self.shared.tally();
            if again.is_error() {
                t.unrecoverable += 1;
                t.fail(format!("{what} failed: {}", again.summary()));
            } else {
                t.recovered += 1;
            }
        }
        Ok(())
    }

    async fn get(&mut self) -> Result<(), Error> {
        let args =
            json!({"query": self.rng.pick(&PROBLEMS), "status": self.rng.pick(&["open", "new"])});
        let Some(page) = self
            .call_through(None, "search_tickets", &args, "search")
            .await?
        else {
            return Ok(());
        };
        let ids: Vec<String> = page
            .records()
            .iter()
            .filter_map(|r| r.get("id").and_then(Value::as_str).map(str::to_owned))
            .collect();
        let Some(id) = ids.first().cloned() else {
            return Ok(());
        };
        let Some(got) = self
            .call_through(None, "get_ticket", &json!({"id": id}), "get")
            .await?
        else {
            return Ok(());
        };
        let mut t = self.shared.tally();
        t.gets += 1;
        let shown: Vec<String> = got
            .records()
            .iter()
            .filter_map(|r| r.get("id").and_then(Value::as_str).map(str::to_owned))
            .collect();
        if got.is_error() || shown != [id.clone()] {
            t.wrong += 1;
            t.fail(format!("get_ticket {id}: {}", got.summary()));
        }
        Ok(())
    }

    /// A handle from earlier (perhaps evicted, or from a Redis since restarted): it opens with
    /// its own result's tickets, or says it is gone and what to do, which then works.
    async fn stale(&mut self) -> Result<(), Error> {
        if self.handles.is_empty() {
            return Ok(());
        }
        let at = self.rng.below(self.handles.len() as u64) as usize;
        let (handle, args, issuer) = self.handles.swap_remove(at);
        let expected = self.shared.reference.matching(&args);
        let open = json!({"handle": handle, "page_size": 20, "select": ["id", "status"]});
        let Some(answer) = self
            .call_through(None, "open_result", &open, "open")
            .await?
        else {
            return Ok(());
        };
        if answer.is_error() {
            return self.gone_handle(&answer, &args).await;
        }
        self.count_after_kill(issuer, answer.replica);
        self.shared.tally().stale_opened += 1;
        let mut seen = BTreeSet::new();
        self.check_page("stale open_result", &answer, &expected, &mut seen, None);
        Ok(())
    }

    /// Arguments that do not fit: an error that says what to fix, and the fixed call works.
    async fn malformed(&mut self) -> Result<(), Error> {
        let (tool, args) = match self.rng.below(4) {
            0 => ("search_tickets", json!({"status": "\u{202e}open\u{200b}"})),
            1 => ("search_tickets", json!({"query": "x".repeat(5_000)})),
            2 => (
                "open_result",
                json!({"handle": "h_nope", "sort": {"field": "k".repeat(20_000)}}),
            ),
            _ => ("get_ticket", json!({"id": "tkt_zzzz"})),
        };
        let Some(refused) = self.call_through(None, tool, &args, "refused").await? else {
            return Ok(());
        };
        {
            let mut t = self.shared.tally();
            t.malformed += 1;
            if !refused.is_error() {
                t.wrong += 1;
                t.fail(format!("{tool} accepted {}", refused.summary()));
                return Ok(());
            }
            if refused.summary().contains(['\u{202e}', '\u{200b}']) {
                t.wrong += 1;
                t.fail(format!(
                    "an invisible character echoed: {:?}",
                    refused.summary()
                ));
            }
            if classify(refused.summary()).is_none() {
                t.unrecoverable += 1;
                t.fail(format!("{tool}: no remedy in {:?}", refused.summary()));
                return Ok(());
            }
            t.refused += 1;
        }
        let fixed = json!({"query": "CSV import", "status": "open"});
        self.follow_remedy(&fixed, "the fixed call").await
    }

    async fn run(mut self) -> Result<(), Error> {
        while !self.shared.stop.load(Ordering::SeqCst)
            && self.shared.calls.load(Ordering::SeqCst) < self.shared.target
        {
            match self.rng.below(100) {
                0..=34 => {
                    let args = json!({
                        "query": self.rng.pick(&THINGS),
                        "status": self.rng.pick(&["new", "pending", "open", "resolved", "closed"]),
                    });
                    self.walk(args).await?;
                }
                35..=59 => {
                    let args = if self.rng.below(2) == 0 {
                        json!({"query": self.rng.pick(&THINGS)})
                    } else {
                        json!({"query": self.rng.pick(&PROBLEMS)})
                    };
                    if let Some((handle, issuer)) = self.walk(args.clone()).await? {
                        self.use_handle(&handle, &args, issuer).await?;
                        self.issue(Issued::Handle(handle.clone()));
                        self.handles.push((handle, args, issuer));
                        if self.handles.len() > 8 {
                            self.handles.remove(0);
                        }
                    }
                }
                60..=69 => self.get().await?,
                70..=79 => {
                    let args = json!({"query": self.rng.pick(&THINGS), "status": "open"});
                    self.tamper(args).await?;
                }
                80..=89 => self.stale().await?,
                90..=95 => self.malformed().await?,
                _ => self.foreign().await?,
            }
        }
        Ok(())
    }
}

/// The counts by status an aggregate answer states, read from its summary as the model reads
/// it: `…, by status: open 118, resolved 105, …; …`.
fn find_counts(summary: &str) -> Option<BTreeMap<String, u64>> {
    let (_, rest) = summary.split_once("by status: ")?;
    let list = rest.split(';').next()?;
    list.split(", ")
        .map(|pair| {
            let (word, n) = pair.trim().rsplit_once(' ')?;
            Some((word.to_owned(), n.parse().ok()?))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The door: what a replica answers a request without a token, with a wrong one, and with a
// good one from another Host or Origin, read from raw HTTP.

/// The status `port` answers an `initialize` POST with `headers`.
fn status(port: u16, headers: &[(&str, &str)]) -> Result<u16, Error> {
    use std::io::{Read, Write};
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "door", "version": "1"}}})
    .to_string();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json, \
         text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if !headers.iter().any(|(k, _)| *k == "Host") {
        request.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(CALL_TIMEOUT))?;
    stream.write_all(request.as_bytes())?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer)?;
    let answer = String::from_utf8_lossy(&answer);
    Ok(answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("no status line in {answer:.80}"))?)
}

/// Each request a replica must refuse, refused with its status, and a good one served; what
/// the figures print. An error when any is not.
fn refusals(port: u16) -> Result<String, Error> {
    let good = format!("Bearer {}", PRINCIPALS[0].1);
    let wrong = format!("Bearer {}", PRINCIPALS[0].1.replace('7', "8"));
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, u16);
    let cases: [Case; 5] = [
        ("no token", vec![], 401),
        ("a wrong token", vec![("Authorization", &wrong)], 401),
        (
            "another Host",
            vec![("Authorization", &good), ("Host", "evil.example")],
            403,
        ),
        (
            "another Origin",
            vec![("Authorization", &good), ("Origin", "http://evil.example")],
            403,
        ),
        ("a good token", vec![("Authorization", &good)], 200),
    ];
    let mut said = Vec::new();
    for (what, headers, want) in cases {
        let got = status(port, &headers)?;
        if got != want {
            return Err(format!("{what}: HTTP {got}, not {want}").into());
        }
        said.push(format!("{what} {got}"));
    }
    Ok(said.join(", "))
}

// ---------------------------------------------------------------------------------------------
// The text profile, from `_meta` alone.

async fn text_probe(shared: &Shared, rng: &mut Rng) -> Result<(), Error> {
    let r = rng.below(REPLICAS as u64) as usize;
    if !shared.up[r].load(Ordering::SeqCst) {
        return Ok(());
    }
    let client = connect(shared.ports[r], "langchain-mcp-adapters", 0).await?;
    let tools = client.list_all_tools().await?;
    let search = tools
        .iter()
        .find(|t| t.name == "search_tickets")
        .ok_or("no search_tickets tool")?;
    if search.output_schema.is_some() {
        let mut t = shared.tally();
        t.wrong += 1;
        t.fail("the text profile's tools/list has an outputSchema".into());
    }
    let params = CallToolRequestParams::new("search_tickets").with_arguments(
        json!({"query": rng.pick(&THINGS)})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    );
    let result = client.call_tool(params).await?;
    let text: String = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    let _ = client.cancel().await;
    let mut t = shared.tally();
    t.text_probes += 1;
    if result.structured_content.is_some() {
        t.wrong += 1;
        t.fail("a langchain-mcp-adapters answer has structuredContent".into());
    }
    if text.is_empty() || text.starts_with('{') {
        t.wrong += 1;
        t.fail(format!("the text profile's text reads {text:.80}"));
    }
    let tokens = shared.o200k.count(&text);
    if tokens > BUDGET {
        t.over_budget += 1;
        t.fail(format!("text profile: {tokens} tokens over {BUDGET}"));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------

fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let at = ((sorted.len() - 1) as f64 * p).round() as usize;
    f64::from(sorted[at]) / 1_000.0
}

struct Options {
    calls: u64,
    sessions: usize,
    faults: bool,
}

fn options() -> Result<Options, Error> {
    let mut o = Options {
        calls: 20_000,
        sessions: 64,
        faults: true,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--sessions" => {
                o.sessions = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .ok_or("--sessions needs a number")?;
            }
            "--no-faults" => o.faults = false,
            n => o.calls = n.parse().map_err(|_| format!("unknown argument {n:?}"))?,
        }
    }
    Ok(o)
}

fn server_path() -> Result<String, Error> {
    Ok(shape_examples::support_desk_server(
        "SHAPE_LOAD_SERVER",
        "http",
    )?)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let o = options()?;
    let server = server_path()?;
    let started = Instant::now();
    let mut redis = Redis::start()?;
    let reference = Reference::load()?;
    let mut replicas = Vec::new();
    for _ in 0..REPLICAS {
        let port = free_port()?;
        let child = start_replica(&server, port, &redis.url())?;
        replicas.push(Replica {
            port,
            child: Some(child),
            rss_start_kib: 0,
        });
    }
    let ports = [replicas[0].port, replicas[1].port, replicas[2].port];
    let shared = Arc::new(Shared {
        reference,
        target: o.calls,
        calls: AtomicU64::new(0),
        phase: Mutex::new(Phase::One),
        ports,
        up: [(); REPLICAS].map(|()| AtomicBool::new(true)),
        generation: [(); REPLICAS].map(|()| AtomicUsize::new(0)),
        killed_at: Mutex::new(None),
        latencies: Mutex::new(HashMap::new()),
        tally: Mutex::new(Tally::default()),
        o200k: Bpe::o200k_base(),
        stop: AtomicBool::new(false),
        issued: Mutex::new([Vec::new(), Vec::new()]),
    });
    let refusals = refusals(ports[0])?;

    // A warm-up on each replica (the start figures are of a replica at work), then its RSS.
    for (r, replica) in replicas.iter_mut().enumerate() {
        let mut s = Session::new(Arc::clone(&shared), 7 + r as u64, r % 2);
        s.call_on(
            Some(r),
            "search_tickets",
            &json!({"query": "SSO login"}),
            "warm-up",
        )
        .await?;
        let pid = replica.child.as_ref().map(Child::id).unwrap_or_default();
        replica.rss_start_kib = desk_data::rss_kib(pid).unwrap_or(0);
    }
    let warm_calls = shared.calls.load(Ordering::SeqCst);
    let target = o.calls;
    let shared_target = |share: f64| warm_calls + (target as f64 * share) as u64;

    // The sessions.
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..o.sessions {
        let session = Session::new(Arc::clone(&shared), 20_261_204 + i as u64 * 7_919, i % 2);
        tasks.spawn(session.run());
    }
    // The text-profile probes, now and then.
    let probe_shared = Arc::clone(&shared);
    let probes = tokio::spawn(async move {
        let mut rng = Rng(99);
        while !probe_shared.stop.load(Ordering::SeqCst)
            && probe_shared.calls.load(Ordering::SeqCst) < probe_shared.target
        {
            if let Err(e) = text_probe(&probe_shared, &mut rng).await
                && probe_shared.phase() != Phase::Faults
            {
                probe_shared.fail(format!("text probe: {e}"));
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    });

    // The timeline: phases by calls made, faults in the last.
    let mut phase_started = HashMap::new();
    phase_started.insert(
        Phase::One,
        (Instant::now(), shared.calls.load(Ordering::SeqCst)),
    );
    let mut events: Vec<String> = Vec::new();
    let wait_for = |calls: u64| {
        let shared = Arc::clone(&shared);
        async move {
            while shared.calls.load(Ordering::SeqCst) < calls && !shared.stop.load(Ordering::SeqCst)
            {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    };
    let set_phase = |phase: Phase| {
        *shared.phase.lock().unwrap_or_else(|e| e.into_inner()) = phase;
    };
    let mut phase_ended = HashMap::new();
    let mark = |shared: &Shared| (Instant::now(), shared.calls.load(Ordering::SeqCst));

    wait_for(shared_target(0.20)).await;
    phase_ended.insert(Phase::One, mark(&shared));
    set_phase(Phase::Three);
    phase_started.insert(Phase::Three, mark(&shared));
    wait_for(shared_target(0.20 + 1.0 / 6.0)).await;
    phase_ended.insert(Phase::Three, mark(&shared));
    set_phase(Phase::Faults);
    phase_started.insert(Phase::Faults, mark(&shared));
    let mut evicted_keys = 0u64;
    if o.faults {
        // Replica 2, killed mid-walk (64 sessions are always mid-walk), then started again.
        wait_for(shared_target(0.45)).await;
        shared.up[2].store(false, Ordering::SeqCst);
        if let Some(mut child) = replicas[2].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        *shared.killed_at.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
        events.push(format!(
            "replica 2 killed at call {}",
            shared.calls.load(Ordering::SeqCst)
        ));
        wait_for(shared_target(0.55)).await;
        replicas[2].child = Some(start_replica(&server, ports[2], &redis.url())?);
        shared.generation[2].fetch_add(1, Ordering::SeqCst);
        shared.up[2].store(true, Ordering::SeqCst);
        events.push(format!(
            "replica 2 started again at call {}",
            shared.calls.load(Ordering::SeqCst)
        ));
        // Redis stopped for two seconds, then started again, empty.
        wait_for(shared_target(0.62)).await;
        redis.down();
        let stopped = shared.calls.load(Ordering::SeqCst);
        tokio::time::sleep(Duration::from_secs(2)).await;
        redis.up()?;
        events.push(format!(
            "Redis stopped at call {stopped} for 2 s ({} calls answered meanwhile), started again empty",
            shared.calls.load(Ordering::SeqCst) - stopped
        ));
        // Redis squeezed: stored results and positions evicted under load.
        wait_for(shared_target(0.72)).await;
        redis.command(&["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"])?;
        redis.command(&["CONFIG", "SET", "maxmemory", SMALL_MAXMEMORY])?;
        let from = shared.calls.load(Ordering::SeqCst);
        wait_for(shared_target(0.90)).await;
        redis.command(&["CONFIG", "SET", "maxmemory", "0"])?;
        evicted_keys = redis
            .info()
            .get("evicted_keys")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        events.push(format!(
            "Redis maxmemory {SMALL_MAXMEMORY} allkeys-lru from call {from} to {}: {evicted_keys} keys evicted",
            shared.calls.load(Ordering::SeqCst)
        ));
    }
    // The end: every session finishes the walk it is in.
    let deadline = Instant::now() + Duration::from_secs(1_800);
    let mut session_errors = Vec::new();
    while let Some(joined) = tokio::time::timeout_at(deadline.into(), tasks.join_next())
        .await
        .ok()
        .flatten()
    {
        match joined {
            Ok(Ok(())) => {}
            Ok(Err(e)) => session_errors.push(e.to_string()),
            Err(e) => session_errors.push(e.to_string()),
        }
    }
    shared.stop.store(true, Ordering::SeqCst);
    let _ = probes.await;
    phase_ended.insert(Phase::Faults, mark(&shared));

    // Figures.
    let info = redis.info();
    let rss_end: Vec<u64> = replicas
        .iter()
        .map(|r| {
            r.child
                .as_ref()
                .and_then(|c| desk_data::rss_kib(c.id()))
                .unwrap_or(0)
        })
        .collect();
    println!(
        "load: {} sessions, {} replicas over streamable HTTP (stateless), Redis {} ({:.1} s)",
        o.sessions,
        REPLICAS,
        info.get("redis_version").map_or("?", String::as_str),
        started.elapsed().as_secs_f64()
    );
    for event in &events {
        println!("  fault: {event}");
    }
    let latencies = shared.latencies.lock().unwrap_or_else(|e| e.into_inner());
    let kinds = ["search", "page", "open", "aggregate", "get", "refused"];
    println!(
        "  {:<20} {:>7} {:>8}  {}",
        "phase",
        "calls",
        "calls/s",
        kinds.iter().map(|k| format!("{k:>16}")).collect::<String>()
    );
    println!(
        "  {:<37}  {}",
        "",
        kinds
            .iter()
            .map(|_| format!("{:>16}", "p50/p99 ms"))
            .collect::<String>()
    );
    for phase in Phase::ALL {
        let (Some(&(t0, c0)), Some(&(t1, c1))) =
            (phase_started.get(&phase), phase_ended.get(&phase))
        else {
            continue;
        };
        let secs = t1.duration_since(t0).as_secs_f64().max(1e-9);
        let mut cells = String::new();
        for kind in kinds {
            let mut v = latencies.get(&(phase, kind)).cloned().unwrap_or_default();
            v.sort_unstable();
            cells.push_str(&format!(
                "{:>16}",
                format!("{:.1}/{:.1}", percentile(&v, 0.5), percentile(&v, 0.99))
            ));
        }
        println!(
            "  {:<20} {:>7} {:>8.0}  {cells}",
            phase.name(),
            c1 - c0,
            (c1 - c0) as f64 / secs
        );
    }
    drop(latencies);
    let mib = |kib: u64| kib as f64 / 1024.0;
    for (r, replica) in replicas.iter().enumerate() {
        println!(
            "  replica {r}: RSS {:.1} MiB after warm-up, {:.1} MiB at the end{}",
            mib(replica.rss_start_kib),
            mib(rss_end[r]),
            if r == 2 && o.faults {
                " (the process started again after the kill)"
            } else {
                ""
            }
        );
    }
    println!(
        "  Redis: used_memory {} (peak {}), {} keys evicted under maxmemory",
        info.get("used_memory_human").map_or("?", String::as_str),
        info.get("used_memory_peak_human")
            .map_or("?", String::as_str),
        evicted_keys
    );
    let t = shared.tally();
    println!(
        "  walks to the end {}, restarted as told {}, records checked {}; handles {} (opened on \
         every replica {}), aggregates {}, gets {}, tampered cursors {}, malformed calls {}, old \
         handles reopened {}, text-profile probes {}",
        t.walks,
        t.walk_restarts,
        t.records,
        t.handles,
        t.handles_everywhere,
        t.aggregates,
        t.gets,
        t.tampered,
        t.malformed,
        t.stale_opened,
        t.text_probes
    );
    println!(
        "  errors: unavailable {} (retried as told), gone {} (started again as told), refused {}; \
         recovered {}; calls sent elsewhere after a replica did not answer {}; cursors and \
         handles of the killed replica opened elsewhere {}",
        t.unavailable, t.gone, t.refused, t.recovered, t.rerouted, t.after_kill
    );
    println!(
        "  principals: {} ({} sessions each); the other's handles and cursors tried {}, opened \
         {}; at the door: {refusals}",
        PRINCIPALS.map(|(p, _)| p).join(", "),
        o.sessions / 2,
        t.foreign_tried,
        t.foreign_opened
    );
    for f in &t.failures {
        println!("  FAILED: {f}");
    }
    for e in &session_errors {
        println!("  SESSION FAILED: {e}");
    }
    println!(
        "load: calls={} lost={} duplicated={} wrong={} over_budget={} unrecoverable={} \
         foreign_opened={}",
        shared.calls.load(Ordering::SeqCst),
        t.lost,
        t.duplicated,
        t.wrong,
        t.over_budget,
        t.unrecoverable,
        t.foreign_opened
    );
    let faults_seen = !o.faults || t.after_kill > 0;
    let foreign_seen = t.foreign_tried > 0;
    if !foreign_seen {
        println!("  FAILED: no session tried the other principal's handle or cursor");
    }
    if t.lost + t.duplicated + t.wrong + t.over_budget + t.unrecoverable + t.foreign_opened > 0
        || !foreign_seen
        || !session_errors.is_empty()
        || !t.failures.is_empty()
        || !faults_seen
    {
        drop(t);
        for replica in &mut replicas {
            if let Some(mut c) = replica.child.take() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
        return Err("a broken promise under load (above)".into());
    }
    drop(t);
    for replica in &mut replicas {
        if let Some(mut c) = replica.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
    Ok(())
}
