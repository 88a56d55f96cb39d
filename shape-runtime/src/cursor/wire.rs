//! The binary body a cursor carries, written as digits: its versions, flags and extensions,
//! and the writer and reader of a [`Position`](super::Position).

use super::keys::{FINGERPRINT_LEN, QueryHash};
use super::keyset::Keyset;
use super::position::{Position, UpstreamPosition};
use crate::fields::rank::{KeyValue, Order};

/// Format version of the first signed cursors (base64url text, no extension byte): still
/// read, never written.
pub(super) const VERSION: u8 = 1;
/// Format version of a signed cursor written now: an extension byte follows the flags.
pub(super) const VERSION_2: u8 = 2;
/// HMAC-SHA256 truncated to 128 bits (RFC 2104 §5 allows truncation to half the output).
pub(super) const TAG_LEN: usize = 16;
/// Version 1: version, flags, fingerprint.
pub(super) const HEADER_LEN: usize = 2 + FINGERPRINT_LEN;
/// Version 2: version, flags, extensions, fingerprint.
pub(super) const HEADER_2_LEN: usize = 3 + FINGERPRINT_LEN;
/// The shortest signed cursor of version 1: the header, the issue time and the count shown (a
/// byte each at least), the tag; version 2's header is a byte longer. Anything shorter is
/// unreadable, whatever its tag.
pub(super) const MIN_SIGNED_LEN: usize = HEADER_LEN + 2 + TAG_LEN;
/// The first character of a cursor written now: the body and its tag follow as decimal
/// digits ([`crate::text::digits`]), so a cursor's tokens depend on its length alone and the same
/// page holds the same records on every call. The letter keeps the cursor text, not a
/// number, wherever a model copies it.
pub(super) const DIGITS_PREFIX: char = 'c';
// Flag bits (byte 1).
pub(super) const FLAG_DESC: u8 = 1;
pub(super) const FLAG_ID: u8 = 1 << 1;
pub(super) const FLAG_ID_UUID: u8 = 1 << 2;
pub(super) const RANK_SHIFT: u8 = 3;
pub(super) const RANK_MASK: u8 = 0b111 << RANK_SHIFT;
/// An upstream position follows the id: the upstream page (`0` for its first page, else the
/// continuation's length plus one, then its bytes) and the records of it to skip. Cursors
/// without the flag read as before; a server that predates it refuses the flag as unreadable.
pub(super) const FLAG_UPSTREAM: u8 = 1 << 6;
pub(super) const FLAG_UNUSED: u8 =
    !(FLAG_DESC | FLAG_ID | FLAG_ID_UUID | RANK_MASK | FLAG_UPSTREAM);
// Extension bits (byte 2 of a version 2 cursor).
/// The count of records skipped as too large for any page follows the count shown.
pub(super) const EXT_SKIPPED: u8 = 1;
/// The handle of the stored whole result the walk belongs to ends the body.
pub(super) const EXT_HANDLE: u8 = 1 << 1;
pub(super) const EXT_UNUSED: u8 = !(EXT_SKIPPED | EXT_HANDLE);
/// The longest upstream continuation a cursor carries, in bytes, so an upstream cursor stays
/// signed and stateless (a [`Call`](crate::Call) paging an upstream refuses a longer one).
pub const MAX_UPSTREAM_BYTES: usize = 1024;
// Rank tags (3 bits).
pub(super) const RANK_NONE: u8 = 0;
pub(super) const RANK_NULL: u8 = 1;
pub(super) const RANK_FALSE: u8 = 2;
pub(super) const RANK_TRUE: u8 = 3;
pub(super) const RANK_INT: u8 = 4;
pub(super) const RANK_UINT: u8 = 5;
pub(super) const RANK_FLOAT: u8 = 6;
pub(super) const RANK_STR: u8 = 7;

/// Where a body of either version carries the query fingerprint.
pub(super) fn fingerprint_in(body: &[u8]) -> Option<&[u8]> {
    match *body.first()? {
        VERSION => body.get(2..HEADER_LEN),
        VERSION_2 => body.get(3..HEADER_2_LEN),
        _ => None,
    }
}

/// The rank key's tag and the bytes written for it.
pub(super) fn rank_tag(rank: Option<&KeyValue>) -> u8 {
    match rank {
        None => RANK_NONE,
        Some(KeyValue::Null) => RANK_NULL,
        Some(KeyValue::Bool(false)) => RANK_FALSE,
        Some(KeyValue::Bool(true)) => RANK_TRUE,
        Some(KeyValue::Int(_)) => RANK_INT,
        Some(KeyValue::UInt(_)) => RANK_UINT,
        Some(KeyValue::Float(_)) => RANK_FLOAT,
        Some(KeyValue::Str(_)) => RANK_STR,
    }
}

/// A version 2 body for `position`, bound to `query` by its fingerprint (the tag, made
/// after, binds it whole): version, flags, extensions, fingerprint, issue time, count shown,
/// [count skipped], [rank key], [id], [upstream page and skip], [handle].
pub(super) fn position_body(position: &Position, query: &QueryHash) -> Vec<u8> {
    let keyset = &position.keyset;
    let mut out = Vec::with_capacity(64);
    out.push(VERSION_2);
    out.push(0); // flags, filled in below
    out.push(0); // extensions, filled in below
    out.extend_from_slice(&query.fingerprint());
    put_varint(&mut out, position.issued_at_unix);
    put_varint(&mut out, position.shown);
    let mut ext = 0;
    if position.skipped > 0 {
        ext |= EXT_SKIPPED;
        put_varint(&mut out, position.skipped);
    }
    let mut flags = 0;
    if keyset.order == Order::Desc {
        flags |= FLAG_DESC;
    }
    match &keyset.rank {
        Some(KeyValue::Int(v)) => put_varint(&mut out, zigzag(*v)),
        Some(KeyValue::UInt(v)) => put_varint(&mut out, *v),
        Some(KeyValue::Float(v)) => out.extend_from_slice(&v.to_le_bytes()),
        Some(KeyValue::Str(s)) => put_bytes(&mut out, s.as_bytes()),
        None | Some(KeyValue::Null | KeyValue::Bool(_)) => {}
    }
    flags |= rank_tag(keyset.rank.as_ref()) << RANK_SHIFT;
    if let Some(id) = &keyset.id {
        flags |= FLAG_ID;
        match split_uuid(id) {
            Some((prefix, uuid)) => {
                flags |= FLAG_ID_UUID;
                put_bytes(&mut out, prefix.as_bytes());
                out.extend_from_slice(&uuid);
            }
            None => put_bytes(&mut out, id.as_bytes()),
        }
    }
    if let Some(upstream) = &position.upstream {
        flags |= FLAG_UPSTREAM;
        match &upstream.page {
            None => put_varint(&mut out, 0),
            Some(page) => {
                put_varint(&mut out, (page.len() as u64).saturating_add(1));
                out.extend_from_slice(page.as_bytes());
            }
        }
        put_varint(&mut out, upstream.skip);
    }
    if let Some(handle) = &position.handle {
        ext |= EXT_HANDLE;
        out.extend_from_slice(handle.as_bytes());
    }
    out[1] = flags;
    out[2] = ext;
    out
}

/// The length of [`position_body`]'s answer, without writing it.
pub(super) fn position_body_len(position: &Position) -> usize {
    let keyset = &position.keyset;
    let bytes_len = |n: usize| varint_len(n as u64) + n;
    let mut len = HEADER_2_LEN + varint_len(position.issued_at_unix) + varint_len(position.shown);
    if position.skipped > 0 {
        len += varint_len(position.skipped);
    }
    len += match &keyset.rank {
        Some(KeyValue::Int(v)) => varint_len(zigzag(*v)),
        Some(KeyValue::UInt(v)) => varint_len(*v),
        Some(KeyValue::Float(_)) => 8,
        Some(KeyValue::Str(s)) => bytes_len(s.len()),
        None | Some(KeyValue::Null | KeyValue::Bool(_)) => 0,
    };
    if let Some(id) = &keyset.id {
        len += match split_uuid(id) {
            Some((prefix, _)) => bytes_len(prefix.len()) + 16,
            None => bytes_len(id.len()),
        };
    }
    if let Some(upstream) = &position.upstream {
        len += match &upstream.page {
            None => 1,
            Some(page) => varint_len((page.len() as u64).saturating_add(1)) + page.len(),
        };
        len += varint_len(upstream.skip);
    }
    if position.handle.is_some() {
        len += crate::handle::id::HANDLE_BYTES;
    }
    len
}

/// Parses a verified body of either version; `None` if it does not follow the format.
pub(super) fn parse_body(body: &[u8]) -> Option<Position> {
    let version = *body.first()?;
    let flags = *body.get(1)?;
    if flags & FLAG_UNUSED != 0 {
        return None;
    }
    let (ext, header) = match version {
        VERSION => (0, HEADER_LEN),
        VERSION_2 => (*body.get(2)?, HEADER_2_LEN),
        _ => return None,
    };
    if ext & EXT_UNUSED != 0 {
        return None;
    }
    let mut r = Reader {
        rest: body.get(header..)?,
    };
    let issued_at_unix = r.varint()?;
    let shown = r.varint()?;
    let skipped = if ext & EXT_SKIPPED != 0 {
        // Written only when some were skipped: a zero here was never written.
        Some(r.varint()?).filter(|&n| n > 0)?
    } else {
        0
    };
    let rank = match (flags & RANK_MASK) >> RANK_SHIFT {
        RANK_NONE => None,
        RANK_NULL => Some(KeyValue::Null),
        RANK_FALSE => Some(KeyValue::Bool(false)),
        RANK_TRUE => Some(KeyValue::Bool(true)),
        RANK_INT => Some(KeyValue::Int(unzigzag(r.varint()?))),
        RANK_UINT => Some(KeyValue::UInt(r.varint()?)),
        RANK_FLOAT => Some(KeyValue::Float(f64::from_le_bytes(r.array()?))),
        RANK_STR => Some(KeyValue::Str(r.string()?)),
        _ => return None,
    };
    let id = match (flags & FLAG_ID != 0, flags & FLAG_ID_UUID != 0) {
        (false, false) => None,
        (false, true) => return None,
        (true, false) => Some(r.string()?),
        (true, true) => {
            let mut id = r.string()?;
            push_uuid(&mut id, r.array()?);
            Some(id)
        }
    };
    let upstream = if flags & FLAG_UPSTREAM != 0 {
        let page = match usize::try_from(r.varint()?).ok()? {
            0 => None,
            len => Some(String::from_utf8(r.take(len - 1)?.to_vec()).ok()?),
        };
        Some(UpstreamPosition {
            page,
            skip: r.varint()?,
        })
    } else {
        None
    };
    let handle = if ext & EXT_HANDLE != 0 {
        Some(crate::handle::id::Handle::from_bytes(r.array()?))
    } else {
        None
    };
    if !r.rest.is_empty() {
        return None;
    }
    let order = if flags & FLAG_DESC != 0 {
        Order::Desc
    } else {
        Order::Asc
    };
    Some(Position {
        keyset: Keyset { rank, id, order },
        shown,
        skipped,
        issued_at_unix,
        upstream,
        handle,
    })
}

pub(super) struct Reader<'a> {
    pub(super) rest: &'a [u8],
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        if n > self.rest.len() {
            return None;
        }
        let (head, rest) = self.rest.split_at(n);
        self.rest = rest;
        Some(head)
    }

    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }

    /// LEB128, at most 10 bytes, no overflow.
    pub(super) fn varint(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for i in 0..10 {
            let byte = *self.take(1)?.first()?;
            let bits = u64::from(byte & 0x7f);
            if i == 9 && bits > 1 {
                return None;
            }
            value |= bits << (7 * i);
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    fn string(&mut self) -> Option<String> {
        let len = usize::try_from(self.varint()?).ok()?;
        String::from_utf8(self.take(len)?.to_vec()).ok()
    }
}

pub(super) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The bytes [`put_varint`] writes for `v`.
pub(super) fn varint_len(v: u64) -> usize {
    (64 - v.max(1).leading_zeros() as usize).div_ceil(7)
}

pub(super) fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

pub(super) fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

pub(super) fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

pub(super) const UUID_LEN: usize = 36;

/// Splits an id ending in a canonical lowercase UUID into its prefix and the UUID's bytes,
/// so the cursor carries 16 bytes instead of 36 characters. Anything else stays text.
pub(super) fn split_uuid(id: &str) -> Option<(&str, [u8; 16])> {
    let start = id.len().checked_sub(UUID_LEN)?;
    let (prefix, uuid) = (id.get(..start)?, id.get(start..)?.as_bytes());
    let mut out = [0u8; 16];
    let mut nibbles = 0;
    for (i, &c) in uuid.iter().enumerate() {
        if matches!(i, 8 | 13 | 18 | 23) {
            if c != b'-' {
                return None;
            }
            continue;
        }
        let v = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            _ => return None,
        };
        let byte = out.get_mut(nibbles / 2)?;
        *byte |= if nibbles % 2 == 0 { v << 4 } else { v };
        nibbles += 1;
    }
    Some((prefix, out))
}

pub(super) fn push_uuid(id: &mut String, uuid: [u8; 16]) {
    use std::fmt::Write as _;
    for (i, b) in uuid.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            id.push('-');
        }
        let _ = write!(id, "{b:02x}");
    }
}
