//! The projection rules: which decisions an output may combine, what a record needs, what a
//! prose template may name. The derive reports a broken rule as a compile error at the
//! attribute's span, configuration as a start-up error at the TOML line: each consumer says
//! where (`L`), this module says what is wrong and what to write instead, in the writer's
//! [`Syntax`].

/// How the writer of a projection spells a decision, for the remedies a message gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    /// `#[shape(...)]` on a Rust field.
    Derive,
    /// `[tools.<name>.records]` in a configuration file.
    Config,
}

impl Syntax {
    fn rename(self) -> &'static str {
        match self {
            Syntax::Derive => "#[shape(rename = \"...\")]",
            Syntax::Config => "`rename`",
        }
    }

    fn rank_plain(self) -> &'static str {
        match self {
            Syntax::Derive => "`rank = asc` or `rank = desc`",
            Syntax::Config => "`rank = \"asc\"` or `rank = \"desc\"`",
        }
    }

    fn rank_fold(self) -> &'static str {
        match self {
            Syntax::Derive => "`rank(desc, max)`",
            Syntax::Config => "`rank = { order = \"desc\", fold = \"max\" }`",
        }
    }

    /// A path's text before a message about it, where the location does not point into it.
    fn path(self, source: &str) -> String {
        match self {
            Syntax::Derive => String::new(),
            Syntax::Config => format!("`{source}`: "),
        }
    }
}

/// The value transforms, in the order the first written one wins: a field gets one.
pub const TRANSFORMS: &[&str] = &["legend", "resolve", "id", "date", "untrusted", "nested"];

/// One shown output's decisions as written, each with where it was written (`L`: a span, a
/// line).
#[derive(Clone, Debug)]
pub struct Output<'a, L> {
    /// The name it is shown under.
    pub name: String,
    /// What it was written from (a field, a path), to name it in a message.
    pub source: String,
    /// Where the output is written (a duplicate name is reported there).
    pub at: L,
    /// Every decision key written (`skip`, `show`, `rename`, the transforms, `rank`, …), with
    /// where: the rules read which keys stand together.
    pub keys: Vec<(&'a str, L)>,
    /// The text of `rename`, with where it is written.
    pub rename: Option<(String, L)>,
    /// The word of `absent`, with where it is written.
    pub absent: Option<(String, L)>,
    /// Where the rank's fold is written, when it has one.
    pub fold: Option<L>,
    /// What is known of the output's path (`from`).
    pub path: Path<L>,
}

/// What the rules know of an output's path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path<L> {
    /// No path of its own: the value is the field itself.
    None,
    /// A path written that could not be read (its own mistake is reported where it is read):
    /// the rules about paths say nothing of it, rather than something false.
    Unread,
    /// A path, and where it goes through `[]` when it does.
    Read {
        /// Where the path goes through `[]`.
        each: Option<L>,
    },
}

impl<L: Copy> Output<'_, L> {
    fn key(&self, name: &str) -> Option<L> {
        self.keys
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, at)| *at)
    }

    /// The transforms written, in [`TRANSFORMS`]' order.
    fn transforms(&self) -> Vec<(&'static str, L)> {
        TRANSFORMS
            .iter()
            .filter_map(|t| self.key(t).map(|at| (*t, at)))
            .collect()
    }
}

/// Checks one output's decisions against each other, reporting each broken rule once.
pub fn check_output<L: Copy>(
    syntax: Syntax,
    output: &Output<'_, L>,
    report: &mut impl FnMut(L, String),
) {
    if output.key("skip").is_some() {
        for (name, at) in &output.keys {
            if *name != "skip" {
                report(*at, skip_with(name));
            }
        }
        return;
    }
    if let Some((text, at)) = &output.rename
        && let Err(msg) = rename(text)
    {
        report(*at, msg);
    }
    let transforms = output.transforms();
    if let Some(((first, _), rest)) = transforms.split_first() {
        for (name, at) in rest {
            report(
                *at,
                format!(
                    "`{first}` and `{name}` cannot be combined on one field: a field gets one \
                     value transform; keep one of them"
                ),
            );
        }
    }
    let rank = output.key("rank");
    let mut refused = false;
    if let Some(at) = rank {
        for (name, why) in [
            (
                "resolve",
                "it would order by opaque keys, not by the names shown",
            ),
            (
                "untrusted",
                "attacker-controlled text must not decide what survives a cut",
            ),
            ("nested", "records of their own have no one key to order by"),
        ] {
            if transforms.iter().any(|(n, _)| *n == name) {
                report(
                    at,
                    format!(
                        "`rank` cannot be used on a `{name}` field: {why}; rank by another field"
                    ),
                );
                refused = true;
            }
        }
    }
    if let Some((word, at)) = &output.absent
        && let Err(msg) = absent_word(word)
    {
        report(*at, msg);
    }
    if let Some(at) = output.key("empty_is_absent")
        && let Some((name, _)) = transforms.iter().find(|(n, _)| *n != "untrusted")
    {
        report(
            at,
            format!(
                "`empty_is_absent` cannot be combined with `{name}`: it reads an empty text or \
                 list as absent, for a value shown as it is or as `untrusted` text; remove one \
                 of them"
            ),
        );
    }
    let (has_path, each) = match output.path {
        Path::Unread => return,
        Path::None => (false, None),
        Path::Read { each } => (true, each),
    };
    let path = syntax.path(&output.source);
    if output.key("id").is_some()
        && let Some(at) = each
    {
        report(
            at,
            format!(
                "{path}an `id` path cannot go through `[]`: a record has exactly one id; put \
                 `id` on a path to one value (`?` is allowed)"
            ),
        );
    }
    // A rank refused has no path to fold: one message is enough.
    match (rank, output.fold, each) {
        _ if refused => {}
        (Some(at), None, Some(_)) => report(
            at,
            format!(
                "a `rank` path through `[]` needs a fold that makes its values one key: {}, or \
                 sum, min, count",
                syntax.rank_fold()
            ),
        ),
        (_, Some(at), None) if !has_path => report(
            at,
            format!(
                "a rank fold reads the values of a `from` path through `[]` (`from = \
                 statuses[].restarts`); this field has no path: write {}",
                syntax.rank_plain()
            ),
        ),
        (_, Some(at), None) => report(
            at,
            format!(
                "a rank fold reads the values of a path through `[]`; this path has none: write {}",
                syntax.rank_plain()
            ),
        ),
        _ => {}
    }
}

/// Checks what one record's shown outputs need together: unique names, one id, one rank key.
pub fn check_record<L: Copy>(
    syntax: Syntax,
    outputs: &[Output<'_, L>],
    report: &mut impl FnMut(L, String),
) {
    for (i, output) in outputs.iter().enumerate() {
        let before = &outputs[..i];
        if let Some(first) = before.iter().find(|o| o.name == output.name) {
            report(
                output.at,
                format!(
                    "two fields are shown as `{}` (`{}` and `{}`): output names must be unique; \
                     give one of them {}",
                    output.name,
                    first.source,
                    output.source,
                    syntax.rename()
                ),
            );
        }
        for (key, remedy) in [
            (
                "id",
                "a record has one id; keep `id` on the field other tools take as an argument",
            ),
            (
                "rank",
                "the record is ranked by one key; remove `rank` from one of them",
            ),
        ] {
            if let Some(at) = output.key(key)
                && let Some(first) = before.iter().find(|o| o.key(key).is_some())
            {
                report(
                    at,
                    format!(
                        "`{key}` is on two fields (`{}` and `{}`): {remedy}",
                        first.source, output.source
                    ),
                );
            }
        }
    }
}

/// The message for a record whose every field is skipped.
pub fn all_skipped(syntax: Syntax) -> &'static str {
    match syntax {
        Syntax::Derive => {
            "every field is skipped: a tool result needs at least one field marked `show` \
             (or shaped by rename, legend, resolve, id, date, untrusted or rank)"
        }
        Syntax::Config => "every field is skipped: a record needs at least one output",
    }
}

/// The message for `skip` written beside another decision.
pub fn skip_with(key: &str) -> String {
    format!(
        "`skip` cannot be combined with `{key}`: a skipped field is not shown; remove `{key}`, \
         or remove `skip` to show the field"
    )
}

/// A record's `name` or `plural` (`key`), which summaries read.
pub fn record_name(key: &str, value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        Err(format!(
            "`{key}` must not be empty: it is how summaries name the records"
        ))
    } else {
        Ok(())
    }
}

/// An output's new name.
pub fn rename(name: &str) -> Result<(), String> {
    if name.trim().is_empty() {
        Err("`rename` must not be empty: write the name the model should read".to_owned())
    } else if name
        .chars()
        .any(|c| c.is_control() || c == '"' || c == '{' || c == '}' || c == '|')
    {
        Err(
            "`rename` must be a plain name: no quotes, braces, pipes or control characters"
                .to_owned(),
        )
    } else {
        Ok(())
    }
}

/// An absence word, shown as is inside a prose line or a table cell.
pub fn absent_word(word: &str) -> Result<(), String> {
    if word.trim().is_empty() {
        Err(
            "`absent` must not be empty: write the word a reader should see, such as \
             \"unassigned\" or \"no labels\""
                .to_owned(),
        )
    } else if word.chars().any(|c| c.is_control() || c == '|') {
        Err("`absent` must be plain words: no pipes or control characters".to_owned())
    } else {
        Ok(())
    }
}

/// A piece of a checked prose template: literal text, or the index of an output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    /// Literal text.
    Text(String),
    /// The output at this index.
    Field(usize),
}

/// The prose template over `outputs` (the shown names, in order), or every mistake in it;
/// `skipped` says whether a name is a field left out, for a message that says so.
pub fn prose(
    template: &str,
    outputs: &[&str],
    skipped: impl Fn(&str) -> bool,
) -> Result<Vec<Segment>, Vec<String>> {
    use crate::template::Piece;
    let pieces = crate::template::parse(template).map_err(|msg| vec![msg])?;
    if !pieces.iter().any(|p| matches!(p, Piece::Field(_))) {
        return Err(vec![
            "prose template names no field: add placeholders such as `{id}`".to_owned(),
        ]);
    }
    let mut segments = Vec::with_capacity(pieces.len());
    let mut mistakes = Vec::new();
    for piece in pieces {
        match piece {
            Piece::Text(text) => segments.push(Segment::Text(text)),
            Piece::Field(name) => match outputs.iter().position(|n| *n == name) {
                Some(index) => segments.push(Segment::Field(index)),
                None => {
                    let why = if skipped(&name) {
                        format!("`{name}` is skipped, so it is not in the output")
                    } else {
                        format!("`{name}` is not an output field")
                    };
                    mistakes.push(format!(
                        "prose placeholder `{{{name}}}`: {why}; output fields are: {}",
                        outputs.join(", ")
                    ));
                }
            },
        }
    }
    if mistakes.is_empty() {
        Ok(segments)
    } else {
        Err(mistakes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output<'a>(keys: &[&'a str]) -> Output<'a, &'a str> {
        Output {
            name: "title".into(),
            source: "title".into(),
            at: "output",
            keys: keys.iter().map(|k| (*k, *k)).collect(),
            rename: None,
            absent: None,
            fold: None,
            path: Path::None,
        }
    }

    fn broken(syntax: Syntax, o: &Output<'_, &'static str>) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        check_output(syntax, o, &mut |at, msg| out.push((at, msg)));
        out
    }

    #[test]
    fn skip_stands_alone_and_the_first_transform_wins() {
        let errs = broken(Syntax::Derive, &output(&["skip", "rename", "legend"]));
        assert_eq!(errs.len(), 2);
        assert_eq!(errs[0].0, "rename");
        assert!(
            errs[1]
                .1
                .starts_with("`skip` cannot be combined with `legend`")
        );
        let errs = broken(Syntax::Config, &output(&["nested", "date", "legend"]));
        assert_eq!(
            errs.iter().map(|e| e.0).collect::<Vec<_>>(),
            ["date", "nested"],
            "legend comes first in TRANSFORMS: the others are the ones reported"
        );
        assert!(broken(Syntax::Config, &output(&["show", "date", "rank"])).is_empty());
    }

    #[test]
    fn rank_needs_a_key_it_can_order_by() {
        for t in ["resolve", "untrusted", "nested"] {
            let errs = broken(Syntax::Derive, &output(&["rank", t]));
            assert_eq!(errs.len(), 1, "{t}");
            assert_eq!(errs[0].0, "rank");
        }
        let mut o = output(&["rank"]);
        o.path = Path::Read { each: Some("each") };
        assert!(broken(Syntax::Config, &o)[0].1.contains("fold = \"max\""));
        assert!(
            broken(Syntax::Derive, &o)[0]
                .1
                .contains("`rank(desc, max)`")
        );
        o.fold = Some("fold");
        assert!(broken(Syntax::Derive, &o).is_empty());
        o.path = Path::None;
        assert!(
            broken(Syntax::Derive, &o)[0]
                .1
                .contains("this field has no path")
        );
        o.path = Path::Read { each: None };
        assert!(
            broken(Syntax::Config, &o)[0]
                .1
                .contains("this path has none")
        );
        // A path that could not be read: nothing said of it (its own mistake is said).
        o.path = Path::Unread;
        assert!(broken(Syntax::Config, &o).is_empty());
        let mut id = output(&["id"]);
        id.path = Path::Unread;
        assert!(broken(Syntax::Config, &id).is_empty());
    }

    #[test]
    fn each_syntax_reads_its_own_remedies() {
        let mut o = output(&["rank"]);
        o.fold = Some("fold");
        assert!(
            broken(Syntax::Derive, &o)[0]
                .1
                .ends_with("write `rank = asc` or `rank = desc`")
        );
        assert!(
            broken(Syntax::Config, &o)[0]
                .1
                .ends_with("write `rank = \"asc\"` or `rank = \"desc\"`")
        );
        let mut o = output(&["id"]);
        o.source = "assignees[].login".into();
        o.path = Path::Read { each: Some("each") };
        assert!(
            broken(Syntax::Config, &o)[0]
                .1
                .starts_with("`assignees[].login`: an `id` path cannot go through `[]`")
        );
        assert!(broken(Syntax::Derive, &o)[0].1.starts_with("an `id` path"));
        assert!(all_skipped(Syntax::Derive).starts_with("every field is skipped: "));
        assert!(all_skipped(Syntax::Config).starts_with("every field is skipped: "));
        assert_ne!(all_skipped(Syntax::Derive), all_skipped(Syntax::Config));
    }

    #[test]
    fn empty_is_absent_stands_with_untrusted_text_only() {
        assert!(broken(Syntax::Derive, &output(&["empty_is_absent", "untrusted"])).is_empty());
        assert!(broken(Syntax::Derive, &output(&["empty_is_absent"])).is_empty());
        let errs = broken(Syntax::Derive, &output(&["empty_is_absent", "legend"]));
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].0, "empty_is_absent");
    }

    #[test]
    fn a_refused_rank_is_named_once() {
        let mut o = output(&["rank", "nested"]);
        o.path = Path::Read { each: Some("each") };
        let errs = broken(Syntax::Config, &o);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(errs[0].1.contains("a `nested` field"));
    }

    #[test]
    fn words_at_their_edges() {
        assert!(rename("a").is_ok());
        assert!(rename(" ").is_err());
        for bad in ["a|b", "a\"b", "a{b", "a}b", "a\nb"] {
            assert!(rename(bad).is_err(), "{bad:?}");
        }
        assert!(absent_word("none").is_ok());
        assert!(absent_word("").is_err());
        assert!(absent_word("a\tb").is_err());
        assert!(record_name("name", "issue").is_ok());
        assert!(record_name("plural", " ").is_err());
    }

    #[test]
    fn a_record_has_unique_names_one_id_one_rank() {
        let mut a = output(&["id", "rank"]);
        a.source = "a".into();
        let mut b = output(&["id", "rank"]);
        b.source = "b".into();
        b.at = "b";
        let mut out = Vec::new();
        check_record(Syntax::Config, &[a, b], &mut |at, msg| out.push((at, msg)));
        assert_eq!(out.len(), 3, "{out:?}");
        assert!(out[0].1.contains("(`a` and `b`)") && out[0].1.ends_with("`rename`"));
    }

    #[test]
    fn prose_names_outputs_only() {
        assert_eq!(
            prose("#{id} {title}", &["id", "title"], |_| false),
            Ok(vec![
                Segment::Text("#".into()),
                Segment::Field(0),
                Segment::Text(" ".into()),
                Segment::Field(1)
            ])
        );
        let errs = prose("{a} {b}", &["id"], |n| n == "b").unwrap_err();
        assert!(errs[0].contains("`a` is not an output field"));
        assert!(errs[1].contains("`b` is skipped"));
        assert!(prose("no field", &["id"], |_| false).is_err());
    }
}
