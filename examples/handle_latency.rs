//! How long opening a handle takes: a 1 MB stored result opened 50 times from each store,
//! median reported, over loopback for Redis (with the replica's decoded cache, the default,
//! and without it). Also what Redis holds per handle.
//!
//! Run with `cargo run --release --example handle_latency --features redis`; set
//! `SHAPE_REDIS_URL` (e.g. `redis://127.0.0.1:6379/`) to measure the Redis store as well.

use serde_json::{Map, json};
use std::time::{Duration, Instant};
use toolshape::handle::{Handle, RedisStore};
use toolshape::handle::{HandlePolicy, HandleStore, MemoryStore, StoredResult};

const RUNS: usize = 50;
const TARGET_BYTES: usize = 1_000_000;

/// Ticket-like records until the JSON is just over 1 MB.
fn payload() -> StoredResult {
    let mut result = StoredResult::new("search_tickets", "ticket", "tickets");
    let mut i = 0u64;
    while result.json_len() < TARGET_BYTES {
        for _ in 0..100 {
            let mut record = Map::new();
            record.insert("id".into(), json!(format!("tkt_{i:08x}")));
            record.insert(
                "subject".into(),
                json!(format!(
                    "Export to CSV fails for workspace {i} after the upgrade"
                )),
            );
            record.insert(
                "status".into(),
                json!(["open", "pending", "closed"][i as usize % 3]),
            );
            record.insert("assignee".into(), json!("Ana Lima"));
            record.insert("org".into(), json!("Northwind"));
            record.insert("opened".into(), json!("2025-03-14"));
            result.records.push(record);
            i += 1;
        }
    }
    result
}

/// Median, fastest and slowest of `RUNS` opens.
async fn time_opens<S: HandleStore>(
    store: &S,
    handle: &Handle,
) -> Result<[Duration; 3], Box<dyn std::error::Error>> {
    let mut times = Vec::with_capacity(RUNS);
    // One open first, so connection set-up is not counted.
    store.get("bench", handle).await?;
    for _ in 0..RUNS {
        let started = Instant::now();
        let opened = store.get("bench", handle).await?;
        times.push(started.elapsed());
        std::hint::black_box(opened);
    }
    times.sort();
    Ok([times[RUNS / 2], times[0], times[RUNS - 1]])
}

fn show(store: &str, [median, fastest, slowest]: [Duration; 3]) {
    println!(
        "{store:<14} median {:>9.1} µs   (fastest {:.1} µs, slowest {:.1} µs, {RUNS} runs)",
        median.as_secs_f64() * 1e6,
        fastest.as_secs_f64() * 1e6,
        slowest.as_secs_f64() * 1e6
    );
}

/// This process's resident memory in bytes, where the system says (Linux), to show what a
/// decoded result takes against its JSON.
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let before = resident_bytes();
    let result = payload();
    let after = resident_bytes();
    let bytes = result.json_len();
    println!(
        "payload: {} records, {bytes} bytes of JSON",
        result.records.len()
    );
    if let (Some(before), Some(after)) = (before, after) {
        // What a replica's decoded cache holds per result, against the JSON its bound counts.
        println!(
            "decoded in memory: about {} bytes ({:.1}× the JSON)",
            after.saturating_sub(before),
            after.saturating_sub(before) as f64 / bytes as f64
        );
    }
    println!();
    let policy = HandlePolicy::default();

    let memory = MemoryStore::default();
    let handle = memory.put("bench", result.clone(), &policy).await?;
    show("MemoryStore", time_opens(&memory, &handle).await?);

    let Some(url) = std::env::var("SHAPE_REDIS_URL")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        println!("RedisStore     skipped: SHAPE_REDIS_URL is not set");
        return Ok(());
    };
    let prefix = format!("shape-bench-{}", Handle::random()?);
    let redis = RedisStore::builder(&url)
        .key_prefix(&prefix)
        .connect()
        .await?;
    let handle = redis.put("bench", result, &policy).await?;
    // The default keeps recently opened results decoded: an open checks the header in Redis
    // (owner, expiry, removal) and returns the decoded result. Without the cache, every open
    // fetches and decodes the JSON.
    show("RedisStore", time_opens(&redis, &handle).await?);
    let uncached = RedisStore::builder(&url)
        .key_prefix(&prefix)
        .decoded_cache_bytes(0)
        .connect()
        .await?;
    show("  no cache", time_opens(&uncached, &handle).await?);

    // The same bytes fetched raw, to split transfer from decoding.
    let mut raw = redis::Client::open(url.as_str())?
        .get_multiplexed_async_connection()
        .await?;
    let key = format!("{prefix}:{{{handle}}}:r");
    let tombstone = format!("{prefix}:{{{handle}}}:t");
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let started = Instant::now();
        let value: Vec<u8> = redis::cmd("GET").arg(&key).query_async(&mut raw).await?;
        times.push(started.elapsed());
        std::hint::black_box(value);
    }
    times.sort();
    show("  raw GET", [times[RUNS / 2], times[0], times[RUNS - 1]]);
    println!("  (the rest of an uncached open is decoding the JSON into a StoredResult)");

    let usage = |key: String| {
        let mut cmd = redis::cmd("MEMORY");
        cmd.arg("USAGE").arg(key).arg("SAMPLES").arg(0);
        cmd
    };
    let result_bytes: u64 = usage(key.clone()).query_async(&mut raw).await?;
    let tombstone_bytes: u64 = usage(tombstone.clone()).query_async(&mut raw).await?;
    let small = redis
        .put(
            "bench",
            StoredResult::new("search_tickets", "ticket", "tickets"),
            &policy,
        )
        .await?;
    let small_key = format!("{prefix}:{{{small}}}:r");
    let small_bytes: u64 = usage(small_key.clone()).query_async(&mut raw).await?;
    let small_json = StoredResult::new("search_tickets", "ticket", "tickets").json_len();
    println!(
        "\nRedis memory per handle (MEMORY USAGE):\n  \
         1 MB result: {result_bytes} bytes for {bytes} bytes of JSON (+{} bytes)\n  \
         empty result: {small_bytes} bytes for {small_json} bytes of JSON (+{} bytes)\n  \
         tombstone: {tombstone_bytes} bytes (tool \"search_tickets\")",
        result_bytes.saturating_sub(bytes as u64),
        small_bytes.saturating_sub(small_json as u64),
    );

    let _: () = redis::cmd("DEL")
        .arg(&key)
        .arg(&tombstone)
        .arg(&small_key)
        .arg(format!("{prefix}:{{{small}}}:t"))
        .query_async(&mut raw)
        .await?;
    Ok(())
}
