use shape_runtime::{CallEnv, Cx, Legend, Tiktoken, ToolResult, UntrustedPolicy};
use std::time::Instant;
const L: Legend<u8> = Legend::new(&[(1, "new"), (2, "pending"), (3, "open")]);
#[derive(ToolResult)]
struct A {
    #[shape(show)]
    id: String,
    #[shape(show)]
    s: String,
    #[shape(show)]
    d: String,
}
#[derive(ToolResult)]
struct B {
    #[shape(id(short))]
    id: String,
    #[shape(show)]
    s: String,
    #[shape(show)]
    d: String,
}
#[derive(ToolResult)]
struct C {
    #[shape(show)]
    id: String,
    #[shape(untrusted(max_tokens = 40))]
    s: String,
    #[shape(show)]
    d: String,
}
#[derive(ToolResult)]
struct D {
    #[shape(show)]
    id: String,
    #[shape(show)]
    s: String,
    #[shape(date)]
    d: String,
}
#[derive(ToolResult)]
struct E {
    #[shape(show)]
    id: String,
    #[shape(show)]
    s: String,
    #[shape(show)]
    d: String,
    #[shape(legend = L)]
    c: u8,
}
fn run<T: ToolResult<Needs = ()>>(name: &str, rows: &[T]) {
    let tok = Tiktoken::o200k_base();
    let pol = UntrustedPolicy::default();
    let env = CallEnv::new("t", &tok, &pol, "n");
    let cx = Cx::<()>::new(&(), &env);
    let mut best = f64::MAX;
    for _ in 0..20 {
        let start = Instant::now();
        let mut out = Vec::with_capacity(rows.len() * 100);
        for r in rows {
            let mut ser = serde_json::Serializer::new(&mut out);
            r.serialize_record(&cx, &mut ser).unwrap();
            out.push(b',');
        }
        std::hint::black_box(&out);
        best = best.min(start.elapsed().as_secs_f64());
    }
    println!("{name}: {:.0} ns/record", best * 1e9 / rows.len() as f64);
}
#[path = "common/desk.rs"]
mod desk;
fn run_t(rows: &[desk::Ticket]) {
    let tok = Tiktoken::o200k_base();
    let pol = UntrustedPolicy::default();
    let env = CallEnv::new("t", &tok, &pol, "n");
    let mut users = std::collections::HashMap::new();
    let mut orgs = std::collections::HashMap::new();
    for t in rows {
        if let Some(u) = &t.assignee_id {
            users.insert(u.clone(), "Dana Cole".to_string());
        }
        orgs.insert(t.organization_id.clone(), "Northwind".to_string());
    }
    let names = (users, orgs);
    let cx = Cx::<<desk::Ticket as ToolResult>::Needs>::new(&names, &env);
    let mut best = f64::MAX;
    for _ in 0..20 {
        let start = Instant::now();
        let mut out = Vec::with_capacity(rows.len() * 100);
        for r in rows {
            let mut ser = serde_json::Serializer::new(&mut out);
            r.serialize_record(&cx, &mut ser).unwrap();
            out.push(b',');
        }
        std::hint::black_box(&out);
        best = best.min(start.elapsed().as_secs_f64());
    }
    println!("ticket: {:.0} ns/record", best * 1e9 / rows.len() as f64);
}
fn main() {
    let rows: Vec<desk::Ticket> = (0..10_000)
        .map(|i| desk::Ticket {
            id: format!("tkt_{:08x}-2d18-4b6e-9c05-8ab3f2e17d90", i),
            subject: "Card declined at checkout".into(),
            status_code: 3,
            priority: 2,
            assignee_id: Some(desk::UserId(format!(
                "usr_{:08x}-77aa-4f31-8d2c-1e5b6c9042af",
                i % 200
            ))),
            organization_id: desk::OrgId(format!("org_{:08x}-6b2a-4c77-9e10-3f7d51ac8802", i % 60)),
            created_at: "2026-02-11T09:14:22.481Z".into(),
            updated_at: "2026-02-14T16:02:07.113Z".into(),
            sla_due_at: None,
        })
        .collect();
    run_t(&rows);
    let n = 10_000;
    let id = |i: usize| format!("tkt_{:08x}-2d18-4b6e-9c05-8ab3f2e17d90", i);
    let s = "Card declined at checkout".to_string();
    let d = "2026-02-11T09:14:22.481Z".to_string();
    run(
        "show",
        &(0..n)
            .map(|i| A {
                id: id(i),
                s: s.clone(),
                d: d.clone(),
            })
            .collect::<Vec<_>>(),
    );
    run(
        "id(short)",
        &(0..n)
            .map(|i| B {
                id: id(i),
                s: s.clone(),
                d: d.clone(),
            })
            .collect::<Vec<_>>(),
    );
    run(
        "untrusted",
        &(0..n)
            .map(|i| C {
                id: id(i),
                s: s.clone(),
                d: d.clone(),
            })
            .collect::<Vec<_>>(),
    );
    run(
        "date",
        &(0..n)
            .map(|i| D {
                id: id(i),
                s: s.clone(),
                d: d.clone(),
            })
            .collect::<Vec<_>>(),
    );
    run(
        "legend",
        &(0..n)
            .map(|i| E {
                id: id(i),
                s: s.clone(),
                d: d.clone(),
                c: 3,
            })
            .collect::<Vec<_>>(),
    );
}
