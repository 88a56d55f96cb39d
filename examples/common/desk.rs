//! The support desk of the seed document: a JSON:API page of tickets, the domain struct it
//! is loaded into, and a directory that resolves user and organization ids in batches while
//! counting its calls. Shared by the examples, the tests and the benchmarks.

use serde::Deserialize;
use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use toolshape::{
    Format, Legend, ShapeError, Shaped, Shaper, ToolResult,
    resolve::{Resolve, ResolveError, Resolver},
};

/// The seed's page: its ticket element verbatim first, then 11 more of the same shape.
pub const PAGE: &str = include_str!("../data/support_desk_page.json");
/// Display names for the page's user and organization ids.
pub const DIRECTORY: &str = include_str!("../data/support_desk_directory.json");

pub const STATUS: Legend<u8> = Legend::new(&[
    (1, "new"),
    (2, "pending"),
    (3, "open"),
    (4, "resolved"),
    (5, "closed"),
]);
pub const PRIORITY: Legend<u8> = Legend::new(&[(1, "low"), (2, "high"), (3, "urgent")]);

#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize)]
pub struct UserId(pub String);
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize)]
pub struct OrgId(pub String);

impl fmt::Display for UserId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl fmt::Display for OrgId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

pub struct Users;
impl Resolver for Users {
    type Key = UserId;
    const NAME: &'static str = "users";
    const NOUN: &'static str = "user";
}

pub struct Orgs;
impl Resolver for Orgs {
    type Key = OrgId;
    const NAME: &'static str = "orgs";
    const NOUN: &'static str = "organization";
}

/// The domain struct the service already has.
#[derive(Debug, Clone, ToolResult)]
#[shape(
    name = "ticket",
    plural = "tickets",
    prose = "{id} {subject}: {status}, {priority} priority, {assignee}, {org}, opened {opened}, updated {last_update}"
)]
pub struct Ticket {
    #[shape(id(short))]
    pub id: String,
    #[shape(untrusted(max_tokens = 40))]
    pub subject: String,
    #[shape(legend = STATUS, rename = "status")]
    pub status_code: u8,
    #[shape(legend = PRIORITY)]
    pub priority: u8,
    #[shape(resolve = Users, rename = "assignee", absent = "unassigned")]
    pub assignee_id: Option<UserId>,
    #[shape(resolve = Orgs, rename = "org")]
    pub organization_id: OrgId,
    #[shape(date, rename = "opened")]
    pub created_at: String,
    #[shape(date, rename = "last_update", rank = desc)]
    pub updated_at: String,
    #[shape(skip)]
    pub sla_due_at: Option<String>,
}

#[derive(Deserialize)]
struct Document {
    data: Vec<Resource>,
}

#[derive(Deserialize)]
struct Resource {
    id: String,
    attributes: Attributes,
    relationships: Relationships,
}

#[derive(Deserialize)]
struct Attributes {
    subject: String,
    status_code: u8,
    priority: u8,
    created_at: String,
    updated_at: String,
}

#[derive(Deserialize)]
struct Relationships {
    assignee: Relation,
    organization: Relation,
}

#[derive(Deserialize)]
struct Relation {
    data: Option<Linkage>,
}

#[derive(Deserialize)]
struct Linkage {
    id: String,
}

/// Loads a JSON:API page into domain structs.
pub fn parse_page(json: &str) -> Result<Vec<Ticket>, String> {
    let doc: Document = serde_json::from_str(json).map_err(|e| e.to_string())?;
    doc.data
        .into_iter()
        .map(|r| {
            let org = r
                .relationships
                .organization
                .data
                .ok_or_else(|| format!("ticket {} has no organization", r.id))?;
            Ok(Ticket {
                id: r.id,
                subject: r.attributes.subject,
                status_code: r.attributes.status_code,
                priority: r.attributes.priority,
                assignee_id: r.relationships.assignee.data.map(|l| UserId(l.id)),
                organization_id: OrgId(org.id),
                created_at: r.attributes.created_at,
                updated_at: r.attributes.updated_at,
                sla_due_at: None,
            })
        })
        .collect()
}

/// An in-memory directory that answers batches and counts the calls it gets.
#[derive(Default)]
pub struct Directory {
    pub users: HashMap<String, String>,
    pub orgs: HashMap<String, String>,
    /// (resolver, keys asked) for every call.
    pub calls: Mutex<Vec<(&'static str, usize)>>,
}

#[derive(Deserialize)]
struct DirectoryFile {
    users: HashMap<String, String>,
    orgs: HashMap<String, String>,
}

impl Directory {
    pub fn seed() -> Directory {
        let file: DirectoryFile = serde_json::from_str(DIRECTORY).unwrap_or(DirectoryFile {
            users: HashMap::new(),
            orgs: HashMap::new(),
        });
        Directory {
            users: file.users,
            orgs: file.orgs,
            calls: Mutex::new(Vec::new()),
        }
    }

    pub fn calls(&self) -> Vec<(&'static str, usize)> {
        self.calls.lock().map(|c| c.clone()).unwrap_or_default()
    }

    fn record(&self, resolver: &'static str, keys: usize) {
        if let Ok(mut calls) = self.calls.lock() {
            calls.push((resolver, keys));
        }
    }
}

impl Resolve<Users> for Directory {
    fn resolve(
        &self,
        keys: &[UserId],
    ) -> impl Future<Output = Result<HashMap<UserId, String>, ResolveError>> + Send {
        self.record(Users::NAME, keys.len());
        toolshape::resolve::answer(keys, |k| self.users.get(&k.0).cloned())
    }
}

impl Resolve<Orgs> for Directory {
    fn resolve(
        &self,
        keys: &[OrgId],
    ) -> impl Future<Output = Result<HashMap<OrgId, String>, ResolveError>> + Send {
        self.record(Orgs::NAME, keys.len());
        toolshape::resolve::answer(keys, |k| self.orgs.get(&k.0).cloned())
    }
}

/// The seed's ticket element exactly as printed in the seed document.
pub fn seed_element() -> &'static str {
    let start = PAGE.find("    {").unwrap_or(0);
    let end = PAGE.find("\n    },").map_or(PAGE.len(), |i| i + 6);
    &PAGE[start..end]
}

/// The page shaped in each format by one configured shaper: JSON, prose, table; `raw` is
/// the payload the tickets came from, for the report.
pub fn shape_formats(
    shaper: &Shaper,
    raw: Option<&str>,
    tickets: &[Ticket],
    directory: &Directory,
) -> Result<[Shaped; 3], ShapeError> {
    let shape = |format| {
        let call = shaper.clone().format(format).call();
        match raw {
            Some(raw) => call.raw_payload(raw),
            None => call,
        }
        .shape_blocking((tickets, directory))
    };
    Ok([
        shape(Format::Json)?,
        shape(Format::Prose)?,
        shape(Format::Table)?,
    ])
}
