//! The reference to a stored result: a [`Handle`] (96 random bits, written as digits), its
//! text form, what can go wrong with one ([`HandleError`]), and the name of the companion
//! tool that reopens it. Below every module that states or reads a handle (a page, a cursor,
//! the stores), so none of them depends on a store.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use std::fmt;
use std::str::FromStr;

/// The name of the companion tool that reopens stored results.
pub const OPEN_RESULT: &str = "open_result";

/// Why a handle could not be stored or opened. Messages say what to do next.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HandleError {
    /// Never issued, issued to another owner, removed, or not a handle at all. Deliberately
    /// the same in every case, so an owner learns nothing about other owners' handles.
    #[error(
        "no stored result has this handle: check it was copied exactly, or call the tool that \
         returned it again for a fresh handle"
    )]
    NotFound,
    /// Its time to live has passed.
    #[error(
        "this handle expired (stored results are kept for {ttl_secs}s); call {tool} again to \
         get a fresh handle"
    )]
    Expired {
        /// The tool that stored it.
        tool: String,
        /// The time to live it was stored with, in seconds.
        ttl_secs: u64,
    },
    /// Removed to make room for newer results.
    #[error(
        "this handle's result was removed to make room for newer results; call {tool} again \
         to get a fresh handle"
    )]
    Evicted {
        /// The tool that stored it.
        tool: String,
    },
    /// Larger than one stored result may be.
    #[error(
        "the result is {bytes} bytes, over the {max_bytes}-byte cap for one stored result; \
         page it with a cursor instead, or narrow the query"
    )]
    TooLarge {
        /// The result's size (its JSON serialisation).
        bytes: usize,
        /// The cap.
        max_bytes: usize,
    },
    /// The store could not do its work (no randomness, a shared store unreachable).
    #[error("the result store is unavailable ({reason}); try again shortly")]
    Unavailable {
        /// What failed.
        reason: String,
    },
}

/// A reference to a stored result: 96 random bits, shown as `h_` and 30 digits.
///
/// 96 bits, not 128: a handle is copied by a model into its next call, and digits cost one
/// token per 10 bits, so 32 bits more would cost every page that states a handle three
/// tokens. 2^96 is far beyond guessing (OWASP asks 64 bits of a session id), and a handle
/// stored with an owner opens only for that owner. Digits, not base64: a handle's tokens
/// then depend on nothing random (ten, wherever it stands), so a page that states one holds
/// the same records on every call. Handles of the first format (`h_` and
/// 16 base64url characters) still parse.
///
/// ```
/// use toolshape::handle::Handle;
///
/// let handle = Handle::random()?;
/// let text = handle.to_string();
/// assert_eq!(text.len(), 32);
/// assert!(text[2..].bytes().all(|b| b.is_ascii_digit()));
/// assert_eq!(text.parse::<Handle>()?, handle);
/// assert!("h_not-a-handle".parse::<Handle>().is_err());
/// # Ok::<(), toolshape::handle::HandleError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Handle([u8; HANDLE_BYTES]);

/// The random bytes in a handle.
pub const HANDLE_BYTES: usize = 12;

impl Handle {
    /// A fresh handle from the operating system's random source.
    pub fn random() -> Result<Self, HandleError> {
        let mut bytes = [0; HANDLE_BYTES];
        getrandom::fill(&mut bytes).map_err(|e| HandleError::Unavailable {
            reason: format!("no randomness: {e}"),
        })?;
        Ok(Handle(bytes))
    }

    /// The handle's 12 bytes, for a store's key.
    pub fn as_bytes(&self) -> &[u8; HANDLE_BYTES] {
        &self.0
    }

    /// The handle with these bytes.
    pub fn from_bytes(bytes: [u8; HANDLE_BYTES]) -> Self {
        Handle(bytes)
    }
}

impl fmt::Display for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "h_{}", crate::text::digits::encode(&self.0))
    }
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Handle({self})")
    }
}

/// Characters of a handle's text after `h_`: digits now, base64url in the first format.
const HANDLE_DIGITS: usize = crate::text::digits::encoded_len(HANDLE_BYTES);
const HANDLE_BASE64: usize = HANDLE_BYTES / 3 * 4;

impl FromStr for Handle {
    type Err = HandleError;

    /// Parses `h_…` (digits, or the first format's base64url); anything else is
    /// [`HandleError::NotFound`].
    fn from_str(text: &str) -> Result<Self, HandleError> {
        let body = text
            .trim()
            .strip_prefix("h_")
            .ok_or(HandleError::NotFound)?;
        let bytes = match body.len() {
            HANDLE_DIGITS => crate::text::digits::decode(body),
            HANDLE_BASE64 => URL_SAFE_NO_PAD.decode(body).ok(),
            _ => None,
        }
        .ok_or(HandleError::NotFound)?;
        Ok(Handle(bytes.try_into().map_err(|_| HandleError::NotFound)?))
    }
}
