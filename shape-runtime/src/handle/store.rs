//! What is stored under a handle ([`StoredResult`]), when a result is worth storing
//! ([`HandlePolicy`]), and the storage interface ([`HandleStore`]), small enough for a shared
//! store such as Redis to implement.

use crate::fields::rank::Order;
use crate::handle::id::{Handle, HandleError};
use crate::record::{Field, FieldRole, Owned, Projection, RankInfo, Segment, Storage};
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What the shaper stores under a handle: the record description and the projected records
/// in ranked order, so the companion tool can filter, sort, page and aggregate them and shape
/// the slice as the original tool would have.
///
/// Its JSON form is flat, as it has always been: `tool`, `name`, `plural`, `fields`,
/// `skipped`, `prose`, `rank` (`[index, order]`), `records`, `created_at_unix`, and
/// `nested_untrusted` when nested records hold outsiders' text. Fields carry the optional
/// keys `source`, `resolver` and `short`; results stored before those keys existed read back
/// unchanged, and older readers ignore them.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredResult {
    /// The tool that produced it (named in "call … again" remedies).
    pub tool: String,
    /// What the records show.
    pub record: Projection<Owned>,
    /// Projected records, in ranked order.
    pub records: Vec<serde_json::Map<String, serde_json::Value>>,
    /// When it was stored, in seconds since the Unix epoch.
    pub created_at_unix: u64,
    /// Where nested records (`#[shape(nested)]`) hold outsiders' text, as `field.name`
    /// (`comments.body`): the stored description keeps only the top-level fields, so a
    /// reopened page names these in its `untrusted` key from here.
    pub nested_untrusted: Vec<String>,
    /// What the summary of the page that stored it said of the whole stored result (its
    /// aggregate, and what part of the result it covers): the later pages of the same walk
    /// say the same, from here, rather than counting what is left of it.
    pub details: Option<String>,
    /// The records are a text's lines in order (a text answer nobody described, through the
    /// harness): its walk's later pages write a whole line as a JSON string, as its first did.
    pub lines: bool,
    /// Fields the walk's pages leave out and `open_result` shows when asked (`select`): what
    /// the rules for an answer nobody described set aside (its link fields, the records as
    /// given), kept rather than dropped.
    pub aside: Vec<String>,
}

#[cfg(any(test, feature = "test-seams"))]
/// One output field of a [`StoredResult`].
pub type StoredField = Field<Owned>;

#[cfg(any(test, feature = "test-seams"))]
/// A piece of a stored prose template.
pub type StoredSegment = Segment<Owned>;

impl StoredResult {
    /// An empty result with no fields, for `tool`, created now.
    pub fn new(
        tool: impl Into<String>,
        name: impl Into<String>,
        plural: impl Into<String>,
    ) -> Self {
        StoredResult {
            tool: tool.into(),
            record: Projection::named(name.into(), plural.into()),
            records: Vec::new(),
            created_at_unix: now_unix(),
            nested_untrusted: Vec::new(),
            details: None,
            lines: false,
            aside: Vec::new(),
        }
    }

    /// The stored form of `records`, projected by `projection`, created now.
    ///
    /// ```
    /// use toolshape::{handle::StoredResult, __seams::handle::StoredSegment};
    /// use toolshape::{ToolResult, Order};
    ///
    /// #[derive(ToolResult)]
    /// #[shape(name = "ticket", plural = "tickets", prose = "{id}: {subject}")]
    /// struct Ticket {
    ///     #[shape(id)]
    ///     id: String,
    ///     #[shape(untrusted(max_tokens = 40))]
    ///     subject: String,
    ///     #[shape(rank = desc)]
    ///     updated: i64,
    ///     #[shape(skip)]
    ///     secret: String,
    /// }
    ///
    /// let stored = StoredResult::from_projection("search_tickets", Ticket::PROJECTION, Vec::new());
    /// let record = &stored.record;
    /// assert_eq!(record.fields[1].kind.role(), toolshape::__seams::record::FieldRole::Untrusted);
    /// assert_eq!(record.fields[1].kind.max_tokens(), Some(40));
    /// assert_eq!(record.rank.map(|r| (r.field, r.order)), Some((2, Order::Desc)));
    /// assert_eq!(record.skipped, ["secret"]);
    /// assert_eq!(record.prose.as_deref().map(|p| &p[..2]), Some(&[StoredSegment::Field(0), StoredSegment::Text(": ".into())][..]));
    /// ```
    pub fn from_projection<S: Storage>(
        tool: impl Into<String>,
        projection: &Projection<S>,
        records: Vec<serde_json::Map<String, serde_json::Value>>,
    ) -> Self {
        let top: Vec<&str> = projection.untrusted_names();
        let nested_untrusted = projection
            .untrusted_paths()
            .into_iter()
            .filter(|path| !top.contains(&path.as_str()))
            .collect();
        StoredResult {
            tool: tool.into(),
            record: projection.to_owned_record(),
            records,
            created_at_unix: now_unix(),
            nested_untrusted,
            details: None,
            lines: false,
            aside: Vec::new(),
        }
    }

    /// An estimate of the memory this result takes decoded: its records' maps (a slot per
    /// entry), keys and values, each heap allocation with the allocator's bookkeeping. What a
    /// cache of decoded results is bounded by: a result's JSON is a fraction of it (a
    /// ticket's 170 bytes of JSON take about 1.2 KB decoded).
    pub fn resident_bytes(&self) -> usize {
        use serde_json::{Map, Value};
        /// A heap allocation of `size` bytes as the system allocator lays it out (glibc: an
        /// 8-byte header, 16-byte granules, 32 bytes at least).
        fn alloc(size: usize) -> usize {
            if size == 0 {
                0
            } else {
                (size + 8).div_ceil(16).max(2) * 16
            }
        }
        fn value(v: &Value) -> usize {
            match v {
                Value::String(s) => alloc(s.capacity()),
                Value::Array(items) => {
                    alloc(items.capacity() * size_of::<Value>())
                        + items.iter().map(value).sum::<usize>()
                }
                Value::Object(m) => map(m),
                Value::Null | Value::Bool(_) | Value::Number(_) => 0,
            }
        }
        fn map(m: &Map<String, Value>) -> usize {
            let n = m.len();
            if n == 0 {
                return 0;
            }
            let slots = if preserves_order() {
                // An index map: a hash table of indices (a power of two of buckets, from 4,
                // 8 bytes and a control byte each, 7/8 of them usable from 8 on) and its
                // entries (hash, key, value), reserved to the table's capacity.
                let usable = |buckets: usize| {
                    if buckets < 8 {
                        buckets - 1
                    } else {
                        buckets / 8 * 7
                    }
                };
                let mut buckets = 4;
                while usable(buckets) < n {
                    buckets *= 2;
                }
                alloc(usable(buckets) * (8 + size_of::<String>() + size_of::<Value>()))
                    + alloc(buckets * 9 + 16)
            } else {
                // A B-tree: nodes of 11 key and value slots, about three-quarters full once
                // split, and above them nodes with 12 edges besides.
                let slot = size_of::<String>() + size_of::<Value>();
                let leaf = alloc(11 * slot + 16);
                if n <= 11 {
                    leaf
                } else {
                    let leaves = n.div_ceil(8);
                    leaves * leaf + leaves.div_ceil(6) * alloc(11 * slot + 16 + 12 * 8)
                }
            };
            slots
                + m.iter()
                    .map(|(k, v)| alloc(k.capacity()) + value(v))
                    .sum::<usize>()
        }
        size_of::<Self>()
            + alloc(self.records.capacity() * size_of::<Map<String, Value>>())
            + self.records.iter().map(map).sum::<usize>()
            // The description of the records: a few fields, a template.
            + 4_096
    }

    /// The size the byte caps count: the length of the JSON serialisation.
    pub fn json_len(&self) -> usize {
        let mut counter = ByteCounter(0);
        // Writing to a counter cannot fail, and a map with string keys always serialises.
        match serde_json::to_writer(&mut counter, self) {
            Ok(()) => counter.0,
            Err(_) => usize::MAX,
        }
    }
}

impl Serialize for StoredResult {
    fn serialize<Z: serde::Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        use serde::ser::SerializeStruct as _;
        let record = &self.record;
        let mut st = s.serialize_struct("StoredResult", 14)?;
        st.serialize_field("tool", &self.tool)?;
        st.serialize_field("name", &record.name)?;
        st.serialize_field("plural", &record.plural)?;
        st.serialize_field("fields", &record.fields)?;
        st.serialize_field("skipped", &record.skipped)?;
        st.serialize_field("prose", &record.prose)?;
        st.serialize_field("rank", &record.rank.map(|r| (r.field, r.order)))?;
        match record.rank.and_then(|r| r.fold) {
            Some(fold) => st.serialize_field("rank_fold", &fold)?,
            None => st.skip_field("rank_fold")?,
        }
        st.serialize_field("records", &self.records)?;
        st.serialize_field("created_at_unix", &self.created_at_unix)?;
        if self.nested_untrusted.is_empty() {
            st.skip_field("nested_untrusted")?;
        } else {
            st.serialize_field("nested_untrusted", &self.nested_untrusted)?;
        }
        match &self.details {
            Some(details) => st.serialize_field("details", details)?,
            None => st.skip_field("details")?,
        }
        if self.lines {
            st.serialize_field("lines", &true)?;
        } else {
            st.skip_field("lines")?;
        }
        if self.aside.is_empty() {
            st.skip_field("aside")?;
        } else {
            st.serialize_field("aside", &self.aside)?;
        }
        st.end()
    }
}

/// The flat JSON form of a [`StoredResult`], as read back.
#[derive(Deserialize)]
struct StoredWire {
    tool: String,
    name: String,
    plural: String,
    fields: Vec<Field<Owned>>,
    skipped: Vec<String>,
    prose: Option<Vec<Segment<Owned>>>,
    rank: Option<(usize, Order)>,
    #[serde(default)]
    rank_fold: Option<crate::fields::rank::Fold>,
    records: Vec<serde_json::Map<String, serde_json::Value>>,
    created_at_unix: u64,
    #[serde(default)]
    nested_untrusted: Vec<String>,
    #[serde(default)]
    details: Option<String>,
    #[serde(default)]
    lines: bool,
    #[serde(default)]
    aside: Vec<String>,
}

impl<'de> Deserialize<'de> for StoredResult {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = StoredWire::deserialize(d)?;
        let id = w.fields.iter().position(|f| f.kind.role() == FieldRole::Id);
        Ok(StoredResult {
            tool: w.tool,
            record: Projection {
                name: w.name,
                plural: w.plural,
                fields: w.fields,
                skipped: w.skipped,
                prose: w.prose,
                rank: w.rank.map(|(field, order)| RankInfo {
                    field,
                    order,
                    fold: w.rank_fold,
                }),
                id,
                nested: Vec::new(),
            },
            records: w.records,
            created_at_unix: w.created_at_unix,
            nested_untrusted: w.nested_untrusted,
            details: w.details,
            lines: w.lines,
            aside: w.aside,
        })
    }
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

struct ByteCounter(usize);

impl std::io::Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 = self.0.saturating_add(buf.len());
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// When to store a result behind a handle, and for how long. Loaded from configuration.
///
/// ```
/// use toolshape::handle::HandlePolicy;
///
/// let policy: HandlePolicy = toml::from_str("ttl_secs = 600")?;
/// assert_eq!(policy.ttl_secs, 600);
/// assert_eq!(policy.max_bytes_per_payload, HandlePolicy::default().max_bytes_per_payload);
/// assert!(policy.should_store(9_000, 2_000)); // over 4 × the budget
/// assert!(!policy.should_store(3_000, 2_000)); // a page or two: use a cursor
/// assert!(toml::from_str::<HandlePolicy>("ttl = 600").is_err()); // unknown keys are refused
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HandlePolicy {
    /// How long a stored result lives, from when it is stored (reading it does not extend
    /// it). Default 1,800 (30 minutes): long enough for an agent to come back within a task.
    pub ttl_secs: u64,
    /// The largest result stored, in bytes of JSON. Default 8 MiB.
    pub max_bytes_per_payload: usize,
    /// Store when the full result exceeds this many times the tool's token budget, that is,
    /// when paging it would take more than this many calls. Default 4.
    pub store_when_over_budget_factor: f64,
}

impl Default for HandlePolicy {
    fn default() -> Self {
        HandlePolicy {
            ttl_secs: 1_800,
            max_bytes_per_payload: 8 << 20,
            store_when_over_budget_factor: 4.0,
        }
    }
}

impl HandlePolicy {
    /// The time to live.
    pub fn ttl(&self) -> Duration {
        Duration::from_secs(self.ttl_secs)
    }

    /// Whether a result of `full_tokens` should go behind a handle rather than be paged,
    /// under a budget of `budget_tokens`. Never for a result that fits; never when the
    /// factor is not a finite number.
    pub fn should_store(&self, full_tokens: usize, budget_tokens: usize) -> bool {
        let factor = self.store_when_over_budget_factor;
        full_tokens > budget_tokens
            && factor.is_finite()
            && full_tokens as f64 > factor * budget_tokens as f64
    }
}

/// Where stored results live. Small on purpose: a shared store (Redis, a database table)
/// implements these three calls, serialising [`StoredResult`] as JSON.
///
/// Implementations must make a handle presented by another owner indistinguishable from a
/// nonexistent one ([`HandleError::NotFound`]).
pub trait HandleStore: Send + Sync {
    /// Stores `result` for `owner` under a fresh handle, with the policy's time to live and
    /// per-result cap.
    fn put(
        &self,
        owner: &str,
        result: StoredResult,
        policy: &HandlePolicy,
    ) -> impl Future<Output = Result<Handle, HandleError>> + Send;

    /// The result stored under `handle`, if `owner` stored it and it has not expired.
    fn get(
        &self,
        owner: &str,
        handle: &Handle,
    ) -> impl Future<Output = Result<Arc<StoredResult>, HandleError>> + Send;

    /// Removes the result; `false` when there was none for this owner.
    fn remove(
        &self,
        owner: &str,
        handle: &Handle,
    ) -> impl Future<Output = Result<bool, HandleError>> + Send;
}

/// Whether serde_json keeps object keys in insertion order (its `preserve_order` feature,
/// which another crate of the build may turn on): its maps are then index maps, not B-trees.
fn preserves_order() -> bool {
    static ORDERED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ORDERED.get_or_init(|| {
        let mut m = serde_json::Map::new();
        m.insert("b".to_owned(), serde_json::Value::Null);
        m.insert("a".to_owned(), serde_json::Value::Null);
        m.keys().next().is_some_and(|k| k == "b")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The estimate a decoded-results cache is bounded by is within a tenth of what decoding
    /// really holds (every allocation counted as glibc lays it out), for records of short
    /// strings (tickets), long strings, lists and nested objects, whichever maps serde_json
    /// builds (B-trees; index maps when another crate of the build turns on
    /// `preserve_order`, as `cargo test --workspace` does).
    #[test]
    fn resident_bytes_is_what_a_decoded_result_holds() {
        let ticket = |i: usize| {
            serde_json::json!({
                "id": format!("tkt_{i:08x}"),
                "subject": format!("Invoice PDF export fails with error 500 ({i})"),
                "status": "open",
                "priority": "high",
                "assignee": "Priya Kowalski",
                "org": "Helios Logistics",
                "opened": "2026-02-27",
                "last_update": "2026-03-01",
            })
        };
        type Record = Box<dyn Fn(usize) -> serde_json::Value>;
        let shapes: Vec<(&str, Record)> = vec![
            ("tickets", Box::new(ticket)),
            (
                "long bodies",
                Box::new(|i| serde_json::json!({"id": i, "body": "lorem ipsum ".repeat(200)})),
            ),
            (
                "lists and nesting",
                Box::new(move |i| {
                    serde_json::json!({
                        "id": i,
                        "labels": ["bug", "p1", "backend", format!("team-{i}")],
                        "user": {"login": format!("user{i}"), "id": i * 7, "site_admin": false},
                        "ticket": ticket(i),
                    })
                }),
            ),
        ];
        for (what, record) in shapes {
            let records: Vec<serde_json::Value> = (0..2_000).map(record).collect();
            let json = serde_json::json!({
                "tool": "search",
                "name": "record",
                "plural": "records",
                "fields": [{"name": "id", "kind": "id", "max_tokens": null}],
                "skipped": [],
                "prose": [],
                "rank": null,
                "records": records,
                "created_at_unix": 7,
            })
            .to_string();
            let before = crate::alloc_count::held();
            let stored: StoredResult = serde_json::from_str(&json).unwrap();
            let held = usize::try_from(crate::alloc_count::held() - before).unwrap();
            let estimate = stored.resident_bytes();
            let ratio = estimate as f64 / held as f64;
            assert!(
                (0.9..=1.1).contains(&ratio),
                "{what}: estimated {estimate} bytes, decoding holds {held} (ratio {ratio:.2}; JSON \
                 {} bytes; insertion order kept: {})",
                json.len(),
                preserves_order()
            );
        }
    }

    #[test]
    fn a_result_stored_in_the_first_format_reads_back() {
        let old = r#"{"tool":"search_tickets","name":"ticket","plural":"tickets","fields":[{"name":"id","kind":"id","max_tokens":null},{"name":"subject","kind":"untrusted","max_tokens":40}],"skipped":["sla_due_at"],"prose":[{"field":0},{"text":": "},{"field":1}],"rank":[0,"desc"],"records":[{"id":"tkt_1","subject":"Hi"}],"created_at_unix":7}"#;
        let stored: StoredResult = serde_json::from_str(old).unwrap();
        assert_eq!(stored.record.id, Some(0));
        assert_eq!(
            stored.record.rank,
            Some(RankInfo {
                field: 0,
                order: Order::Desc,
                fold: None,
            })
        );
        assert_eq!(stored.record.fields[1].kind.max_tokens(), Some(40));
        // Written back, it is the same text: no optional key applies to these fields.
        assert_eq!(serde_json::to_string(&stored).unwrap(), old);
    }
}
