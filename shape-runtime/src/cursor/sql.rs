//! Pushing a keyset into a database query: the `WHERE` condition and `ORDER BY` that select
//! and order rows as the cursor does ([`Keyset::sql_predicate`]).

use super::error::CursorSetupError;
use super::keyset::Keyset;
use crate::fields::rank::{KeyValue, Order};

impl Keyset {
    /// A SQL condition selecting the rows after this position, with `?` placeholders, for a
    /// rank column that may hold NULL (NULL ranks first, as `Option::None` does).
    ///
    /// Use it with [`sql_order_by`](Keyset::sql_order_by) so the database orders rows as
    /// the cursor does. The parameters are the rank key as
    /// the record's rank key gives it ([`KeyValue`]) (a `chrono` timestamp is
    /// nanoseconds since the epoch: convert it to the column's type when binding), then the
    /// id text. Compare ids bytewise (a binary or `C` collation) so the database and the
    /// cursor agree on ties.
    ///
    /// ```
    /// use toolshape::cursor::Keyset;
    /// use toolshape::{fields::KeyValue, Order};
    ///
    /// let k = Keyset { rank: Some(KeyValue::Int(7)), id: Some("t1".into()), order: Order::Desc };
    /// let p = k.sql_predicate("updated_at", "id")?;
    /// assert_eq!(p.sql, "((updated_at, id) < (?, ?) OR updated_at IS NULL)");
    /// assert_eq!(p.params, [KeyValue::Int(7), KeyValue::Str("t1".into())]);
    /// assert_eq!(k.sql_order_by("updated_at", "id")?, "updated_at DESC NULLS LAST, id DESC");
    /// # Ok::<(), toolshape::cursor::CursorSetupError>(())
    /// ```
    pub fn sql_predicate(
        &self,
        rank_column: &str,
        id_column: &str,
    ) -> Result<SqlPredicate, CursorSetupError> {
        self.sql_predicate_with(rank_column, id_column, &SqlOptions::default())
    }

    /// [`sql_predicate`](Keyset::sql_predicate) with other placeholders, or for a rank
    /// column declared `NOT NULL` (which drops the `OR … IS NULL` arm).
    ///
    /// ```
    /// use toolshape::cursor::{Keyset, Placeholders, SqlOptions};
    /// use toolshape::{fields::KeyValue, Order};
    ///
    /// let k = Keyset { rank: Some(KeyValue::Int(7)), id: Some("t1".into()), order: Order::Desc };
    /// let options = SqlOptions { placeholders: Placeholders::Dollar { first: 3 }, rank_nullable: false };
    /// let p = k.sql_predicate_with("t.updated_at", "t.id", &options)?;
    /// assert_eq!(p.sql, "(t.updated_at, t.id) < ($3, $4)");
    /// # Ok::<(), toolshape::cursor::CursorSetupError>(())
    /// ```
    pub fn sql_predicate_with(
        &self,
        rank_column: &str,
        id_column: &str,
        options: &SqlOptions,
    ) -> Result<SqlPredicate, CursorSetupError> {
        let r = checked_column(rank_column)?;
        let i = checked_column(id_column)?;
        let op = match self.order {
            Order::Asc => ">",
            Order::Desc => "<",
        };
        let mut next = options.placeholders.counter();
        let mut params = Vec::new();
        let id = self.id.clone().map(KeyValue::Str);
        let sql = match (&self.rank, id) {
            (None, None) => "1 = 1".to_owned(),
            (None, Some(id)) => {
                params.push(id);
                format!("{i} {op} {}", next())
            }
            (Some(KeyValue::Null), id) => {
                // NULL ranks first: in ascending order every non-NULL rank follows; in
                // descending order only NULL ranks with a smaller id do.
                let ties = id.map(|id| {
                    params.push(id);
                    format!("{r} IS NULL AND {i} {op} {}", next())
                });
                match (self.order, ties) {
                    (Order::Asc, Some(ties)) => format!("(({ties}) OR {r} IS NOT NULL)"),
                    (Order::Asc, None) => format!("{r} IS NOT NULL"),
                    (Order::Desc, Some(ties)) => format!("({ties})"),
                    (Order::Desc, None) => "1 = 0".to_owned(),
                }
            }
            (Some(rank), id) => {
                params.push(rank.clone());
                let bound = match id {
                    Some(id) => {
                        params.push(id);
                        let (a, b) = (next(), next());
                        format!("({r}, {i}) {op} ({a}, {b})")
                    }
                    None => format!("{r} {op} {}", next()),
                };
                if self.order == Order::Desc && options.rank_nullable {
                    format!("({bound} OR {r} IS NULL)")
                } else {
                    bound
                }
            }
        };
        Ok(SqlPredicate { sql, params })
    }

    /// The `ORDER BY` list that ranks rows as this keyset does: `rank ASC NULLS FIRST, id
    /// ASC`, or both descending with NULLs last.
    pub fn sql_order_by(
        &self,
        rank_column: &str,
        id_column: &str,
    ) -> Result<String, CursorSetupError> {
        let r = checked_column(rank_column)?;
        let i = checked_column(id_column)?;
        Ok(match self.order {
            Order::Asc => format!("{r} ASC NULLS FIRST, {i} ASC"),
            Order::Desc => format!("{r} DESC NULLS LAST, {i} DESC"),
        })
    }
}

/// Accepts `name`, `table.name`, `"quoted name"`: nothing a request could smuggle SQL in.
pub(super) fn checked_column(column: &str) -> Result<&str, CursorSetupError> {
    let plain = |part: &str| {
        let mut chars = part.chars();
        matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let quoted = |part: &str| {
        part.len() > 2
            && part.starts_with('"')
            && part.ends_with('"')
            && !part[1..part.len() - 1].contains(['"', '\0'])
    };
    if !column.is_empty() && column.split('.').all(|p| plain(p) || quoted(p)) {
        Ok(column)
    } else {
        Err(CursorSetupError::SqlColumn {
            column: column.to_owned(),
        })
    }
}

/// A SQL condition and its parameters, in placeholder order.
#[derive(Debug, Clone, PartialEq)]
pub struct SqlPredicate {
    /// The condition, to `AND` into the query's `WHERE` clause.
    pub sql: String,
    /// The values to bind, in order.
    pub params: Vec<KeyValue>,
}

/// How [`Keyset::sql_predicate_with`] writes its condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqlOptions {
    /// Placeholder style.
    pub placeholders: Placeholders,
    /// Whether the rank column can hold NULL (the default, which is always correct; `false`
    /// gives a simpler condition for a `NOT NULL` column).
    pub rank_nullable: bool,
}

impl Default for SqlOptions {
    fn default() -> Self {
        SqlOptions {
            placeholders: Placeholders::Question,
            rank_nullable: true,
        }
    }
}

/// Placeholder style for bound parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placeholders {
    /// `?` (SQLite, MySQL).
    Question,
    /// `$1`, `$2`, … starting at `first` (PostgreSQL), so the predicate can follow other
    /// parameters.
    Dollar {
        /// The number of the first placeholder.
        first: usize,
    },
}

impl Placeholders {
    fn counter(self) -> impl FnMut() -> String {
        let mut n = match self {
            Placeholders::Question => 0,
            Placeholders::Dollar { first } => first,
        };
        move || match self {
            Placeholders::Question => "?".to_owned(),
            Placeholders::Dollar { .. } => {
                let s = format!("${n}");
                n = n.saturating_add(1);
                s
            }
        }
    }
}
