//! Savings a person can see. Every page the harness serves is reported as a `tracing` event
//! (target `shape`, "shaped tool result": the call's [`Report`](toolshape::report::Report)); the
//! [`layer`] counts those reports per tool and upstream, the one source of every figure
//! here, and:
//! - serves them in Prometheus' exposition format (OpenMetrics text, `prometheus-client`) at
//!   `/metrics` beside `/mcp` when the proxy is served over HTTP (behind the same access
//!   check);
//! - appends each page's counts to a ledger (`ledger = "…"` under `[proxy]`, JSON lines; the
//!   configuration `wrap` writes names `~/.toolshape/ledger.jsonl`), which
//!   `toolshape-proxy stats` sums, for the proxies clients start over stdio.
//!
//! The figures, per tool and upstream (`open_result`'s pages are counted under the upstream
//! the proxy serves alone, else under `proxy`):
//! - `toolshape_calls_total`: calls answered: an upstream's answer shaped (a first page, the
//!   raw answer measured) or an error;
//! - `toolshape_pages_total` (and `status`): pages served, first and later;
//! - `toolshape_raw_tokens_total`: the upstream answers' tokens, in the budget's tokenizer;
//! - `toolshape_shaped_tokens_total` (and `channel`, `text` or `structured`): the pages';
//! - `toolshape_cuts_total`: pages cut short (the rest stored behind a handle);
//! - `toolshape_errors_total`: pages whose status is `error`;
//! - `toolshape_handles_opened_total`: pages of `open_result` (a stored result reopened).

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use tracing::field::{Field, Visit};

/// The message of the harness's report event.
const REPORT: &str = "shaped tool result";

/// One page's counts, as its report gives them: a line of the ledger.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page {
    /// When it was served (seconds since the Unix epoch).
    #[serde(default)]
    pub at: u64,
    /// The tool, as the proxy exposes it.
    pub tool: String,
    /// The upstream whose tool it is (`proxy` when none is known).
    pub upstream: String,
    /// `ok`, `partial`, `empty` or `error`.
    pub status: String,
    /// The upstream answer's tokens (a first page only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_tokens: Option<u64>,
    /// The page's tokens in the text channel.
    pub text_tokens: u64,
    /// The page's tokens in the structured channel, when the client's profile sends it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_tokens: Option<u64>,
    /// Whether the page was cut short.
    #[serde(default)]
    pub cut: bool,
}

impl Page {
    /// Whether it answers a call of its own (not a later page of one): an upstream's answer
    /// shaped (its raw size measured), or an error.
    pub fn is_call(&self) -> bool {
        self.raw_tokens.is_some() || self.status == "error"
    }

    /// The tokens a model reads of it at most: the larger channel sent (a client reads one).
    pub fn shaped_tokens(&self) -> u64 {
        self.text_tokens.max(self.structured_tokens.unwrap_or(0))
    }
}

/// Reads a report event's fields.
struct Fields<'a> {
    page: &'a mut Page,
    message: bool,
}

impl Visit for Fields<'_> {
    fn record_u64(&mut self, field: &Field, value: u64) {
        match field.name() {
            "raw_tokens" => self.page.raw_tokens = Some(value),
            "text_tokens" => self.page.text_tokens = value,
            "structured_tokens" => self.page.structured_tokens = Some(value),
            _ => {}
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "status" => self.page.status = value.to_owned(),
            "cut_reason" => self.page.cut = true,
            _ => {}
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "message" => self.message = format!("{value:?}") == REPORT,
            // `tool = %…`: its Display, through `Debug`.
            "tool" => self.page.tool = format!("{value:?}"),
            _ => {}
        }
    }
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Labels {
    tool: String,
    upstream: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StatusLabels {
    tool: String,
    upstream: String,
    status: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ChannelLabels {
    tool: String,
    upstream: String,
    channel: String,
}

struct Counters {
    registry: Registry,
    calls: Family<Labels, Counter>,
    pages: Family<StatusLabels, Counter>,
    raw: Family<Labels, Counter>,
    shaped: Family<ChannelLabels, Counter>,
    cuts: Family<Labels, Counter>,
    errors: Family<Labels, Counter>,
    opened: Family<Labels, Counter>,
}

impl Counters {
    fn new() -> Counters {
        let mut registry = Registry::default();
        let calls = Family::<Labels, Counter>::default();
        let pages = Family::<StatusLabels, Counter>::default();
        let raw = Family::<Labels, Counter>::default();
        let shaped = Family::<ChannelLabels, Counter>::default();
        let cuts = Family::<Labels, Counter>::default();
        let errors = Family::<Labels, Counter>::default();
        let opened = Family::<Labels, Counter>::default();
        registry.register(
            "toolshape_calls",
            "Calls answered: upstream answers shaped (first pages) and errors",
            calls.clone(),
        );
        registry.register(
            "toolshape_pages",
            "Pages served, first and later, by status",
            pages.clone(),
        );
        registry.register(
            "toolshape_raw_tokens",
            "Tokens of the upstream answers, in the budget's tokenizer",
            raw.clone(),
        );
        registry.register(
            "toolshape_shaped_tokens",
            "Tokens of the pages served, by channel",
            shaped.clone(),
        );
        registry.register(
            "toolshape_cuts",
            "Pages cut short, the rest stored behind a handle",
            cuts.clone(),
        );
        registry.register(
            "toolshape_errors",
            "Pages whose status is error",
            errors.clone(),
        );
        registry.register(
            "toolshape_handles_opened",
            "Pages of open_result: stored results reopened",
            opened.clone(),
        );
        Counters {
            registry,
            calls,
            pages,
            raw,
            shaped,
            cuts,
            errors,
            opened,
        }
    }

    fn count(&self, page: &Page) {
        let labels = Labels {
            tool: page.tool.clone(),
            upstream: page.upstream.clone(),
        };
        self.pages
            .get_or_create(&StatusLabels {
                tool: page.tool.clone(),
                upstream: page.upstream.clone(),
                status: page.status.clone(),
            })
            .inc();
        if page.is_call() {
            self.calls.get_or_create(&labels).inc();
        }
        if let Some(raw) = page.raw_tokens {
            self.raw.get_or_create(&labels).inc_by(raw);
        }
        let channel = |channel: &str| ChannelLabels {
            tool: page.tool.clone(),
            upstream: page.upstream.clone(),
            channel: channel.to_owned(),
        };
        self.shaped
            .get_or_create(&channel("text"))
            .inc_by(page.text_tokens);
        if let Some(structured) = page.structured_tokens {
            self.shaped
                .get_or_create(&channel("structured"))
                .inc_by(structured);
        }
        if page.cut {
            self.cuts.get_or_create(&labels).inc();
        }
        if page.status == "error" {
            self.errors.get_or_create(&labels).inc();
        }
        if page.tool == "open_result" {
            self.opened.get_or_create(&labels).inc();
        }
    }
}

/// The proxy's tally: the counters, which upstream each tool is, the ledger.
struct Tally {
    counters: Counters,
    /// The upstream of each tool called (the exposed name).
    routes: Mutex<HashMap<String, String>>,
    /// The upstream a tool no call routed is counted under (`--upstream`: that one).
    alone: Mutex<Option<String>>,
    ledger: Mutex<Option<std::fs::File>>,
}

fn tally() -> &'static Tally {
    static TALLY: OnceLock<Tally> = OnceLock::new();
    TALLY.get_or_init(|| Tally {
        counters: Counters::new(),
        routes: Mutex::new(HashMap::new()),
        alone: Mutex::new(None),
        ledger: Mutex::new(None),
    })
}

/// Notes that the proxy routes `tool` to `upstream`: its pages are counted under it.
pub(crate) fn routed(tool: &str, upstream: &str) {
    if let Ok(mut routes) = tally().routes.lock() {
        routes.insert(tool.to_owned(), upstream.to_owned());
    }
}

/// Counts every tool no call routed under `upstream` (the one a proxy serves alone).
pub(crate) fn alone(upstream: &str) {
    if let Ok(mut alone) = tally().alone.lock() {
        *alone = Some(upstream.to_owned());
    }
}

/// Appends each page's counts to the ledger at `path` (JSON lines), from now on.
pub fn open_ledger(path: &Path) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(path)?;
    if let Ok(mut ledger) = tally().ledger.lock() {
        *ledger = Some(file);
    }
    Ok(())
}

/// The counters in Prometheus' exposition format (OpenMetrics text).
pub fn render() -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = prometheus_client::encoding::text::encode(&mut out, &tally().counters.registry);
    out
}

/// The content type of [`render`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The `tracing` layer that counts the harness's reports (install it beside the subscriber's
/// others; it sees every report whatever their filter lets through).
pub fn layer() -> ReportLayer {
    ReportLayer(())
}

/// See [`layer`].
#[derive(Debug)]
pub struct ReportLayer(());

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for ReportLayer {
    fn on_event(
        &self,
        event: &tracing::Event<'_>,
        _ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        if event.metadata().target() != "shape" {
            return;
        }
        let mut page = Page::default();
        let mut fields = Fields {
            page: &mut page,
            message: false,
        };
        event.record(&mut fields);
        if !fields.message {
            return;
        }
        count(page);
    }
}

/// Counts one page: the counters, and the ledger's line.
fn count(mut page: Page) {
    let tally = tally();
    page.upstream = tally
        .routes
        .lock()
        .ok()
        .and_then(|routes| routes.get(&page.tool).cloned())
        .or_else(|| tally.alone.lock().ok().and_then(|a| a.clone()))
        .unwrap_or_else(|| "proxy".to_owned());
    page.at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    tally.counters.count(&page);
    if let Ok(mut ledger) = tally.ledger.lock()
        && let Some(file) = ledger.as_mut()
        && let Ok(mut line) = serde_json::to_string(&page)
    {
        line.push('\n');
        // One write of one short line to a file opened for appending: whole, between other
        // processes' lines.
        if let Err(e) = file.write_all(line.as_bytes()) {
            tracing::warn!(error = %e, "the ledger could not be written; no longer writing it");
            *ledger = None;
        }
    }
}

/// `toolshape-proxy stats`: the ledger at `path` summed per upstream and tool, for a person.
pub fn stats(path: &Path) -> Result<String, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(format!(
                "no ledger at {}: no page has been served by a proxy that keeps one (`ledger = \"…\"` under [proxy]; `wrap` sets it)\n",
                path.display()
            ));
        }
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    #[derive(Default)]
    struct Sum {
        calls: u64,
        pages: u64,
        raw: u64,
        shaped: u64,
        cuts: u64,
        errors: u64,
    }
    let mut sums: BTreeMap<(String, String), Sum> = BTreeMap::new();
    let mut unread = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(page) = serde_json::from_str::<Page>(line) else {
            unread += 1;
            continue;
        };
        let sum = sums
            .entry((page.upstream.clone(), page.tool.clone()))
            .or_default();
        sum.pages += 1;
        sum.shaped += page.shaped_tokens();
        sum.calls += u64::from(page.is_call());
        sum.raw += page.raw_tokens.unwrap_or(0);
        sum.cuts += u64::from(page.cut);
        sum.errors += u64::from(page.status == "error");
    }
    let mut out = format!(
        "{:<14} {:<28} {:>6} {:>6} {:>12} {:>12} {:>7} {:>5} {:>6}\n",
        "upstream",
        "tool",
        "calls",
        "pages",
        "raw tokens",
        "read tokens",
        "saving",
        "cuts",
        "errors"
    );
    let mut total = Sum::default();
    let saving = |raw: u64, shaped: u64| {
        if raw == 0 {
            "—".to_owned()
        } else {
            format!("{:.0}%", (1.0 - shaped as f64 / raw as f64) * 100.0)
        }
    };
    for ((upstream, tool), sum) in &sums {
        out.push_str(&format!(
            "{upstream:<14} {tool:<28} {:>6} {:>6} {:>12} {:>12} {:>7} {:>5} {:>6}\n",
            sum.calls,
            sum.pages,
            sum.raw,
            sum.shaped,
            saving(sum.raw, sum.shaped),
            sum.cuts,
            sum.errors
        ));
        total.calls += sum.calls;
        total.pages += sum.pages;
        total.raw += sum.raw;
        total.shaped += sum.shaped;
        total.cuts += sum.cuts;
        total.errors += sum.errors;
    }
    out.push_str(&format!(
        "{:<14} {:<28} {:>6} {:>6} {:>12} {:>12} {:>7} {:>5} {:>6}\n",
        "all",
        "",
        total.calls,
        total.pages,
        total.raw,
        total.shaped,
        saving(total.raw, total.shaped),
        total.cuts,
        total.errors
    ));
    out.push_str(
        "raw: the upstreams' answers; read: every page served (first, later and open_result), \
         each counted in the larger channel sent; saving: 1 − read ÷ raw\n",
    );
    if unread > 0 {
        out.push_str(&format!(
            "{unread} lines of {} could not be read and are not counted\n",
            path.display()
        ));
    }
    Ok(out)
}

/// The ledger `wrap` names and `stats` reads by default: `$TOOLSHAPE_HOME/ledger.jsonl`
/// (default `~/.toolshape`).
pub fn default_ledger(dir: &Path) -> PathBuf {
    dir.join("ledger.jsonl")
}

#[cfg(all(test, feature = "http"))]
mod tests;
