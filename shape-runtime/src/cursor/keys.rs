//! The keys cursors are signed with ([`CursorKeys`], with rotation) and the hash that binds a
//! cursor to one query ([`QueryHash`]).

use super::error::CursorSetupError;
use hmac::{Hmac, KeyInit};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::fmt;

pub(super) type HmacSha256 = Hmac<Sha256>;
/// The shortest signing key accepted, in bytes.
pub const MIN_KEY_LEN: usize = 16;
/// Leading bytes of the query hash carried in the clear, only to tell "another query" from
/// "altered" when the signature does not verify; the whole hash is signed.
pub(super) const FINGERPRINT_LEN: usize = 4;

/// The keys cursors are signed with: the current one, and during a rotation the previous one,
/// which is still accepted when decoding (never used to sign).
///
/// ```
/// use toolshape::cursor::CursorKeys;
///
/// let keys = CursorKeys::new(b"the new key, 16+ bytes")?.with_previous(b"the old key, 16+ bytes")?;
/// assert!(CursorKeys::new(b"short").is_err());
/// # Ok::<(), toolshape::cursor::CursorSetupError>(())
/// ```
#[derive(Clone)]
pub struct CursorKeys {
    pub(super) current: HmacSha256,
    pub(super) previous: Option<HmacSha256>,
}

impl CursorKeys {
    /// Keys with one current signing key (at least [`MIN_KEY_LEN`] bytes).
    pub fn new(current: impl AsRef<[u8]>) -> Result<Self, CursorSetupError> {
        Ok(CursorKeys {
            current: keyed(current.as_ref())?,
            previous: None,
        })
    }

    /// Keys with a fresh 32-byte key from the operating system's random source: cursors
    /// then last as long as the process (a restart or another replica refuses them, and the
    /// refusal says to call again without a cursor). Share a key of your own across replicas.
    ///
    /// ```
    /// use toolshape::cursor::CursorKeys;
    ///
    /// let keys = CursorKeys::random()?;
    /// # let _ = keys;
    /// # Ok::<(), toolshape::cursor::CursorSetupError>(())
    /// ```
    pub fn random() -> Result<Self, CursorSetupError> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|e| CursorSetupError::NoRandomness {
            reason: e.to_string(),
        })?;
        Self::new(key)
    }

    /// Also accepts cursors signed with `previous`, for the length of a key rotation.
    pub fn with_previous(self, previous: impl AsRef<[u8]>) -> Result<Self, CursorSetupError> {
        Ok(CursorKeys {
            previous: Some(keyed(previous.as_ref())?),
            ..self
        })
    }
}

impl fmt::Debug for CursorKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CursorKeys")
            .field("current", &"<redacted>")
            .field("previous", &self.previous.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

pub(super) fn keyed(key: &[u8]) -> Result<HmacSha256, CursorSetupError> {
    if key.len() < MIN_KEY_LEN {
        return Err(CursorSetupError::KeyTooShort { len: key.len() });
    }
    // HMAC accepts keys of any length; the error arm is unreachable but not unwrapped.
    HmacSha256::new_from_slice(key).map_err(|_| CursorSetupError::KeyTooShort { len: key.len() })
}

/// A hash of one query — the tool's name and its arguments, without the cursor — so that a
/// cursor continues only the query that issued it.
///
/// The arguments are serialised canonically (object keys sorted, no whitespace), so two
/// requests with the same arguments in a different key order hash the same.
///
/// ```
/// use toolshape::cursor::QueryHash;
/// use serde_json::json;
///
/// let a = QueryHash::of("search", &json!({"q": "crash", "status": "open"}))?;
/// let b = QueryHash::of("search", &json!({"status": "open", "q": "crash"}))?;
/// assert_eq!(a, b);
/// assert_ne!(a, QueryHash::of("search", &json!({"q": "crash"}))?);
/// assert_ne!(a, QueryHash::of("list", &json!({"q": "crash", "status": "open"}))?);
/// # Ok::<(), toolshape::cursor::CursorSetupError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct QueryHash(pub(super) [u8; 32]);

impl QueryHash {
    /// Hashes `tool` and its query arguments (pass them without the cursor itself).
    ///
    /// The hash is SHA-256 of `shape.query.v1\0`, the tool's length in bytes as 8
    /// little-endian bytes, the tool, and the arguments as compact JSON with every object's
    /// keys sorted: the same arguments hash alike whatever order their maps keep, and a
    /// cursor issued before an upgrade still opens after it.
    pub fn of<Q: Serialize + ?Sized>(tool: &str, args: &Q) -> Result<Self, CursorSetupError> {
        let value = serde_json::to_value(args).map_err(query_arguments)?;
        let mut hasher = Sha256::new();
        hasher.update(b"shape.query.v1\0");
        hasher.update((tool.len() as u64).to_le_bytes());
        hasher.update(tool.as_bytes());
        canonical(&value, &mut hasher).map_err(query_arguments)?;
        Ok(QueryHash(hasher.finalize().into()))
    }

    /// The hash bound to `principal`, the one the call is made for
    /// ([`mcp::Principal`](crate::mcp::Principal) over HTTP): a cursor issued to one
    /// principal fails its signature when another presents it, and reads exactly as an
    /// altered one does ([`CursorError::Tampered`](crate::cursor::CursorError::Tampered)),
    /// not as another query's: the fingerprint a cursor carries (which tells "another query"
    /// from "altered") is the unbound hash's, so it says nothing of who holds the cursor.
    ///
    /// ```
    /// use toolshape::cursor::QueryHash;
    ///
    /// let query = QueryHash::of("search", &serde_json::json!({"q": "crash"}))?;
    /// assert_ne!(query.for_principal("alice"), query.for_principal("bob"));
    /// assert_eq!(query.for_principal("alice"), query.for_principal("alice"));
    /// # Ok::<(), toolshape::cursor::CursorSetupError>(())
    /// ```
    pub fn for_principal(self, principal: &str) -> Self {
        let mut hasher = Sha256::new();
        hasher.update(b"shape.query.owner.v1\0");
        hasher.update(self.0);
        hasher.update((principal.len() as u64).to_le_bytes());
        hasher.update(principal.as_bytes());
        let mut bound: [u8; 32] = hasher.finalize().into();
        bound[..FINGERPRINT_LEN].copy_from_slice(&self.0[..FINGERPRINT_LEN]);
        QueryHash(bound)
    }

    /// The 32 bytes of the hash.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    pub(super) fn fingerprint(&self) -> [u8; FINGERPRINT_LEN] {
        let mut out = [0; FINGERPRINT_LEN];
        out.copy_from_slice(&self.0[..FINGERPRINT_LEN]);
        out
    }
}

impl fmt::Debug for QueryHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "QueryHash(")?;
        for b in &self.0[..8] {
            write!(f, "{b:02x}")?;
        }
        write!(f, "…)")
    }
}

/// Writes `value` as JSON with object keys sorted, whatever order the map kept them in.
pub(super) fn canonical(
    value: &serde_json::Value,
    out: &mut Sha256,
) -> Result<(), serde_json::Error> {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.update(b"{");
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.update(b",");
                }
                out.update(serde_json::to_string(key)?.as_bytes());
                out.update(b":");
                canonical(value, out)?;
            }
            out.update(b"}");
        }
        Value::Array(items) => {
            out.update(b"[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.update(b",");
                }
                canonical(item, out)?;
            }
            out.update(b"]");
        }
        scalar => out.update(serde_json::to_string(scalar)?.as_bytes()),
    }
    Ok(())
}

fn query_arguments(e: serde_json::Error) -> CursorSetupError {
    CursorSetupError::QueryArguments {
        reason: e.to_string(),
    }
}
