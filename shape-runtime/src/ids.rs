//! Ids the model can pass on, shortened: `tkt_9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d90` becomes
//! `tkt_9f3a71c4`. The trailing UUID groups exist for a uniqueness guarantee the model does not
//! need to reproduce; the tool that takes the id back accepts the short form.
//!
//! ```
//! use toolshape::short_id;
//!
//! assert_eq!(short_id("tkt_9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d90"), "tkt_9f3a71c4");
//! assert_eq!(short_id("9F3A71C4-2D18-4B6E-9C05-8AB3F2E17D90"), "9F3A71C4");
//! assert_eq!(short_id("INV-2024-0042"), "INV-2024-0042"); // not UUID-shaped: unchanged
//! ```

use std::borrow::Cow;

/// Shortens an id that ends in a UUID to its prefix plus the UUID's first group; any other
/// id is returned unchanged.
pub fn short_id(id: &str) -> &str {
    const UUID_LEN: usize = 36;
    if id.len() < UUID_LEN || !id.is_char_boundary(id.len() - UUID_LEN) {
        return id;
    }
    let start = id.len() - UUID_LEN;
    let uuid = &id.as_bytes()[start..];
    let groups = [8usize, 4, 4, 4, 12];
    let mut pos = 0;
    for (i, len) in groups.iter().enumerate() {
        if !uuid[pos..pos + len].iter().all(u8::is_ascii_hexdigit) {
            return id;
        }
        pos += len;
        if i < groups.len() - 1 {
            if uuid[pos] != b'-' {
                return id;
            }
            pos += 1;
        }
    }
    // A hex digit just before the UUID means it is part of a longer hex run, not a UUID.
    if start > 0 && id.as_bytes()[start - 1].is_ascii_hexdigit() {
        return id;
    }
    &id[..start + 8]
}

/// A field that holds an id as text: `String`, `&str`, `Box<str>`, `Cow<str>`, or a newtype
/// that implements this trait by returning its text.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used with `id`: it does not expose its text",
    label = "`id` needs a field whose value is the id's text",
    note = "`id` works on String, &str, Box<str> and Cow<str>; for a newtype, implement \
            `toolshape::IdText` returning its text"
)]
pub trait IdText {
    /// The id's full text.
    fn id_text(&self) -> &str;
}

impl IdText for String {
    fn id_text(&self) -> &str {
        self
    }
}
impl IdText for &str {
    fn id_text(&self) -> &str {
        self
    }
}
impl IdText for Box<str> {
    fn id_text(&self) -> &str {
        self
    }
}
impl IdText for Cow<'_, str> {
    fn id_text(&self) -> &str {
        self
    }
}
