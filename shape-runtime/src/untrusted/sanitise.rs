//! Sanitising: removing the invisible carriers of hidden instructions from untrusted text
//! ([`sanitize`]) and counting what was removed ([`Removed`]).

use std::borrow::Cow;

/// What sanitising removed (or normalised), by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Removed {
    /// Unicode tag characters (U+E0000–E007F) outside the recommended subdivision flags.
    pub tag_chars: u32,
    /// Bidi controls (U+202A–202E, U+2066–2069, U+200E, U+200F, U+061C).
    pub bidi: u32,
    /// Zero-width characters (U+200B–200D, U+2060, U+FEFF).
    pub zero_width: u32,
    /// C0 and C1 controls other than newline and tab (a lone carriage return or U+0085
    /// becomes a newline and is counted here).
    pub controls: u32,
    /// ANSI escape sequences (CSI, OSC, DCS, …), each counted once.
    pub ansi: u32,
    /// Other invisible format characters: soft hyphen, combining grapheme joiner, invisible
    /// operators, Hangul fillers, Mongolian and Khmer format characters, interlinear annotation
    /// and shorthand format controls.
    pub invisible: u32,
    /// Variation selectors that select nothing: a second selector in a row, one with no base,
    /// or one other than U+FE0E / U+FE0F on a base that is not a CJK ideograph (runs of
    /// selectors are how text is smuggled inside an emoji).
    pub variation_selectors: u32,
    /// U+2028 LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR, normalised to `\n`.
    pub line_separators: u32,
}

impl Removed {
    /// Everything counted, all kinds together.
    pub fn total(&self) -> u64 {
        [
            self.tag_chars,
            self.bidi,
            self.zero_width,
            self.controls,
            self.ansi,
            self.invisible,
            self.variation_selectors,
            self.line_separators,
        ]
        .iter()
        .map(|&n| u64::from(n))
        .sum()
    }

    /// Adds another count to this one.
    pub fn add(&mut self, other: Removed) {
        self.tag_chars = self.tag_chars.saturating_add(other.tag_chars);
        self.bidi = self.bidi.saturating_add(other.bidi);
        self.zero_width = self.zero_width.saturating_add(other.zero_width);
        self.controls = self.controls.saturating_add(other.controls);
        self.ansi = self.ansi.saturating_add(other.ansi);
        self.invisible = self.invisible.saturating_add(other.invisible);
        self.variation_selectors = self
            .variation_selectors
            .saturating_add(other.variation_selectors);
        self.line_separators = self.line_separators.saturating_add(other.line_separators);
    }

    fn bump(&mut self, kind: Kind) {
        let slot = match kind {
            Kind::Tag => &mut self.tag_chars,
            Kind::Bidi => &mut self.bidi,
            Kind::ZeroWidth => &mut self.zero_width,
            Kind::Control => &mut self.controls,
            Kind::Ansi => &mut self.ansi,
            Kind::Invisible => &mut self.invisible,
            Kind::Selector => &mut self.variation_selectors,
            Kind::Separator => &mut self.line_separators,
        };
        *slot = slot.saturating_add(1);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Tag,
    Bidi,
    ZeroWidth,
    Control,
    Ansi,
    Invisible,
    Selector,
    Separator,
}

/// The recommended (RGI) emoji tag sequences: the flags of England, Scotland and Wales. Any
/// other run of tag characters is a carrier for hidden ASCII and is removed.
const RGI_SUBDIVISIONS: [&[u8]; 3] = [b"gbeng", b"gbsct", b"gbwls"];
const BLACK_FLAG: char = '\u{1F3F4}';
const CANCEL_TAG: char = '\u{E007F}';

pub(super) fn is_tag(c: char) -> bool {
    matches!(c, '\u{E0000}'..='\u{E007F}')
}

/// Where `text` would end without the unended tag run it ends with: a prefix cut inside a
/// subdivision flag (kept whole by sanitising) ends in tag characters, invisible, without the
/// cancel tag that ends them. `text.len()` when it ends otherwise (a whole flag included).
pub(super) fn before_unended_tags(text: &str) -> usize {
    let mut end = text.len();
    for (i, c) in text.char_indices().rev() {
        if !is_tag(c) || c == CANCEL_TAG {
            break;
        }
        end = i;
    }
    end
}

fn is_selector(c: char) -> bool {
    matches!(c, '\u{FE00}'..='\u{FE0F}' | '\u{E0100}'..='\u{E01EF}')
}

fn is_cjk_ideograph(c: char) -> bool {
    matches!(c, '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}' | '\u{F900}'..='\u{FAFF}'
        | '\u{20000}'..='\u{3FFFF}')
}

/// Characters removed wherever they are, by kind.
fn removable(c: char) -> Option<Kind> {
    Some(match c {
        '\u{202A}'..='\u{202E}'
        | '\u{2066}'..='\u{2069}'
        | '\u{200E}'
        | '\u{200F}'
        | '\u{061C}' => Kind::Bidi,
        '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' => Kind::ZeroWidth,
        '\u{00AD}'
        | '\u{034F}'
        | '\u{115F}'
        | '\u{1160}'
        | '\u{17B4}'
        | '\u{17B5}'
        | '\u{180B}'..='\u{180F}'
        | '\u{2061}'..='\u{2065}'
        | '\u{206A}'..='\u{206F}'
        | '\u{3164}'
        | '\u{FFA0}'
        | '\u{FFF9}'..='\u{FFFB}'
        | '\u{1BCA0}'..='\u{1BCA3}'
        | '\u{1D173}'..='\u{1D17A}' => Kind::Invisible,
        '\n' | '\t' => return None,
        c if c.is_control() => Kind::Control,
        _ => return None,
    })
}

/// What `c` is when a reader cannot see it or it reorders what they see (a tag character, a
/// bidi control, a zero-width or other invisible character, a control, newline and tab
/// included, a variation selector, a line separator); `None` for a visible character. For
/// settings echoed into every answer, which are refused rather than cleaned.
pub(crate) fn unseen(c: char) -> Option<&'static str> {
    if is_tag(c) {
        return Some("a Unicode tag character");
    }
    if is_selector(c) {
        return Some("a variation selector");
    }
    Some(match removable(c) {
        Some(Kind::Bidi) => "a bidi control",
        Some(Kind::ZeroWidth) => "a zero-width character",
        Some(Kind::Invisible) => "an invisible format character",
        Some(_) => "a control character",
        None if c.is_control() => "a control character",
        None if matches!(c, '\u{2028}' | '\u{2029}') => "a line separator",
        None => return None,
    })
}

fn safe_ascii(b: u8) -> bool {
    (0x20..0x7f).contains(&b) || b == b'\n' || b == b'\t'
}

/// Whether `c` (not plain ASCII) needs the slow path: removed, replaced or checked in context.
pub(super) fn needs_work(c: char) -> bool {
    removable(c).is_some() || is_tag(c) || is_selector(c) || matches!(c, '\u{2028}' | '\u{2029}')
}

/// The end of the ANSI escape sequence that starts at `i` (an ESC, or a C1 introducer), and
/// whether it is a sequence at all (a lone ESC is just a control).
fn escape_end(bytes: &[u8], i: usize, c: char) -> (usize, bool) {
    fn csi(bytes: &[u8], mut k: usize) -> usize {
        while k < bytes.len() && (0x20..=0x3f).contains(&bytes[k]) {
            k += 1;
        }
        if k < bytes.len() && (0x40..=0x7e).contains(&bytes[k]) {
            k + 1
        } else {
            k
        }
    }
    // OSC, DCS, SOS, PM, APC: a string ended by BEL, ESC \ or U+009C (or the end of the text).
    fn string(bytes: &[u8], mut k: usize) -> usize {
        while k < bytes.len() {
            match bytes[k] {
                0x07 => return k + 1,
                0x1b if bytes.get(k + 1) == Some(&b'\\') => return k + 2,
                0xc2 if bytes.get(k + 1) == Some(&0x9c) => return k + 2,
                _ => k += 1,
            }
        }
        k
    }
    let after = i + c.len_utf8();
    match c {
        '\u{1b}' => match bytes.get(after) {
            Some(b'[') => (csi(bytes, after + 1), true),
            Some(b']' | b'P' | b'X' | b'^' | b'_') => (string(bytes, after + 1), true),
            Some(0x20..=0x2f) => {
                let mut k = after;
                while k < bytes.len() && (0x20..=0x2f).contains(&bytes[k]) {
                    k += 1;
                }
                if k < bytes.len() && (0x30..=0x7e).contains(&bytes[k]) {
                    k += 1;
                }
                (k, true)
            }
            Some(0x30..=0x7e) => (after + 1, true),
            _ => (after, false),
        },
        '\u{9b}' => (csi(bytes, after), true),
        _ => (string(bytes, after), true),
    }
}

fn is_escape_start(c: char) -> bool {
    matches!(
        c,
        '\u{1b}' | '\u{90}' | '\u{98}' | '\u{9b}' | '\u{9d}' | '\u{9e}' | '\u{9f}'
    )
}

/// Whether the run of tag characters `run` (all tag characters) after `prev` is a recommended
/// subdivision flag: black flag, tag letters of an RGI code, cancel tag.
pub(super) fn valid_flag(prev: Option<char>, run: &str) -> bool {
    if prev != Some(BLACK_FLAG) || !run.ends_with(CANCEL_TAG) {
        return false;
    }
    let mut code = [0u8; 8];
    let mut n = 0;
    for c in run.chars() {
        if c == CANCEL_TAG {
            break;
        }
        let ascii = (c as u32).wrapping_sub(0xE0000);
        if n == code.len() || !(0x20..0x7f).contains(&ascii) {
            return false;
        }
        code[n] = ascii as u8;
        n += 1;
    }
    // Exactly one cancel tag, at the end.
    run.chars().filter(|&c| c == CANCEL_TAG).count() == 1
        && RGI_SUBDIVISIONS.iter().any(|rgi| *rgi == &code[..n])
}

/// The output of sanitising: borrowed until the first change.
struct Out<'t> {
    src: &'t str,
    /// `None` while the output is `src[..pos]`.
    buf: Option<String>,
    limit: usize,
}

impl<'t> Out<'t> {
    fn len(&self, pos: usize) -> usize {
        self.buf.as_ref().map_or(pos, String::len)
    }

    fn last(&self, pos: usize) -> Option<char> {
        match &self.buf {
            Some(b) => b.chars().next_back(),
            None => self.src[..pos].chars().next_back(),
        }
    }

    /// Keeps `src[from..to]`; false (and nothing kept) when it would pass the limit.
    fn keep(&mut self, from: usize, to: usize) -> bool {
        if self.len(from) + (to - from) > self.limit {
            return false;
        }
        if let Some(b) = &mut self.buf {
            b.push_str(&self.src[from..to]);
        }
        true
    }

    /// Drops the source from `pos` on (and starts owning the output).
    fn change(&mut self, pos: usize) -> &mut String {
        let src = self.src;
        self.buf.get_or_insert_with(|| {
            let mut s = String::with_capacity(src.len().min(self.limit.saturating_add(16)));
            s.push_str(&src[..pos]);
            s
        })
    }
}

/// Sanitises `text`, producing at most `limit` bytes; returns the output, the counts and how
/// many input bytes were consumed (less than `text.len()` when the limit was reached).
pub(super) fn sanitize_limited(text: &str, limit: usize) -> (Cow<'_, str>, Removed, usize) {
    let bytes = text.as_bytes();
    let mut out = Out {
        src: text,
        buf: None,
        limit,
    };
    let mut removed = Removed::default();
    let mut i = 0;
    'scan: while i < bytes.len() {
        // A run of characters kept as they are, scanned no further than the room left (so
        // a value far longer than the limit is not scanned to its end).
        let mut j = i;
        let mut special = None;
        let stop = i
            .saturating_add(limit.saturating_sub(out.len(i)))
            .saturating_add(1)
            .min(bytes.len());
        while j < stop {
            if bytes[j] < 0x80 {
                if safe_ascii(bytes[j]) {
                    j += 1;
                    continue;
                }
                special = Some(bytes[j] as char);
                break;
            }
            let Some(c) = text[j..].chars().next() else {
                break;
            };
            if needs_work(c) {
                special = Some(c);
                break;
            }
            j += c.len_utf8();
        }
        if !out.keep(i, j) {
            let room = limit.saturating_sub(out.len(i));
            let mut end = i + room.min(j - i);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            out.keep(i, end);
            i = end;
            break 'scan;
        }
        i = j;
        let Some(c) = special else { break };
        let width = c.len_utf8();
        if is_escape_start(c) {
            let (end, sequence) = escape_end(bytes, i, c);
            removed.bump(if sequence { Kind::Ansi } else { Kind::Control });
            out.change(i);
            i = end;
        } else if is_tag(c) {
            let run_end = text[i..]
                .char_indices()
                .find(|&(_, c)| !is_tag(c))
                .map_or(text.len(), |(k, _)| i + k);
            if valid_flag(out.last(i), &text[i..run_end]) {
                if !out.keep(i, run_end) {
                    break;
                }
            } else {
                for _ in text[i..run_end].chars() {
                    removed.bump(Kind::Tag);
                }
                out.change(i);
            }
            i = run_end;
        } else if is_selector(c) {
            let keep = match out.last(i) {
                Some(prev) if !is_selector(prev) && !prev.is_whitespace() => {
                    matches!(c, '\u{FE0E}' | '\u{FE0F}') || is_cjk_ideograph(prev)
                }
                _ => false,
            };
            if keep {
                if !out.keep(i, i + width) {
                    break;
                }
            } else {
                removed.bump(Kind::Selector);
                out.change(i);
            }
            i += width;
        } else {
            let (kind, newline) = match c {
                '\u{2028}' | '\u{2029}' => (Kind::Separator, true),
                '\u{85}' => (Kind::Control, true),
                '\r' => (Kind::Control, bytes.get(i + 1) != Some(&b'\n')),
                c => (removable(c).unwrap_or(Kind::Control), false),
            };
            if newline && out.len(i) + 1 > limit {
                break;
            }
            removed.bump(kind);
            let buf = out.change(i);
            if newline {
                buf.push('\n');
            }
            i += width;
        }
    }
    let clean = match out.buf {
        Some(b) => Cow::Owned(b),
        None => Cow::Borrowed(&text[..i]),
    };
    (clean, removed, i)
}

/// Removes invisible carriers from `text` and counts them by kind. Borrows when nothing
/// changes; idempotent (`sanitize(sanitize(x)) == sanitize(x)`).
///
/// Removed: Unicode tag characters (U+E0000–E007F) except the recommended subdivision flags
/// (England, Scotland, Wales), bidi controls, zero-width characters, other invisible format
/// characters, variation selectors that select nothing, C0 and C1 controls other than newline
/// and tab, and whole ANSI escape sequences. U+2028, U+2029, U+0085 and a lone carriage return
/// become `\n`.
///
/// ```
/// use toolshape::__seams::untrusted::sanitize;
/// use std::borrow::Cow;
///
/// let (clean, removed) = sanitize("\u{1b}[31mig\u{200B}nore\u{202E} all\u{E0041}");
/// assert_eq!(clean, "ignore all");
/// assert_eq!((removed.ansi, removed.zero_width, removed.bidi, removed.tag_chars), (1, 1, 1, 1));
///
/// // England's flag is a valid tag sequence and stays; plain text is borrowed.
/// let england = "\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}";
/// assert_eq!(sanitize(england).0, england);
/// assert!(matches!(sanitize("Card declined").0, Cow::Borrowed(_)));
/// ```
pub fn sanitize(text: &str) -> (Cow<'_, str>, Removed) {
    let (clean, removed, _) = sanitize_limited(text, usize::MAX);
    (clean, removed)
}
