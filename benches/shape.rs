//! Benchmarks, measured side by side in one run.
//!
//! - `projection`: the derive's projection of 10,000 tickets to compact JSON against
//!   `serde_json::to_string` of hand-written output structs with the same fields and
//!   already-resolved names (and against a hand-written projection that builds them).
//! - `budget`: shaping 20,000 tickets into a 4,000-token budget against
//!   `serde_json::to_string` of the same 20,000 raw tickets.
//!
//! Run with `cargo bench --bench shape --features bench`; the ratios are printed at the end.

use shape_examples::desk;

#[path = "common.rs"]
mod common;
use common::{Names, names, raw, tickets};

use criterion::Criterion;
use desk::{OrgId, Ticket, UserId};
use serde::Serialize;
use std::collections::HashMap;
use std::hint::black_box;
use std::time::{Duration, Instant};
use toolshape::{
    __private::{CallEnv, Cx},
    __seams::fields::iso_date,
    Budget, Format, Shaper, ToolResult,
    fields::LegendSource,
    fields::short_id,
    tokens::Tiktoken,
    untrusted::UntrustedPolicy,
};

#[derive(Serialize)]
struct HandTicket<'a> {
    id: &'a str,
    subject: &'a str,
    status: &'a str,
    priority: &'a str,
    assignee: Option<&'a str>,
    org: &'a str,
    opened: &'a str,
    last_update: &'a str,
}

fn hand_project<'a>(
    t: &'a Ticket,
    users: &'a HashMap<UserId, String>,
    orgs: &'a HashMap<OrgId, String>,
) -> HandTicket<'a> {
    HandTicket {
        id: short_id(&t.id),
        subject: &t.subject,
        status: desk::STATUS.word(&t.status_code).unwrap_or("unknown"),
        priority: desk::PRIORITY.word(&t.priority).unwrap_or("unknown"),
        assignee: t
            .assignee_id
            .as_ref()
            .and_then(|u| users.get(u))
            .map(String::as_str),
        org: orgs
            .get(&t.organization_id)
            .map_or("unknown", String::as_str),
        opened: iso_date(&t.created_at).unwrap_or(&t.created_at),
        last_update: iso_date(&t.updated_at).unwrap_or(&t.updated_at),
    }
}

/// The derive's projection of every row into one JSON array, no intermediate value.
fn derive_json(rows: &[Ticket], cx: &Cx<'_, <Ticket as ToolResult>::Needs>) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    out.push(b'[');
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let mut ser = serde_json::Serializer::new(&mut out);
        if row.serialize_record(cx, &mut ser).is_err() {
            break;
        }
    }
    out.push(b']');
    out
}

/// Medians and fastest of `runs` timings of each of `fs`, taking turns, so a change in the
/// machine's load hits them alike (the fastest runs are the least disturbed on a busy machine).
fn timings<const N: usize>(
    runs: usize,
    mut fs: [&mut dyn FnMut(); N],
) -> ([Duration; N], [Duration; N]) {
    let mut times = vec![Vec::with_capacity(runs); N];
    for _ in 0..runs {
        for (f, t) in fs.iter_mut().zip(&mut times) {
            let start = Instant::now();
            f();
            t.push(start.elapsed());
        }
    }
    let (mut medians, mut fastest) = ([Duration::ZERO; N], [Duration::ZERO; N]);
    for (i, mut t) in times.into_iter().enumerate() {
        t.sort();
        medians[i] = t[runs / 2];
        fastest[i] = t[0];
    }
    (medians, fastest)
}

fn main() {
    let rows = tickets(10_000);
    let (users, orgs) = names(&rows);
    let tokenizer = Tiktoken::o200k_base();
    let policy = UntrustedPolicy::default();
    let env = CallEnv::new("search_tickets", &tokenizer, &policy, "bench");
    let lookups = (
        users.clone().into_iter().collect(),
        orgs.clone().into_iter().collect(),
    );
    let cx = Cx::<<Ticket as ToolResult>::Needs>::new(&lookups, &env);
    let prebuilt: Vec<HandTicket> = rows
        .iter()
        .map(|t| hand_project(t, &users, &orgs))
        .collect();
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&derive_json(&rows, &cx)).ok(),
        serde_json::to_value(&prebuilt).ok(),
        "the derive and the hand-written projection must produce the same JSON"
    );

    let big = tickets(20_000);
    let (busers, borgs) = names(&big);
    let resolver = Names {
        users: busers,
        orgs: borgs,
    };
    let shaper = Shaper::for_tool("search_tickets")
        .budget(Budget::tokens(4_000))
        .format(Format::Json);

    let mut c = Criterion::default()
        .configure_from_args()
        .measurement_time(Duration::from_secs(3))
        .sample_size(20);
    let mut g = c.benchmark_group("projection_10k");
    g.bench_function("derive", |b| {
        b.iter(|| black_box(derive_json(black_box(&rows), &cx)))
    });
    g.bench_function("hand_serialize_prebuilt", |b| {
        b.iter(|| black_box(serde_json::to_string(black_box(&prebuilt))))
    });
    g.bench_function("hand_project_and_serialize", |b| {
        b.iter(|| {
            let out: Vec<HandTicket> = rows
                .iter()
                .map(|t| hand_project(t, &users, &orgs))
                .collect();
            black_box(serde_json::to_string(&out))
        })
    });
    g.finish();
    let mut g = c.benchmark_group("budget_20k");
    g.bench_function("shape_into_4000_tokens", |b| {
        b.iter(|| black_box(shaper.shape_blocking((black_box(&big), &resolver))))
    });
    g.bench_function("serde_json_raw", |b| {
        b.iter(|| black_box(serde_json::to_string(&raw(black_box(&big)))))
    });
    g.finish();
    c.final_summary();

    // Ratios, measured side by side in this run (101 runs, taking turns).
    let ([derive, prebuilt_t, hand], [fd, fp, fh]) = timings(
        101,
        [
            &mut || drop(black_box(derive_json(&rows, &cx))),
            &mut || drop(black_box(serde_json::to_string(&prebuilt))),
            &mut || {
                let out: Vec<HandTicket> = rows
                    .iter()
                    .map(|t| hand_project(t, &users, &orgs))
                    .collect();
                drop(black_box(serde_json::to_string(&out)));
            },
        ],
    );
    let ([shape, raw_t], [fs, fr]) = timings(
        51,
        [
            &mut || drop(black_box(shaper.shape_blocking((&big, &resolver)))),
            &mut || drop(black_box(serde_json::to_string(&raw(&big)))),
        ],
    );
    println!(
        "projection 10k: derive {derive:?}, hand-written prebuilt {prebuilt_t:?}, hand-written project+serialize {hand:?}"
    );
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    println!(
        "ratio derive / hand prebuilt = {:.2}; derive / hand project+serialize = {:.2} \
         (medians; fastest runs: {:.2}; {:.2})",
        ratio(derive, prebuilt_t),
        ratio(derive, hand),
        ratio(fd, fp),
        ratio(fd, fh),
    );
    println!(
        "budget 20k into 4,000 tokens: shape {shape:?}, serde_json raw {raw_t:?}, ratio = {:.2} \
         (fastest runs: {:.2})",
        ratio(shape, raw_t),
        ratio(fs, fr),
    );
}
