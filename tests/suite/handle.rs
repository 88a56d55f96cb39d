//! Tests: handle.

use serde_json::{Map, Value, json};
use shape_runtime::handle::{
    Handle, HandleError, HandlePolicy, HandleStore, ManualClock, MemoryStore, StoreStats,
    StoredResult,
};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(future)
}

/// A result whose JSON length depends only on `n`'s digit count.
fn result(tool: &str, n: u64) -> StoredResult {
    let mut record = Map::new();
    record.insert("n".into(), json!(n));
    StoredResult {
        records: vec![record],
        created_at_unix: 0,
        ..StoredResult::new(tool, "ticket", "tickets")
    }
}

fn policy(ttl_secs: u64) -> HandlePolicy {
    HandlePolicy {
        ttl_secs,
        ..HandlePolicy::default()
    }
}

fn n_of(result: &StoredResult) -> Option<u64> {
    result
        .records
        .first()
        .and_then(|r| r.get("n"))
        .and_then(Value::as_u64)
}

#[test]
fn a_handle_presented_by_another_owner_is_not_found() {
    let clock = ManualClock::new(0);
    let store = MemoryStore::new(1 << 20).with_clock(clock.clone());
    block_on(async {
        let handle = store
            .put("alice", result("search", 1), &policy(60))
            .await
            .expect("stored");
        let never_issued = Handle::random().expect("randomness");

        let foreign = store
            .get("bob", &handle)
            .await
            .expect_err("bob read alice's result");
        let missing = store
            .get("bob", &never_issued)
            .await
            .expect_err("found a handle never issued");
        assert_eq!(foreign, HandleError::NotFound);
        assert_eq!(foreign.to_string(), missing.to_string());
        assert_eq!(store.remove("bob", &handle).await, Ok(false));
        assert_eq!(
            store
                .get("alice", &handle)
                .await
                .ok()
                .as_deref()
                .and_then(n_of),
            Some(1)
        );

        // Once expired, alice is told so; bob still learns nothing.
        clock.advance(Duration::from_secs(60));
        assert!(matches!(
            store.get("alice", &handle).await,
            Err(HandleError::Expired { .. })
        ));
        assert_eq!(
            store.get("bob", &handle).await.err(),
            Some(HandleError::NotFound)
        );

        assert_eq!(store.remove("alice", &never_issued).await, Ok(false));
    });
}

#[test]
fn an_expired_handle_says_so_and_names_the_tool_to_call() {
    let clock = ManualClock::new(1_700_000_000_000);
    let store = MemoryStore::new(1 << 20).with_clock(clock.clone());
    block_on(async {
        let handle = store
            .put("u", result("search_tickets", 1), &policy(60))
            .await
            .expect("stored");
        clock.advance(Duration::from_millis(59_999));
        assert!(store.get("u", &handle).await.is_ok());
        clock.advance(Duration::from_millis(1));
        let err = store
            .get("u", &handle)
            .await
            .expect_err("read after its time to live");
        assert_eq!(
            err,
            HandleError::Expired {
                tool: "search_tickets".into(),
                ttl_secs: 60
            }
        );
        assert!(
            err.to_string()
                .contains("call search_tickets again to get a fresh handle"),
            "{err}"
        );
    });
    let stats = store.stats();
    assert_eq!(
        (stats.created, stats.present, stats.expired, stats.bytes),
        (1, 0, 1, 0)
    );
}

#[test]
fn the_byte_cap_evicts_the_least_recently_used() {
    let size = result("t", 1).json_len();
    let store = MemoryStore::new(3 * size + size / 2);
    block_on(async {
        let p = policy(600);
        let a = store.put("u", result("t", 1), &p).await.expect("a");
        let b = store.put("u", result("t", 2), &p).await.expect("b");
        let c = store.put("u", result("t", 3), &p).await.expect("c");
        store
            .get("u", &a)
            .await
            .expect("a is read, so b is now the least recently used");
        let d = store.put("u", result("t", 4), &p).await.expect("d");

        assert_eq!(
            store.get("u", &b).await.err(),
            Some(HandleError::Evicted { tool: "t".into() })
        );
        for (handle, n) in [(a, 1), (c, 3), (d, 4)] {
            assert_eq!(
                store.get("u", &handle).await.ok().as_deref().and_then(n_of),
                Some(n)
            );
        }
        // Now d, a and c were read in that order… then c and a again: d is the oldest use.
        store.get("u", &c).await.expect("c");
        store.get("u", &a).await.expect("a");
        let e = store.put("u", result("t", 5), &p).await.expect("e");
        assert!(matches!(
            store.get("u", &d).await,
            Err(HandleError::Evicted { .. })
        ));
        assert!(store.get("u", &e).await.is_ok());
    });
    let stats = store.stats();
    assert_eq!((stats.created, stats.present, stats.evicted), (5, 3, 2));
    assert_eq!(stats.bytes, 3 * size);
}

#[test]
fn a_result_over_the_cap_is_refused_with_its_size() {
    let big = result("t", 12_345);
    let bytes = big.json_len();
    assert_eq!(bytes, serde_json::to_vec(&big).expect("serialises").len());
    block_on(async {
        let store = MemoryStore::new(1 << 20);
        let small = HandlePolicy {
            max_bytes_per_payload: bytes - 1,
            ..HandlePolicy::default()
        };
        let err = store
            .put("u", big.clone(), &small)
            .await
            .expect_err("over the per-result cap");
        assert_eq!(
            err,
            HandleError::TooLarge {
                bytes,
                max_bytes: bytes - 1
            }
        );
        assert!(
            err.to_string().contains("page it with a cursor instead"),
            "{err}"
        );
        let exact = HandlePolicy {
            max_bytes_per_payload: bytes,
            ..HandlePolicy::default()
        };
        assert!(store.put("u", big.clone(), &exact).await.is_ok());

        // The store's own total cap bounds one result too.
        let tiny = MemoryStore::new(bytes - 1);
        let err = tiny
            .put("u", big, &HandlePolicy::default())
            .await
            .expect_err("over the store cap");
        assert_eq!(
            err,
            HandleError::TooLarge {
                bytes,
                max_bytes: bytes - 1
            }
        );
        assert_eq!(
            tiny.stats(),
            StoreStats {
                rejected: 1,
                ..StoreStats::default()
            }
        );
    });
}

#[test]
fn eight_threads_lose_nothing_the_policy_did_not_drop() {
    const THREADS: u64 = 8;
    const OPS: u64 = 1_000;
    let clock = ManualClock::new(0);
    // Room for about a quarter of everything created, so eviction happens under contention.
    let size = result("t", 10_000_000).json_len();
    let store = Arc::new(MemoryStore::new(size * 2_000).with_clock(clock.clone()));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(8)
        .build()
        .expect("runtime");

    let tasks: Vec<_> = (0..THREADS)
        .map(|t| {
            let (store, clock) = (Arc::clone(&store), clock.clone());
            runtime.spawn(async move {
                let owner = format!("owner-{t}");
                // Even threads' results expire quickly; odd threads' outlive the test, so
                // they alone overflow the byte cap.
                let p = policy(if t % 2 == 0 { 10 } else { 1_000_000 });
                let mut mine = Vec::new();
                let mut removed = 0u64;
                for i in 0..OPS {
                    let n = 10_000_000 + t * OPS + i;
                    let handle = store.put(&owner, result("t", n), &p).await.expect("stored");
                    match store.get(&owner, &handle).await {
                        Ok(r) => assert_eq!(n_of(&r), Some(n), "another result under this handle"),
                        Err(e) => assert!(matches!(
                            e,
                            HandleError::Evicted { .. } | HandleError::Expired { .. }
                        )),
                    }
                    assert_eq!(
                        store.get("intruder", &handle).await.err(),
                        Some(HandleError::NotFound)
                    );
                    if i % 10 == 0 && store.remove(&owner, &handle).await == Ok(true) {
                        removed += 1;
                    } else {
                        mine.push((handle, n));
                    }
                    if t == 0 && i % 100 == 99 {
                        clock.advance(Duration::from_secs(5));
                    }
                    tokio::task::yield_now().await;
                }
                (owner, mine, removed)
            })
        })
        .collect();
    let outcomes: Vec<_> = runtime.block_on(async {
        let mut out = Vec::new();
        for task in tasks {
            out.push(task.await.expect("task finished"));
        }
        out
    });

    // One more short-lived result, then time passes: at least this one has expired.
    let mut outcomes = outcomes;
    let last =
        block_on(store.put("owner-x", result("t", 99_999_999), &policy(10))).expect("stored");
    outcomes.push(("owner-x".into(), vec![(last, 99_999_999)], 0));
    clock.advance(Duration::from_secs(10));

    let (mut present, mut evicted, mut expired, mut removed) = (0u64, 0u64, 0u64, 0u64);
    let mut handles = HashSet::new();
    block_on(async {
        for (owner, mine, r) in &outcomes {
            removed += r;
            for (handle, n) in mine {
                assert!(handles.insert(*handle), "a handle was issued twice");
                match store.get(owner, handle).await {
                    Ok(r) => {
                        assert_eq!(n_of(&r), Some(*n));
                        present += 1;
                    }
                    Err(HandleError::Evicted { .. }) => evicted += 1,
                    Err(HandleError::Expired { .. }) => expired += 1,
                    Err(other) => panic!("lost a result: {other}"),
                }
            }
        }
    });
    let stats = store.stats();
    assert_eq!(stats.created, THREADS * OPS + 1);
    assert_eq!(
        (stats.present, stats.evicted, stats.expired, stats.removed),
        (present, evicted, expired, removed)
    );
    assert_eq!(
        stats.created,
        stats.present + stats.evicted + stats.expired + stats.removed
    );
    assert_eq!(stats.bytes, size * stats.present as usize);
    assert!(stats.bytes <= size * 2_000);
    assert!(evicted > 0 && expired > 0 && removed > 0, "{stats:?}");
}

#[test]
fn tombstones_are_bounded() {
    let clock = ManualClock::new(0);
    let store = MemoryStore::new(1 << 20)
        .with_clock(clock.clone())
        .with_max_tombstones(5);
    block_on(async {
        let mut handles = Vec::new();
        for n in 0..20 {
            handles.push(
                store
                    .put("u", result("t", n), &policy(10))
                    .await
                    .expect("stored"),
            );
        }
        clock.advance(Duration::from_secs(10));
        let stats = store.stats();
        assert_eq!((stats.expired, stats.tombstones, stats.present), (20, 5, 0));
        // The most recent five are remembered; older ones are simply not found.
        assert!(matches!(
            store.get("u", &handles[19]).await,
            Err(HandleError::Expired { .. })
        ));
        assert!(matches!(
            store.get("u", &handles[15]).await,
            Err(HandleError::Expired { .. })
        ));
        assert_eq!(
            store.get("u", &handles[14]).await.err(),
            Some(HandleError::NotFound)
        );
    });
    let no_tombstones = MemoryStore::new(1 << 20)
        .with_clock(clock.clone())
        .with_max_tombstones(0);
    block_on(async {
        let handle = no_tombstones
            .put("u", result("t", 1), &policy(1))
            .await
            .expect("stored");
        clock.advance(Duration::from_secs(1));
        assert_eq!(
            no_tombstones.get("u", &handle).await.err(),
            Some(HandleError::NotFound)
        );
    });
    assert_eq!(no_tombstones.stats().tombstones, 0);
}

#[test]
fn handles_are_random_and_parse_strictly() {
    let handles: HashSet<Handle> = (0..1_000)
        .map(|_| Handle::random().expect("randomness"))
        .collect();
    assert_eq!(handles.len(), 1_000);
    for handle in handles.iter().take(50) {
        let text = handle.to_string();
        assert!(text.starts_with("h_") && text.len() == 24, "{text}");
        assert_eq!(text.parse::<Handle>(), Ok(*handle));
        assert_eq!(format!("  {text}\n").parse::<Handle>(), Ok(*handle));
    }
    let valid = Handle::from_bytes([0xab; 16]).to_string();
    for bad in [
        "",
        "h_",
        "x_q6urq6urq6urq6urq6urqw",
        &valid[..23],
        &format!("{valid}A"),
        "h_q6urq6urq6urq6urq6urq+",
        "h_q6urq6urq6urq6urq6urqx", // trailing bits set: not a canonical encoding
        "h_ééééééééééé",
    ] {
        assert_eq!(bad.parse::<Handle>(), Err(HandleError::NotFound), "{bad:?}");
    }
}

#[test]
fn a_stored_result_survives_json_and_keeps_its_size() {
    let mut stored = result("search", 7);
    stored.rank = Some((0, shape_runtime::Order::Desc));
    stored.prose = Some(vec![
        shape_runtime::handle::StoredSegment::Field(0),
        shape_runtime::handle::StoredSegment::Text(" open".into()),
    ]);
    let json = serde_json::to_string(&stored).expect("serialises");
    assert_eq!(stored.json_len(), json.len());
    let back: StoredResult = serde_json::from_str(&json).expect("deserialises");
    assert_eq!(back, stored);
}

#[test]
fn the_policy_stores_only_results_far_over_budget() {
    let policy = HandlePolicy::default();
    assert!(!policy.should_store(8_000, 2_000));
    assert!(policy.should_store(8_001, 2_000));
    let eager = HandlePolicy {
        store_when_over_budget_factor: 0.5,
        ..policy
    };
    assert!(
        !eager.should_store(1_999, 2_000),
        "a result that fits is never stored"
    );
    let broken = HandlePolicy {
        store_when_over_budget_factor: f64::NAN,
        ..policy
    };
    assert!(!broken.should_store(usize::MAX, 1));
}
