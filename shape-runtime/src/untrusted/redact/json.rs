//! JSON text redacted string by string: each string literal (a key or a value) read,
//! redacted as text and written back where it changed; everything else kept byte for byte,
//! so a key written twice, the order of keys and the way numbers are written stay as the
//! upstream wrote them (a configured tool reads its JSON text strictly).

use super::{Redacted, Redactor};
use std::borrow::Cow;

/// What the literal being read is, within its container.
#[derive(Clone)]
enum Frame {
    /// An object: the key of the value being read, once its key is read.
    Object(Option<String>),
    /// An array: the key it is the value of (its items are read under it).
    Array(Option<String>),
}

/// `text`, valid JSON, with its string literals redacted (see the module).
pub(super) fn redact<'t>(
    text: &'t str,
    redactor: &Redactor<'_>,
    counts: &mut Redacted,
) -> Cow<'t, str> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut stack: Vec<Frame> = Vec::new();
    let mut keys = 0u32;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => {
                stack.push(Frame::Object(None));
                i += 1;
            }
            b'[' => {
                let key = current_key(&stack);
                stack.push(Frame::Array(key));
                i += 1;
            }
            b'}' | b']' => {
                stack.pop();
                i += 1;
            }
            b'"' => {
                let end = crate::text::json_string_end(bytes, i);
                let literal = &text[i..end];
                let is_key = matches!(stack.last(), Some(Frame::Object(_)))
                    && bytes[end..]
                        .iter()
                        .find(|b| !b.is_ascii_whitespace())
                        .is_some_and(|&b| b == b':');
                let Ok(decoded) = serde_json::from_str::<String>(literal) else {
                    i = end;
                    continue;
                };
                let replaced = if is_key {
                    redactor.key(&decoded, counts, &mut keys)
                } else {
                    let key = current_key(&stack);
                    match redactor.text(&decoded, key.as_deref(), counts) {
                        Cow::Borrowed(_) => None,
                        Cow::Owned(new) => Some(new),
                    }
                };
                if is_key && let Some(Frame::Object(key)) = stack.last_mut() {
                    *key = Some(decoded);
                }
                if let Some(new) = replaced {
                    let out = out.get_or_insert_with(|| String::with_capacity(text.len()));
                    out.push_str(&text[copied..i]);
                    out.push_str(&serde_json::to_string(&new).unwrap_or_default());
                    copied = end;
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut out) => {
            out.push_str(&text[copied..]);
            Cow::Owned(out)
        }
    }
}

/// The key a value read now is under.
fn current_key(stack: &[Frame]) -> Option<String> {
    match stack.last()? {
        Frame::Object(key) | Frame::Array(key) => key.clone(),
    }
}
