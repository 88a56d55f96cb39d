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
    mut text: impl FnMut(&mut String, &str),
    mut field: impl FnMut(usize, &mut String) -> Result<(), E>,
) -> Result<(), E> {
    match &projection.prose {
        Some(segments) => {
            for segment in segments.as_ref() {
                match segment {
                    Segment::Text(piece) => text(out, piece.as_ref()),
                    Segment::Field(index) => field(*index, out)?,
                }
            }
        }
        None => {
            for (index, name) in projection.output_names().enumerate() {
                match fallback {
                    Fallback::Line => {
                        if index > 0 {
                            out.push_str("; ");
                        }
                        out.push_str(name);
                        out.push_str(": ");
                    }
                    Fallback::Inline => {
                        if index > 0 {
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
