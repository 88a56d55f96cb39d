//! Prose templates: `"{id} \"{subject}\": {status}"`, with `{{` and `}}` for literal braces.
//!
//! ```
//! use toolshape_internals::template::{parse, Piece};
//!
//! let pieces = parse("#{number} {title} {{draft}}").unwrap();
//! assert!(matches!(&pieces[..], [Piece::Text(a), Piece::Field(n), Piece::Text(b), Piece::Field(t), Piece::Text(c)]
//!     if a == "#" && n == "number" && b == " " && t == "title" && c == " {draft}"));
//! assert_eq!(parse("{title").err().unwrap(), "unclosed `{title` in prose template: close it with `}`, or write `{{` for a literal brace");
//! ```

/// A piece of a template: literal text, or a placeholder naming an output field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Literal text (`{{` and `}}` already made single braces).
    Text(String),
    /// A placeholder's field name, trimmed.
    Field(String),
}

/// Splits a template into literal text and placeholders, or says what is wrong with it (the
/// first mistake, in words both the compiler's error and the configuration's name).
pub fn parse(template: &str) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                text.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                text.push('}');
            }
            '}' => {
                return Err(
                    "unmatched `}` in prose template: write `}}` for a literal brace".into(),
                );
            }
            '{' => {
                let mut name = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) => name.push(c),
                        None => {
                            return Err(format!(
                                "unclosed `{{{name}` in prose template: close it with `}}`, \
                                 or write `{{{{` for a literal brace"
                            ));
                        }
                    }
                }
                let name = name.trim().to_owned();
                if name.is_empty() {
                    return Err(
                        "empty `{}` in prose template: name an output field, as in `{id}`".into(),
                    );
                }
                if name.contains(':') || name.contains('{') {
                    return Err(format!(
                        "`{{{name}}}` in prose template: placeholders take an output field name \
                         only, with no format options"
                    ));
                }
                if !text.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut text)));
                }
                pieces.push(Piece::Field(name));
            }
            c => text.push(c),
        }
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Ok(pieces)
}
