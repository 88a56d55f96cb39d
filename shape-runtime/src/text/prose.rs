//! Where a prose template is filled: a record's line in words, from its template
//! (`#[shape(prose = "{title} by {author}")]`) or, without one, from its fields' names and
//! values. A page's record lines and a nested record written inside another's line both come
//! here; they differ only in how the words are escaped and in the fallback's punctuation.

use crate::record::{Projection, Segment, Storage};

/// How a record without a template reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fallback {
    /// A record's own line: `title: Login fails; status: open`.
    Line,
    /// A nested record inside another's line, where `:` and `;` would read as the outer
    /// record's: `login alice, site admin false` (underscores read as spaces).
    Inline,
}

/// Writes `projection`'s line into `out`: each literal piece of the template through `text`,
/// each field through `field` (by its index).
pub(crate) fn fill<S: Storage, E>(
    projection: &Projection<S>,
    fallback: Fallback,
    out: &mut String,
    text: impl FnMut(&mut String, &str),
    field: impl FnMut(usize, &mut String) -> Result<(), E>,
) -> Result<(), E> {
    fill_shown(projection, fallback, out, text, field, |_| true)
}

/// [`fill`], leaving out the fields `shows` says the record does not have (a record nobody
/// described, whose keys differ from its neighbours'), and in a template the text right
/// after such a field.
pub(crate) fn fill_shown<S: Storage, E>(
    projection: &Projection<S>,
    fallback: Fallback,
    out: &mut String,
    mut text: impl FnMut(&mut String, &str),
    mut field: impl FnMut(usize, &mut String) -> Result<(), E>,
    shows: impl Fn(usize) -> bool,
) -> Result<(), E> {
    match &projection.prose {
        Some(segments) => {
            // A field the record does not have takes the text right after it with it
            // (`{part}: {text}` reads `«…»` for a record without a part).
            let mut skip_text = false;
            for segment in segments.as_ref() {
                match segment {
                    Segment::Text(piece) => {
                        if !std::mem::take(&mut skip_text) {
                            text(out, piece.as_ref());
                        }
                    }
                    Segment::Field(index) => {
                        skip_text = !shows(*index);
                        if !skip_text {
                            field(*index, out)?;
                        }
                    }
                }
            }
        }
        None => {
            let mut first = true;
            for (index, name) in projection.output_names().enumerate() {
                if !shows(index) {
                    continue;
                }
                let later = !std::mem::replace(&mut first, false);
                match fallback {
                    Fallback::Line => {
                        if later {
                            out.push_str("; ");
                        }
                        out.push_str(name);
                        out.push_str(": ");
                    }
                    Fallback::Inline => {
                        if later {
                            out.push_str(", ");
                        }
                        out.extend(name.chars().map(|c| if c == '_' { ' ' } else { c }));
                        out.push(' ');
                    }
                }
                field(index, out)?;
            }
        }
    }
    Ok(())
}
