//! What the fuzz targets share: record types of each paging kind, their rows, and the checks
//! every answer must pass (the envelope parses into its five keys, an error says how to
//! recover and echoes nothing invisible).

use toolshape::{Shaped, ToolResult};

/// The signing key of every target (the real codec, so bodies reach the decoder's parser).
pub const KEY: &[u8] = b"fuzzing key, at least 16 bytes..";

/// Ranked by an integer, with integer ids: keyset cursors.
#[derive(Debug, Clone, ToolResult)]
#[shape(name = "event", plural = "events", prose = "{id} at {at}: {what}")]
pub struct Event {
    #[shape(id)]
    pub id: u64,
    #[shape(rank = desc)]
    pub at: i64,
    #[shape(untrusted(max_tokens = 20))]
    pub what: String,
}

/// Ranked by a float, with text ids.
#[derive(Debug, Clone, ToolResult)]
#[shape(name = "score", plural = "scores", prose = "{id}: {value} {label}")]
pub struct Score {
    #[shape(id)]
    pub id: String,
    #[shape(rank = asc)]
    pub value: f64,
    #[shape(show)]
    pub label: String,
}

/// Neither ranked nor identified: count cursors, and upstream paging.
#[derive(Debug, Clone, ToolResult)]
#[shape(name = "line", plural = "lines", prose = "{n}: {text}")]
pub struct Line {
    #[shape(show)]
    pub n: u32,
    #[shape(show)]
    pub text: String,
}

pub fn events() -> Vec<Event> {
    events_n(30)
}

/// `n` events with distinct ids, several sharing each rank value.
pub fn events_n(n: u64) -> Vec<Event> {
    (0..n)
        .map(|i| Event {
            id: i * 7 + 1,
            at: 1_700_000_000 - (i as i64 % 13) * 60,
            what: format!("deploy {i} finished"),
        })
        .collect()
}

pub fn scores() -> Vec<Score> {
    (0..30)
        .map(|i| Score {
            id: format!("s_{i:03}"),
            value: f64::from(i % 9) / 4.0,
            label: format!("run {i}"),
        })
        .collect()
}

pub fn lines() -> Vec<Line> {
    (0..30)
        .map(|n| Line {
            n,
            text: format!("line {n} of the log"),
        })
        .collect()
}

/// Characters a reader cannot see or that reorder what they see.
pub fn invisible(c: char) -> bool {
    c.is_control() && c != '\n'
        || matches!(c as u32,
            0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x2069
            | 0xFEFF | 0xE0000..=0xE007F | 0x180E | 0x061C)
}

/// The checks every answer passes, whatever the input.
pub fn well_formed(shaped: &Shaped, rows: usize) {
    let value = shaped.structured();
    let keys: Vec<&str> = value
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(keys, ["status", "summary", "data", "omitted", "next"], "{value}");
    assert!(value["data"].as_array().is_some_and(|d| d.len() <= rows), "{value}");
    if shaped.is_error() {
        let summary = shaped.summary();
        assert!(summary.contains("call") || summary.contains("again"), "{summary}");
        assert!(!summary.chars().any(invisible), "{summary:?}");
    }
}
