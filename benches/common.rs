//! The benches' shared data: the support desk's tickets in any number, the names their ids
//! resolve to, and the raw JSON:API resources they come from.

#![allow(dead_code)]

use serde::Serialize;
use shape_examples::desk::{self, OrgId, Ticket, UserId};
use std::collections::HashMap;

pub fn tickets(n: usize) -> Vec<Ticket> {
    let subjects = [
        "Card declined at checkout",
        "Refund not received after cancellation",
        "Cannot reset password",
        "Export to CSV times out",
    ];
    (0..n)
        .map(|i| Ticket {
            id: format!("tkt_{:08x}-2d18-4b6e-9c05-8ab3f2e17d90", i * 7919),
            subject: subjects[i % 4].to_owned(),
            status_code: (i % 5 + 1) as u8,
            priority: (i % 3 + 1) as u8,
            assignee_id: (i % 9 != 0)
                .then(|| UserId(format!("usr_{:08x}-77aa-4f31-8d2c-1e5b6c9042af", i % 200))),
            organization_id: OrgId(format!("org_{:08x}-6b2a-4c77-9e10-3f7d51ac8802", i % 60)),
            created_at: format!("2026-02-{:02}T09:14:22.481Z", i % 28 + 1),
            updated_at: format!("2026-03-{:02}T16:02:07.113Z", (i * 13) % 28 + 1),
            sla_due_at: None,
        })
        .collect()
}

pub fn names(rows: &[Ticket]) -> (HashMap<UserId, String>, HashMap<OrgId, String>) {
    let mut users = HashMap::new();
    let mut orgs = HashMap::new();
    for t in rows {
        if let Some(u) = &t.assignee_id {
            users
                .entry(u.clone())
                .or_insert_with(|| format!("User {}", &u.0[4..8]));
        }
        orgs.entry(t.organization_id.clone())
            .or_insert_with(|| format!("Org {}", &t.organization_id.0[4..8]));
    }
    (users, orgs)
}

#[derive(Serialize)]
pub struct RawResource<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    id: &'a str,
    attributes: RawAttributes<'a>,
    relationships: RawRelationships<'a>,
    links: RawLinks,
}
#[derive(Serialize)]
struct RawAttributes<'a> {
    subject: &'a str,
    status_code: u8,
    priority: u8,
    created_at: &'a str,
    updated_at: &'a str,
}
#[derive(Serialize)]
struct RawRelationships<'a> {
    assignee: RawRelation<'a>,
    organization: RawRelation<'a>,
}
#[derive(Serialize)]
struct RawRelation<'a> {
    data: Option<RawLinkage<'a>>,
}
#[derive(Serialize)]
struct RawLinkage<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    id: &'a str,
}
#[derive(Serialize)]
struct RawLinks {
    #[serde(rename = "self")]
    self_link: String,
}

pub fn raw(rows: &[Ticket]) -> Vec<RawResource<'_>> {
    rows.iter()
        .map(|t| RawResource {
            kind: "ticket",
            id: &t.id,
            attributes: RawAttributes {
                subject: &t.subject,
                status_code: t.status_code,
                priority: t.priority,
                created_at: &t.created_at,
                updated_at: &t.updated_at,
            },
            relationships: RawRelationships {
                assignee: RawRelation {
                    data: t.assignee_id.as_ref().map(|u| RawLinkage {
                        kind: "user",
                        id: &u.0,
                    }),
                },
                organization: RawRelation {
                    data: Some(RawLinkage {
                        kind: "organization",
                        id: &t.organization_id.0,
                    }),
                },
            },
            links: RawLinks {
                self_link: format!("https://api.example.com/v1/tickets/{}", t.id),
            },
        })
        .collect()
}

pub struct Names {
    pub users: HashMap<UserId, String>,
    pub orgs: HashMap<OrgId, String>,
}
impl toolshape::resolve::Resolve<desk::Users> for Names {
    fn resolve(
        &self,
        keys: &[UserId],
    ) -> impl Future<Output = Result<HashMap<UserId, String>, toolshape::resolve::ResolveError>> + Send
    {
        toolshape::resolve::answer(keys, |k| self.users.get(k).cloned())
    }
}
impl toolshape::resolve::Resolve<desk::Orgs> for Names {
    fn resolve(
        &self,
        keys: &[OrgId],
    ) -> impl Future<Output = Result<HashMap<OrgId, String>, toolshape::resolve::ResolveError>> + Send
    {
        toolshape::resolve::answer(keys, |k| self.orgs.get(k).cloned())
    }
}
