//! The support desk in an embedded SQLite database: schema, the generated desk of
//! [`desk_data`](crate::desk_data) (5,000 tickets, 200 users, 60 organizations) inserted,
//! the ticket queries with the keyset pushed into SQL, and the two resolvers, each one
//! batched `SELECT … WHERE id IN (…)` per page. Every SQL statement is counted, so a call can
//! report what it cost.

use crate::desk::{OrgId, Orgs, Ticket, UserId, Users};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use toolshape::cursor::{Keyset, Placeholders, SqlOptions};
use toolshape::{
    Order,
    fields::KeyValue,
    resolve::{Resolve, ResolveError, Resolver},
};

pub use crate::desk_data::{ORGS, TICKETS, TODAY, USERS};

/// Why the database could not answer.
#[derive(Debug)]
pub struct DbError(pub String);

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DbError {}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        DbError(e.to_string())
    }
}

/// What a search asks for: a subject substring and a status code, both optional.
#[derive(Debug, Clone, Default)]
pub struct TicketFilter {
    pub subject_contains: Option<String>,
    pub status_code: Option<u8>,
}

impl TicketFilter {
    /// The `WHERE` conditions and their parameters (`?` placeholders).
    fn conditions(&self) -> (Vec<String>, Vec<SqlValue>) {
        let mut sql = Vec::new();
        let mut params = Vec::new();
        if let Some(text) = &self.subject_contains {
            sql.push("subject LIKE ? ESCAPE '\\'".to_owned());
            params.push(SqlValue::Text(format!("%{}%", like_escape(text))));
        }
        if let Some(code) = self.status_code {
            sql.push("status_code = ?".to_owned());
            params.push(SqlValue::Integer(i64::from(code)));
        }
        (sql, params)
    }
}

/// Escapes `%`, `_` and the escape character itself for `LIKE … ESCAPE '\'`.
pub fn like_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '%' | '_') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The database: one connection behind a mutex (SQLite is synchronous; each statement is
/// short), and a counter of statements run.
pub struct DeskDb {
    conn: Mutex<Connection>,
    queries: AtomicU64,
}

const TICKET_COLUMNS: &str = "id, subject, status_code, priority, assignee_id, organization_id, created_at, updated_at, sla_due_at";

impl DeskDb {
    /// An in-memory database, created and seeded.
    pub fn seeded() -> Result<DeskDb, DbError> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch(
            "CREATE TABLE organizations (id TEXT PRIMARY KEY, name TEXT NOT NULL);
             CREATE TABLE users (id TEXT PRIMARY KEY, display_name TEXT NOT NULL,
                                 organization_id TEXT NOT NULL REFERENCES organizations(id));
             CREATE TABLE tickets (
                 id TEXT PRIMARY KEY,
                 subject TEXT NOT NULL,
                 status_code INTEGER NOT NULL,
                 priority INTEGER NOT NULL,
                 assignee_id TEXT REFERENCES users(id),
                 organization_id TEXT NOT NULL REFERENCES organizations(id),
                 created_at TEXT NOT NULL,
                 updated_at TEXT NOT NULL,
                 sla_due_at TEXT
             );
             -- The rank order of Ticket: last update, newest first, id breaking ties.
             CREATE INDEX tickets_rank ON tickets (updated_at DESC, id DESC);
             CREATE INDEX tickets_status_rank ON tickets (status_code, updated_at DESC, id DESC);",
        )?;
        seed(&conn)?;
        Ok(DeskDb {
            conn: Mutex::new(conn),
            queries: AtomicU64::new(0),
        })
    }

    /// SQL statements run so far.
    pub fn queries(&self) -> u64 {
        self.queries.load(Ordering::Relaxed)
    }

    fn with_conn<T>(
        &self,
        run: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, DbError> {
        let conn = self
            .conn
            .lock()
            .map_err(|_| DbError("the database connection is unusable after a panic".into()))?;
        self.queries.fetch_add(1, Ordering::Relaxed);
        Ok(run(&conn)?)
    }

    /// `SELECT COUNT(*)` of the tickets matching `filter`.
    pub fn count(&self, filter: &TicketFilter) -> Result<u64, DbError> {
        let (conditions, params) = filter.conditions();
        let sql = format!("SELECT COUNT(*) FROM tickets{}", where_clause(&conditions));
        let n: i64 = self
            .with_conn(|c| c.query_row(&sql, params_from_iter(params.iter()), |row| row.get(0)))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    /// The tickets matching `filter` after `after` (a cursor's position), in rank order
    /// (`updated_at DESC, id DESC`), at most `limit` of them. The keyset is a condition in
    /// the query, so the database never reads the rows earlier pages showed.
    pub fn tickets(
        &self,
        filter: &TicketFilter,
        after: Option<&Keyset>,
        limit: usize,
    ) -> Result<Vec<Ticket>, DbError> {
        let (mut conditions, mut params) = filter.conditions();
        let start = Keyset::start(Order::Desc);
        let keyset = after.unwrap_or(&start);
        if !keyset.is_start() {
            let options = SqlOptions {
                placeholders: Placeholders::Question,
                rank_nullable: false, // updated_at is NOT NULL
            };
            let predicate = keyset
                .sql_predicate_with("updated_at", "id", &options)
                .map_err(|e| DbError(e.to_string()))?;
            conditions.push(predicate.sql);
            params.extend(predicate.params.iter().map(sql_value));
        }
        let order_by = keyset
            .sql_order_by("updated_at", "id")
            .map_err(|e| DbError(e.to_string()))?;
        params.push(SqlValue::Integer(i64::try_from(limit).unwrap_or(i64::MAX)));
        let sql = format!(
            "SELECT {TICKET_COLUMNS} FROM tickets{} ORDER BY {order_by} LIMIT ?",
            where_clause(&conditions)
        );
        self.with_conn(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt.query_map(params_from_iter(params.iter()), ticket_from_row)?;
            rows.collect()
        })
    }

    /// Tickets whose id starts with `prefix` (case-insensitive), at most `limit`, by id.
    pub fn tickets_by_id_prefix(&self, prefix: &str, limit: usize) -> Result<Vec<Ticket>, DbError> {
        let sql = format!(
            "SELECT {TICKET_COLUMNS} FROM tickets WHERE id LIKE ? ESCAPE '\\' ORDER BY id LIMIT ?"
        );
        let pattern = format!("{}%", like_escape(prefix));
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.with_conn(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt.query_map(rusqlite::params![pattern, limit], ticket_from_row)?;
            rows.collect()
        })
    }

    /// One batched lookup: `SELECT id, <name> FROM <table> WHERE id IN (?, …)`.
    fn names(
        &self,
        table: &str,
        name_column: &str,
        ids: &[String],
    ) -> Result<HashMap<String, String>, DbError> {
        if ids.is_empty() {
            return Ok(HashMap::new());
        }
        let marks = vec!["?"; ids.len()].join(", ");
        let sql = format!("SELECT id, {name_column} FROM {table} WHERE id IN ({marks})");
        self.with_conn(|c| {
            let mut stmt = c.prepare(&sql)?;
            let rows = stmt.query_map(params_from_iter(ids.iter()), |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
            })?;
            rows.collect()
        })
    }
}

fn where_clause(conditions: &[String]) -> String {
    if conditions.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", conditions.join(" AND "))
    }
}

fn sql_value(key: &KeyValue) -> SqlValue {
    match key {
        KeyValue::Null => SqlValue::Null,
        KeyValue::Bool(b) => SqlValue::Integer(i64::from(*b)),
        KeyValue::Int(i) => SqlValue::Integer(*i),
        KeyValue::UInt(u) => i64::try_from(*u).map_or(SqlValue::Real(*u as f64), SqlValue::Integer),
        KeyValue::Float(f) => SqlValue::Real(*f),
        KeyValue::Str(s) => SqlValue::Text(s.clone()),
    }
}

fn ticket_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Ticket> {
    Ok(Ticket {
        id: row.get(0)?,
        subject: row.get(1)?,
        status_code: row.get(2)?,
        priority: row.get(3)?,
        assignee_id: row.get::<_, Option<String>>(4)?.map(UserId),
        organization_id: OrgId(row.get(5)?),
        created_at: row.get(6)?,
        updated_at: row.get(7)?,
        sla_due_at: row.get(8)?,
    })
}

impl Resolve<Users> for DeskDb {
    fn resolve(
        &self,
        keys: &[UserId],
    ) -> impl Future<Output = Result<HashMap<UserId, String>, ResolveError>> + Send {
        let ids: Vec<String> = keys.iter().map(|k| k.0.clone()).collect();
        let answer = self
            .names("users", "display_name", &ids)
            .map(|names| {
                names
                    .into_iter()
                    .map(|(id, name)| (UserId(id), name))
                    .collect()
            })
            .map_err(ResolveError::new::<Users>);
        std::future::ready(answer)
    }
}

impl Resolve<Orgs> for DeskDb {
    fn resolve(
        &self,
        keys: &[OrgId],
    ) -> impl Future<Output = Result<HashMap<OrgId, String>, ResolveError>> + Send {
        let ids: Vec<String> = keys.iter().map(|k| k.0.clone()).collect();
        let answer = self
            .names("organizations", "name", &ids)
            .map(|names| {
                names
                    .into_iter()
                    .map(|(id, name)| (OrgId(id), name))
                    .collect()
            })
            .map_err(ResolveError::new::<Orgs>);
        std::future::ready(answer)
    }
}

/// The resolvers' names, for reports.
pub const RESOLVERS: [&str; 2] = [Users::NAME, Orgs::NAME];

// ---- the deterministic seed: the generated desk (desk_data), inserted ----

fn seed(conn: &Connection) -> rusqlite::Result<()> {
    let desk = crate::desk_data::generate();
    let tx = conn.unchecked_transaction()?;
    {
        let mut insert = tx.prepare("INSERT INTO organizations (id, name) VALUES (?, ?)")?;
        for (id, name) in &desk.orgs {
            insert.execute(rusqlite::params![id, name])?;
        }
    }
    {
        let mut insert =
            tx.prepare("INSERT INTO users (id, display_name, organization_id) VALUES (?, ?, ?)")?;
        for user in &desk.users {
            insert.execute(rusqlite::params![
                user.id,
                user.display_name,
                user.organization_id
            ])?;
        }
    }
    {
        let mut insert = tx.prepare(&format!(
            "INSERT INTO tickets ({TICKET_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        ))?;
        for t in &desk.tickets {
            insert.execute(rusqlite::params![
                t.id,
                t.subject,
                t.status_code,
                t.priority,
                t.assignee_id.as_ref().map(|a| &a.0),
                t.organization_id.0,
                t.created_at,
                t.updated_at,
                t.sla_due_at
            ])?;
        }
    }
    tx.commit()
}
