//! `open_result` arguments: any bytes that parse as JSON, against a stored result. A
//! `"handle": "H"` is replaced by the real handle, so queries reach validation and paging;
//! a `"cursor"` whose text starts with `S:` is replaced by the rest signed for the query.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::{Arc, OnceLock};
use toolshape::cursor::{CursorCodec, CursorKeys, QueryHash};
use toolshape::handle::{HandlePolicy, Keep, MemoryStore, OpenResult};
use toolshape::{Budget, Day, Shaper};
use toolshape_fuzz::{events_n, well_formed, KEY};

struct World {
    rt: tokio::runtime::Runtime,
    store: MemoryStore,
    handle: String,
    codec: Arc<CursorCodec>,
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let store = MemoryStore::default();
        let policy = HandlePolicy::default();
        let rows = events_n(240);
        let shaped = rt
            .block_on(Shaper::for_tool("events").budget(Budget::tokens(150)).shape_or_store(
                &rows,
                &(),
                Keep::new(&store, "alice", &policy).today(Day::parse("2026-11-30").unwrap()),
            ))
            .unwrap();
        let handle = shaped.frame().omitted.handle.clone().expect("stored");
        let codec = Arc::new(CursorCodec::new(CursorKeys::new(KEY).unwrap()));
        World { rt, store, handle, codec }
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&b, rest)) = data.split_first() else { return };
    let Ok(mut args) = serde_json::from_slice::<serde_json::Value>(rest) else { return };
    let w = world();
    if let Some(map) = args.as_object_mut() {
        if map.get("handle").is_some_and(|h| h == "H") {
            map.insert("handle".into(), w.handle.clone().into());
        }
        if let Some(body) = map.get("cursor").and_then(|c| c.as_str()).and_then(|c| c.strip_prefix("S:")) {
            let body = body.as_bytes().to_vec();
            let mut unpaged = map.clone();
            unpaged.remove("cursor");
            if let Ok(query) = QueryHash::of("open_result", &unpaged) {
                let cursor = toolshape::__private::sign_cursor_body(&w.codec, &body, &query);
                map.insert("cursor".into(), cursor.into());
            }
        }
    }
    let budget = [30, 200, 1_500][usize::from(b) % 3];
    let open = OpenResult::new(&w.store, Arc::clone(&w.codec))
        .shaper(Shaper::for_tool("open_result").budget(Budget::tokens(budget)));
    let shaped = w.rt.block_on(open.call_on("alice", args, Day::parse("2026-11-30").unwrap()));
    well_formed(&shaped, 200);
    let report = shaped.report();
    assert!(report.over_budget || report.tokens.text.max(report.tokens.structured) <= budget, "{report:?}");
});
