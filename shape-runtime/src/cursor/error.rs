//! Why a cursor was refused, or cursors could not be set up: each message says what to do.

/// Why a cursor was refused. Every message ends with what to do: start again without a
/// cursor (or, for a foreign query, repeat the original arguments).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CursorError {
    /// Not a cursor this server issued: not base64url, cut short, or an unknown format.
    #[error(
        "the cursor could not be read (it was cut or altered in copying, or is not one this \
         tool issued); call the tool again without a cursor to start from the first page"
    )]
    Malformed,
    /// The signature does not match: altered, or signed with a key no longer accepted.
    #[error(
        "the cursor's signature does not match: it was altered, or was issued under a signing \
         key this server no longer accepts; call the tool again without a cursor to start \
         from the first page"
    )]
    Tampered,
    /// Issued for a different tool or different arguments.
    #[error(
        "the cursor belongs to a different query: it continues only the call with the same \
         tool and arguments that returned it; repeat those arguments with this cursor, or call \
         again without a cursor to start from the first page"
    )]
    ForeignQuery,
    /// A server-held cursor ([`CursorCodec::held_in`](crate::cursor::CursorCodec::held_in)) whose position the server no longer
    /// holds: it expired from the store, was evicted, or the server restarted.
    #[error(
        "the cursor is no longer held by this server (it expired, was evicted to make room, or \
         the server restarted); call the tool again without a cursor to start from the first \
         page"
    )]
    Forgotten,
    /// A server-held cursor whose position could not be read: the store that holds it (a
    /// shared one, such as Redis) did not answer. The position may well still be there.
    #[error(
        "the position this cursor names could not be read: the store that holds it is \
         unavailable right now; call again shortly with the same cursor, or without a cursor \
         to start from the first page"
    )]
    Unavailable,
    /// Older than the configured maximum age.
    #[error(
        "the cursor expired: it was issued {age_secs}s ago and cursors last {max_age_secs}s; \
         call the tool again without a cursor to start from the first page"
    )]
    Expired {
        /// Seconds since the cursor was issued.
        age_secs: u64,
        /// The configured maximum age in seconds.
        max_age_secs: u64,
    },
}

/// Why cursors could not be set up: a signing key, a query's hash, a SQL column or a Redis
/// cursor store refused. Each message says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CursorSetupError {
    /// A signing key shorter than 16 bytes ([`CursorKeys::new`](crate::cursor::CursorKeys::new)).
    #[error(
        "a cursor signing key must be at least {min} bytes, got {len}; use 32 random bytes \
         (for example `openssl rand -base64 32`, decoded)",
        min = super::keys::MIN_KEY_LEN
    )]
    KeyTooShort {
        /// The length given.
        len: usize,
    },
    /// The operating system's random source failed ([`CursorKeys::random`](crate::cursor::CursorKeys::random)).
    #[error("no randomness for a cursor signing key: {reason}; pass a key of your own")]
    NoRandomness {
        /// What failed.
        reason: String,
    },
    /// The arguments of a query could not be serialised for hashing
    /// ([`QueryHash::of`](crate::cursor::QueryHash::of)).
    #[error("the query arguments could not be serialised for the cursor's query hash: {reason}")]
    QueryArguments {
        /// serde_json's message.
        reason: String,
    },
    /// A SQL column name that is not a plain identifier ([`Keyset`](crate::cursor::Keyset)'s
    /// SQL predicates).
    #[error(
        "`{column}` is not a plain SQL column name; pass a column name from your code (letters, \
         digits and `_`, optionally table-qualified with `.` or double-quoted), never text from a \
         request"
    )]
    SqlColumn {
        /// The column name refused.
        column: String,
    },
    /// The Redis server could not be reached or the URL is not one
    /// ([`RedisCursorStoreBuilder::connect`](crate::cursor::RedisCursorStoreBuilder::connect)).
    #[error("the Redis cursor store at {url} is unavailable ({reason}); check that it is running")]
    RedisUnavailable {
        /// The server (host and port; never the URL's password).
        url: String,
        /// What failed.
        reason: String,
    },
}
