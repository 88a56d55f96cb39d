//! Rows that are pages of an upstream that pages itself (a REST API's `Link` header, a page
//! token): which upstream page a call fetches, and the plan the page pipeline follows.

use super::call::{Call, Resume, UpstreamRows};
use crate::cursor::{MAX_UPSTREAM_BYTES, UpstreamPosition};
use crate::page::ShapeError;
use crate::page::UpstreamPlan;

impl<'a> Call<'a> {
    /// Which upstream page to fetch, and how many of its records earlier answers showed:
    /// the upstream's first page on a first call (or one without a cursor). Call it after
    /// [`paginate`](Self::paginate), fetch that page whole, and declare it with
    /// [`upstream`](Self::upstream); the call skips the records already shown.
    ///
    /// See [`upstream`](Self::upstream) for the whole loop.
    pub fn upstream_position(&self) -> UpstreamPosition {
        match &self.after {
            Some(Resume::Upstream(at)) => at.clone(),
            _ => UpstreamPosition::start(),
        }
    }

    /// The rows are one whole page of an upstream that pages itself (a REST API with a
    /// `Link: rel="next"` header, a page token, an offset), in the upstream's order: `page`
    /// is the continuation that page was fetched with (as
    /// [`upstream_position`](Self::upstream_position) named it; `None` for the first page),
    /// `next` the upstream's continuation after it (`None` on its last page).
    ///
    /// The answer shows what fits from the position the cursor names; its `next` cursor
    /// carries the upstream page and the place inside it, so one upstream page shaped over
    /// several budgets continues exactly, then moves on to `next`. Until the upstream's last
    /// page the total is unknown, and the summary says so ("30 issues shown; more
    /// available") rather than stating a number; set [`total`](Self::total) when the
    /// upstream gives one. Rows keep the upstream's order. Continuations must be at most
    /// [`MAX_UPSTREAM_BYTES`] long; they come back signed, so a tool fetches only
    /// continuations its upstream issued.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolshape::cursor::{CursorCodec, CursorKeys, QueryHash};
    /// use toolshape::{Budget, Shaper, ToolResult};
    ///
    /// #[derive(ToolResult)]
    /// #[shape(name = "issue", plural = "issues", prose = "#{number} {title}")]
    /// struct Issue {
    ///     #[shape(show)]
    ///     number: u64,
    ///     #[shape(show)]
    ///     title: String,
    /// }
    ///
    /// /// An upstream serving pages of 4 by page number, with no total.
    /// fn fetch(page: Option<&str>) -> (Vec<Issue>, Option<String>) {
    ///     let n: u64 = page.and_then(|p| p.parse().ok()).unwrap_or(1);
    ///     let rows = (1..=10u64)
    ///         .skip(((n - 1) * 4) as usize)
    ///         .take(4)
    ///         .map(|number| Issue { number, title: format!("issue {number}") })
    ///         .collect();
    ///     (rows, (n * 4 < 10).then(|| (n + 1).to_string()))
    /// }
    ///
    /// let codec = Arc::new(CursorCodec::new(CursorKeys::new(b"a key of sixteen bytes or more")?));
    /// let query = QueryHash::of("list_issues", &serde_json::json!({"repo": "o/r"}))?;
    /// let shaper = Shaper::for_tool("list_issues").budget(Budget::tokens(200));
    /// let (mut cursor, mut pages) = (None::<String>, Vec::new());
    /// loop {
    ///     // Decode the cursor, fetch the upstream page it names, shape, answer.
    ///     let call = shaper.call().paginate(Arc::clone(&codec), query, cursor.as_deref())?;
    ///     let at = call.upstream_position();
    ///     let (rows, next) = fetch(at.page.as_deref());
    ///     let shaped = call.upstream(at.page.as_deref(), next).shape_blocking(&rows)?;
    ///     pages.push(shaped.summary().to_owned());
    ///     match shaped.next() {
    ///         Some(next) => cursor = Some(next.to_owned()),
    ///         None => break,
    ///     }
    /// }
    /// assert!(pages[0].contains("shown; more available"), "{}", pages[0]);
    /// assert!(pages.last().is_some_and(|s| s.contains("of 10")), "{pages:?}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn upstream(mut self, page: Option<&str>, next: Option<String>) -> Self {
        self.upstream = Some(UpstreamRows {
            pages: vec![(page.map(str::to_owned), None)],
            next,
        });
        self
    }

    /// The rows are several consecutive upstream pages, concatenated in order: each page's
    /// continuation (`None` for the upstream's first page) and how many rows it gave; `next`
    /// is the upstream's continuation after the last (`None` when it was the upstream's
    /// last). The first page is the one [`upstream_position`](Self::upstream_position)
    /// named. Fetch a second page when the first has few records left, so one answer can
    /// span the boundary; otherwise as [`upstream`](Self::upstream).
    pub fn upstream_pages<'p>(
        mut self,
        pages: impl IntoIterator<Item = (Option<&'p str>, usize)>,
        next: Option<String>,
    ) -> Self {
        self.upstream = Some(UpstreamRows {
            pages: pages
                .into_iter()
                .map(|(page, len)| (page.map(str::to_owned), Some(len)))
                .collect(),
            next,
        });
        self
    }

    /// The upstream pages this call's `rows` rows are, checked against them and the cursor;
    /// `None` when the rows are not from an upstream that pages itself.
    pub(crate) fn upstream_plan(
        &self,
        rows: usize,
    ) -> Result<Option<UpstreamPlan<'_>>, ShapeError> {
        let fail = |message: String| Err(ShapeError::Upstream(message));
        let Some(upstream) = &self.upstream else {
            return match &self.after {
                Some(Resume::Upstream(_)) => fail(
                    "the cursor continues a page of the upstream, but the rows were not \
                     declared as one: fetch the page `Call::upstream_position` names and \
                     declare it with `Call::upstream`"
                        .to_owned(),
                ),
                _ => Ok(None),
            };
        };
        let mut pages = Vec::with_capacity(upstream.pages.len());
        let mut declared = 0usize;
        for (page, len) in &upstream.pages {
            let len = len.unwrap_or(rows.saturating_sub(declared));
            declared = declared.saturating_add(len);
            pages.push((page.as_deref(), len));
        }
        if declared != rows {
            return fail(format!(
                "the upstream pages declared hold {declared} rows but {rows} were given; \
                 declare each page with the number of rows it gave"
            ));
        }
        let longest = pages
            .iter()
            .filter_map(|(page, _)| *page)
            .chain(upstream.next.as_deref())
            .map(str::len)
            .max()
            .unwrap_or(0);
        if longest > MAX_UPSTREAM_BYTES {
            return fail(format!(
                "an upstream continuation is {longest} bytes and a cursor carries at most \
                 {MAX_UPSTREAM_BYTES}: pass the page number, offset or token rather than a \
                 whole URL, and rebuild the URL from the query"
            ));
        }
        let skip = match &self.after {
            None => 0,
            Some(Resume::Upstream(at)) => {
                let first = pages.first().and_then(|(page, _)| *page);
                if first != at.page.as_deref() {
                    return fail(format!(
                        "the cursor continues upstream page {:?} but the rows start with page \
                         {first:?}: fetch the page `Call::upstream_position` names",
                        at.page
                    ));
                }
                usize::try_from(at.skip).unwrap_or(usize::MAX).min(rows)
            }
            Some(Resume::Keyset(_) | Resume::Offset(_)) => {
                return fail(
                    "the cursor was not issued for upstream paging (the tool pages \
                     differently now); call the tool again without a cursor"
                        .to_owned(),
                );
            }
        };
        Ok(Some(UpstreamPlan {
            pages,
            next: upstream.next.as_deref(),
            skip,
        }))
    }
}
