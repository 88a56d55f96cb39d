//! The cursor codec and every paging mode that reads a cursor. The first byte picks the
//! kind of input: a body signed with the real key (so the parser behind the signature check
//! is reached), or the text as presented (base64, length, signature checks).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::Arc;
use toolshape::cursor::{CursorCodec, CursorKeys, QueryHash};
use toolshape::{Budget, Shaper, ToolResult};
use toolshape_fuzz::{events, lines, scores, well_formed, KEY};

fn page<T>(rows: &[T], tool: &str, codec: &Arc<CursorCodec>, query: QueryHash, cursor: &str, budget: usize, keep_order: bool)
where
    T: ToolResult,
    (): toolshape::resolve::Supplies<T::Needs>,
{
    let call = Shaper::for_tool(tool).budget(Budget::tokens(budget)).call().page_size(7);
    let call = if keep_order { call.keep_order() } else { call };
    match call.paginate(Arc::clone(codec), query, Some(cursor)) {
        Ok(call) => {
            if let Ok(shaped) = call.shape_blocking(rows) {
                well_formed(&shaped, rows.len());
            }
        }
        Err(e) => well_formed(&Shaper::for_tool(tool).cursor_error(&e), 0),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let codec = Arc::new(CursorCodec::new(CursorKeys::new(KEY).unwrap()));
    let budget = [0, 40, 300, 2_000, usize::MAX][usize::from(mode >> 4) % 5];
    for tool in ["events", "scores", "lines"] {
        let query = QueryHash::of(tool, &serde_json::json!({"q": "fuzz"})).unwrap();
        let cursor = if mode & 1 == 0 {
            // A signed body: the fingerprint is set to this query's, so every body is parsed.
            let mut body = rest.to_vec();
            if body.len() >= 6 {
                body[0] = 1;
                body[2..6].copy_from_slice(&query.as_bytes()[..4]);
            }
            toolshape::__private::sign_cursor_body(&codec, &body, &query)
        } else {
            String::from_utf8_lossy(rest).into_owned()
        };
        let _ = codec.decode(&cursor, &query);
        match tool {
            "events" => page(&events(), tool, &codec, query, &cursor, budget, false),
            "scores" => page(&scores(), tool, &codec, query, &cursor, budget, false),
            _ => {
                let rows = lines();
                page(&rows, tool, &codec, query, &cursor, budget, mode & 2 != 0);
                if let Ok(call) = Shaper::for_tool(tool)
                    .budget(Budget::tokens(budget))
                    .call()
                    .paginate(Arc::clone(&codec), query, Some(&cursor))
                {
                    let at = call.upstream_position();
                    let next = (mode & 4 != 0).then(|| "next-page".to_owned());
                    if let Ok(shaped) = call.upstream(at.page.as_deref(), next).shape_blocking(&rows) {
                        well_formed(&shaped, rows.len());
                    }
                }
            }
        }
    }
});
