//! The pipeline's first stage: the records of a page's reach, made in each channel's state
//! (tokenizer, untrusted-text policy, counters, the call's delimiter nonce), with the notes
//! the head states worked out once and applied to the text channel. Every entry point (typed
//! rows, a stored result reopened) hands a [`Source`] in here and gets a page out.

use super::inputs::{PageInputs, PageSettings, Records};
use super::notes::Notes;
use super::render::{Layout, RenderRecord, Typed};
use super::shaped::{ShapeError, Shaped};
use crate::budget::channel::PerChannel;
use crate::fields::view::Cx;
use crate::record::call_env::{CallEnv, Channel};
use crate::record::tool_result::ToolResult;
use crate::resolve::Resolvers;
use std::time::Instant;

/// Where a page's records come from: the records of its reach, in page order, projected in
/// one channel's state.
pub(crate) trait Source {
    /// One record, as the page renders it.
    type Record<'e>: RenderRecord
    where
        Self: 'e;

    /// The records of the page's reach, in page order, projected in `env`.
    fn records<'e>(&'e self, env: &'e CallEnv<'e>) -> Vec<Self::Record<'e>>;

    /// The tool the records came from, when not the one answering (a stored result
    /// reopened): their untrusted values' provenance names it.
    fn origin(&self) -> Option<&str> {
        None
    }
}

/// What is done with a page's records once [`prepare`] has made them: rendered into a page
/// ([`shape`]), or written in the stored form of a result kept behind a handle.
pub(crate) trait UseRecords<S: Source> {
    /// What comes of it.
    type Out;

    /// Whether the structured records count what they show (the page's report): a page's
    /// do; a stored form's or a summary's, written for every record of the result, do not
    /// (their counts were dropped, and counting is a whole read of each value).
    const COUNTS: bool = true;

    /// Uses the records of both channels.
    fn use_records<'r, 'e: 'r>(self, records: Records<'r, S::Record<'e>>) -> Self::Out
    where
        S: 'e;
}

/// Makes `source`'s records for each channel in a fresh per-call state, works out the notes
/// the head states (from the structured channel's records: the text channel's state carries
/// them), and hands them to `then`.
pub(crate) fn prepare<S: Source, U: UseRecords<S>>(
    settings: &PageSettings<'_>,
    source: &S,
    layout: &Layout<'_>,
    then: U,
) -> U::Out {
    // A view the configuration narrows is narrowed here, for every entry point.
    let narrowed = match layout.is_narrowed() {
        true => None,
        false => layout.narrowed(settings.hide),
    };
    let layout = narrowed.as_ref().unwrap_or(layout);
    let tool = source.origin().unwrap_or(settings.tool);
    let nonce = crate::untrusted::nonce();
    let env = |channel, counting| {
        CallEnv::new(tool, settings.tokenizer, settings.untrusted, &nonce)
            .with_pass(channel, counting)
    };
    let structured_env = env(Channel::Structured, U::COUNTS);
    // Declared before the structured records so that it outlives them (values drop in the
    // reverse order of declaration, and a record type may borrow both states): the text
    // channel's state is made from the notes those records give.
    #[expect(
        clippy::needless_late_init,
        reason = "the declaration sets the drop order"
    )]
    let text_env;
    let structured = source.records(&structured_env);
    let notes = Notes::of(
        settings.format,
        settings.untrusted,
        layout,
        &structured,
        (tool, settings.states_standing_facts()),
    );
    // Looking at the dates for the notes noticed nothing that counts.
    structured_env.take_diagnostics();
    text_env = env(Channel::Text, false)
        .with_date_style(notes.date_style)
        .with_compact_marks(notes.compact_marks)
        .with_named_fields(notes.named_fields);
    let text = source.records(&text_env);
    then.use_records(Records {
        rows: PerChannel {
            structured: &structured,
            text: &text,
        },
        counting: &structured_env,
        notes: &notes,
        nonce: &nonce,
    })
}

/// The page of `source`'s records: [`prepare`] then [`render`](super::pipeline::render).
pub(crate) fn shape<S: Source>(
    settings: &PageSettings<'_>,
    source: &S,
    layout: &Layout<'_>,
    page: PageInputs<'_>,
    start: Instant,
) -> Result<Shaped, ShapeError> {
    struct Render<'a> {
        settings: &'a PageSettings<'a>,
        layout: &'a Layout<'a>,
        page: PageInputs<'a>,
        start: Instant,
    }
    impl<S: Source> UseRecords<S> for Render<'_> {
        type Out = Result<Shaped, ShapeError>;
        fn use_records<'r, 'e: 'r>(self, records: Records<'r, S::Record<'e>>) -> Self::Out
        where
            S: 'e,
        {
            super::pipeline::render(self.settings, records, self.layout, self.page, self.start)
        }
    }
    let narrowed = layout.narrowed(settings.hide);
    let layout = narrowed.as_ref().unwrap_or(layout);
    let then = Render {
        settings,
        layout,
        page,
        start,
    };
    prepare(settings, source, layout, then)
}

/// Typed rows as a page's source: the rows at `order`, with the page's resolved `names`.
pub(crate) struct TypedRows<'a, T: ToolResult> {
    pub rows: &'a [T],
    pub order: &'a [usize],
    pub names: &'a <T::Needs as Resolvers>::Names,
}

impl<T: ToolResult> Source for TypedRows<'_, T> {
    type Record<'e>
        = Typed<'e, T>
    where
        Self: 'e;

    fn records<'e>(&'e self, env: &'e CallEnv<'e>) -> Vec<Typed<'e, T>> {
        let cx = Cx::<T::Needs>::new(self.names, env);
        self.order
            .iter()
            .map(|&i| Typed {
                record: &self.rows[i],
                cx,
            })
            .collect()
    }
}
