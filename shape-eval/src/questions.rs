//! Question sets: the questions a tool must answer and the facts each one needs, checked
//! against a projection, so a view that drops a needed field fails a test instead of
//! answering wrongly for a month.
//!
//! A fact is named through the compiler, never as a string: an output field by the typed
//! reference the derive emits (`Ticket::FIELDS.assignee`), or any field of the domain struct,
//! shown or skipped, with [`source_field!`](crate::questions::source_field) (`source_field!(Ticket,
//! sla_due_at)`). A misspelt field is a compile error either way. [`Questions::check`] then
//! says, per question, whether the answer the model reads carries every fact it needs, and
//! why not when it does not: the view leaves the field out, the prose template does not show
//! it, or the record has no such field.
//!
//! ```
//! use toolshape::{Format, ToolResult};
//! use toolshape_eval::questions::{Questions, source_field};
//!
//! #[derive(ToolResult)]
//! #[shape(name = "ticket", plural = "tickets", prose = "{id}: {priority}")]
//! pub struct Ticket {
//!     #[shape(id)]   pub id: String,
//!     #[shape(show)] pub priority: String,
//!     #[shape(show)] pub assignee: Option<String>,
//!     #[shape(skip)] pub sla_due_at: Option<String>,
//! }
//!
//! let questions = Questions::for_tool("search_tickets")
//!     .ask("which urgent tickets are open?").needs(Ticket::FIELDS.id).needs(Ticket::FIELDS.priority)
//!     .ask("who is working on tkt_9f3a71c4?").needs(Ticket::FIELDS.assignee)
//!     .ask("which tickets breach SLA this week?").needs(source_field!(Ticket, sla_due_at));
//!
//! let json = questions.check::<Ticket>(Format::Json);
//! assert_eq!(json.answerable(), 2);
//! assert_eq!(
//!     json.gaps().collect::<Vec<_>>(),
//!     ["which tickets breach SLA this week? needs sla_due_at, which this view leaves out"],
//! );
//! // The prose line shows only what its template names.
//! let prose = questions.check::<Ticket>(Format::Prose);
//! assert_eq!(prose.answerable(), 1);
//! assert!(prose.gaps().any(|g| g.ends_with("needs assignee, which the prose template does not show")));
//! ```
//!
//! In a test, [`Coverage::assert_complete`] fails with every gap named; rerun the question
//! set when the question mix changes with the one command that runs the test.

use std::fmt;
use toolshape::__private::{FieldRef, Projection, Segment, Storage};
use toolshape::{Format, ToolResult};

/// Names a field of a domain struct deriving [`ToolResult`], shown or
/// skipped, as a question's [`Fact`]: `source_field!(Ticket, sla_due_at)`. The field is
/// checked by the compiler (a misspelt or missing field does not compile); use it for facts
/// a view may leave out, where `Ticket::FIELDS` (output fields only) cannot reach.
///
/// ```
/// use toolshape::ToolResult;
/// use toolshape_eval::questions::source_field;
///
/// #[derive(ToolResult)]
/// pub struct Ticket {
///     #[shape(id)]   pub id: String,
///     #[shape(skip)] pub sla_due_at: Option<String>,
/// }
///
/// assert_eq!(source_field!(Ticket, sla_due_at).name(), "sla_due_at");
/// ```
#[doc(hidden)]
#[macro_export]
macro_rules! __source_field {
    ($record:ty, $field:ident) => {
        $crate::questions::Fact::__source::<$record>(::core::stringify!($field), |__record| {
            let _ = &__record.$field;
        })
    };
}

#[doc(inline)]
pub use crate::__source_field as source_field;

/// One fact a question needs: an output field (from `Record::FIELDS`) or a field of the
/// domain struct (from [`source_field!`](crate::questions::source_field)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fact {
    name: &'static str,
    kind: FactKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FactKind {
    /// An output name.
    Output,
    /// A Rust field of the struct whose projection is `record`.
    Source { record: &'static str },
}

impl Fact {
    /// The field's name: the output name, or the Rust field's name for a source field.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// What [`source_field!`](crate::questions::source_field) expands to; `check` only makes the
    /// compiler look the field up.
    #[doc(hidden)]
    pub fn __source<T: ToolResult>(name: &'static str, check: fn(&T)) -> Fact {
        let _ = check;
        Fact {
            name,
            kind: FactKind::Source {
                record: T::PROJECTION.name,
            },
        }
    }
}

impl From<FieldRef> for Fact {
    fn from(field: FieldRef) -> Fact {
        Fact {
            name: field.name(),
            kind: FactKind::Output,
        }
    }
}

/// One question and the facts its answer needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    text: String,
    needs: Vec<Fact>,
}

impl Question {
    /// The question, as the agent is asked it.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The facts its answer needs.
    pub fn needs(&self) -> &[Fact] {
        &self.needs
    }
}

/// The questions a tool must answer, each with the facts it needs. Built with
/// [`ask`](Questions::ask), then [`needs`](Questions::needs) once per fact of that question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Questions {
    tool: String,
    questions: Vec<Question>,
    /// Facts named before any question: reported by every check, never dropped.
    stray: Vec<Fact>,
}

impl Questions {
    /// An empty question set for `tool`.
    pub fn for_tool(tool: impl Into<String>) -> Questions {
        Questions {
            tool: tool.into(),
            questions: Vec::new(),
            stray: Vec::new(),
        }
    }

    /// Adds a question; the [`needs`](Questions::needs) calls that follow belong to it.
    pub fn ask(mut self, question: impl Into<String>) -> Questions {
        self.questions.push(Question {
            text: question.into(),
            needs: Vec::new(),
        });
        self
    }

    /// A fact the last question asked needs.
    pub fn needs(mut self, fact: impl Into<Fact>) -> Questions {
        let fact = fact.into();
        match self.questions.last_mut() {
            Some(question) => question.needs.push(fact),
            None => self.stray.push(fact),
        }
        self
    }

    /// The tool.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The questions, in the order asked.
    pub fn questions(&self) -> &[Question] {
        &self.questions
    }

    /// Whether the answers of record type `T`, written in `format`, carry what each question
    /// needs.
    pub fn check<T: ToolResult>(&self, format: Format) -> Coverage {
        self.check_projection(T::PROJECTION, format)
    }

    /// The same against any record description: a derive's, or one read back from a stored
    /// result or narrowed by an `open_result` selection.
    pub fn check_projection<S: Storage>(
        &self,
        projection: &Projection<S>,
        format: Format,
    ) -> Coverage {
        let mut answers: Vec<Answer> = self
            .questions
            .iter()
            .map(|q| Answer {
                question: q.text.clone(),
                gaps: q
                    .needs
                    .iter()
                    .filter_map(|fact| gap(projection, format, fact))
                    .collect(),
            })
            .collect();
        if !self.stray.is_empty() {
            answers.push(Answer {
                question: "(a fact named before any question)".to_owned(),
                gaps: self
                    .stray
                    .iter()
                    .map(|fact| Gap {
                        field: fact.name.to_owned(),
                        why: Why::NoQuestion,
                    })
                    .collect(),
            });
        }
        Coverage {
            tool: self.tool.clone(),
            record: projection.name.as_ref().to_owned(),
            format,
            answers,
        }
    }
}

/// Why the answer does not carry `fact`, or `None` when it does.
fn gap<S: Storage>(projection: &Projection<S>, format: Format, fact: &Fact) -> Option<Gap> {
    let fields = projection.fields.as_ref();
    let shown = match fact.kind {
        FactKind::Output => fields.iter().position(|f| f.name.as_ref() == fact.name),
        FactKind::Source { .. } => fields.iter().position(|f| f.source.as_ref() == fact.name),
    };
    let why = match shown {
        Some(index) => {
            let in_template = match (&projection.prose, format) {
                (Some(template), Format::Prose) => template
                    .as_ref()
                    .iter()
                    .any(|s| matches!(s, Segment::Field(i) if *i == index)),
                _ => true,
            };
            if in_template {
                return None;
            }
            Why::NotInTemplate
        }
        None => {
            let skipped = projection
                .skipped
                .as_ref()
                .iter()
                .any(|s| s.as_ref() == fact.name);
            // A source field checked by the compiler on this very record and not shown was
            // skipped, whatever name `omitted.fields` gives it.
            let same_record = matches!(fact.kind, FactKind::Source { record } if record == projection.name.as_ref());
            if skipped || same_record {
                Why::LeftOut
            } else {
                Why::NotInRecord(projection.name.as_ref().to_owned())
            }
        }
    };
    Some(Gap {
        field: fact.name.to_owned(),
        why,
    })
}

/// Why an answer does not carry a fact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// The projection skips the field (it is in `omitted.fields`).
    LeftOut,
    /// The field is shown, but the prose template does not name it, so the text channel in
    /// prose never writes it.
    NotInTemplate,
    /// The record (named) has no such field: the fact was named on another record type.
    NotInRecord(String),
    /// The fact was named before any question.
    NoQuestion,
}

impl fmt::Display for Why {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Why::LeftOut => f.write_str("which this view leaves out"),
            Why::NotInTemplate => f.write_str("which the prose template does not show"),
            Why::NotInRecord(record) => write!(f, "which a {record} does not have"),
            Why::NoQuestion => f.write_str("named before any question: call `ask` first"),
        }
    }
}

/// A fact an answer does not carry, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gap {
    /// The field.
    pub field: String,
    /// Why it is not in the answer.
    pub why: Why,
}

/// One question's result: answerable when `gaps` is empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The question.
    pub question: String,
    /// The facts it needs that the answer does not carry.
    pub gaps: Vec<Gap>,
}

impl Answer {
    /// Whether the answer carries every fact the question needs.
    pub fn is_answerable(&self) -> bool {
        self.gaps.is_empty()
    }
}

impl fmt::Display for Answer {
    /// `which tickets breach SLA this week? needs sla_due_at, which this view leaves out`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.question)?;
        if self.gaps.is_empty() {
            return f.write_str(": answerable");
        }
        for (i, gap) in self.gaps.iter().enumerate() {
            let lead = if i == 0 { " needs" } else { "; it also needs" };
            write!(f, "{lead} {}, {}", gap.field, gap.why)?;
        }
        Ok(())
    }
}

/// Per question, whether a tool's answers carry what it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coverage {
    /// The tool.
    pub tool: String,
    /// The record type checked (`"ticket"`).
    pub record: String,
    /// The text format checked.
    pub format: Format,
    /// One entry per question, in the order asked.
    pub answers: Vec<Answer>,
}

impl Coverage {
    /// Questions whose every fact is carried.
    pub fn answerable(&self) -> usize {
        self.answers.iter().filter(|a| a.is_answerable()).count()
    }

    /// Whether every question is answerable.
    pub fn is_complete(&self) -> bool {
        self.answers.iter().all(Answer::is_answerable)
    }

    /// One sentence per question that is not answerable, naming the question and the field.
    pub fn gaps(&self) -> impl Iterator<Item = String> + '_ {
        self.answers
            .iter()
            .filter(|a| !a.is_answerable())
            .map(ToString::to_string)
    }

    /// Panics, naming every question that is not answerable and the fields it lacks: the
    /// assertion of a test that keeps a projection honest.
    #[track_caller]
    pub fn assert_complete(&self) {
        if !self.is_complete() {
            panic!("{self}");
        }
    }
}

impl fmt::Display for Coverage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let format = match self.format {
            Format::Json => "JSON",
            Format::Prose => "prose",
            Format::Table => "a table",
        };
        write!(
            f,
            "{}: {} of {} questions answerable from {} records in {format}",
            self.tool,
            self.answerable(),
            self.answers.len(),
            self.record,
        )?;
        for answer in &self.answers {
            let mark = if answer.is_answerable() { "ok" } else { "NO" };
            write!(f, "\n  {mark:<2} {answer}")?;
        }
        Ok(())
    }
}
