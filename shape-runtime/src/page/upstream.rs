//! The upstream pages one call's rows are, checked against its rows and cursor, and where the
//! next answer starts in them.

use crate::cursor::UpstreamPosition;

/// The upstream pages of one call, checked against its rows and cursor.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UpstreamPlan<'c> {
    /// Each page's continuation and how many of the rows it gave, in order.
    pub pages: Vec<(Option<&'c str>, usize)>,
    /// The upstream's continuation after the last page.
    pub next: Option<&'c str>,
    /// Rows at the start that earlier answers showed.
    pub skip: usize,
}

impl UpstreamPlan<'_> {
    /// Where the next answer starts after `consumed` rows from the first row not skipped;
    /// `None` when the upstream has nothing after them.
    pub(crate) fn after(&self, consumed: usize) -> Option<UpstreamPosition> {
        let mut at = self.skip.saturating_add(consumed);
        for (page, len) in &self.pages {
            if at < *len {
                return Some(UpstreamPosition {
                    page: page.map(str::to_owned),
                    skip: at as u64,
                });
            }
            at -= len;
        }
        self.next.map(|page| UpstreamPosition {
            page: Some(page.to_owned()),
            skip: 0,
        })
    }

    /// Whether the upstream has pages after these rows, so the whole count is unknown.
    pub(crate) fn has_next(&self) -> bool {
        self.next.is_some()
    }

    /// The longest position a cursor of this call can carry, to reserve room for it.
    pub(crate) fn widest(&self) -> UpstreamPosition {
        let page = self
            .pages
            .iter()
            .filter_map(|(page, _)| *page)
            .chain(self.next)
            .max_by_key(|page| page.len());
        UpstreamPosition {
            page: page.map(str::to_owned),
            skip: self
                .pages
                .iter()
                .fold(0u64, |sum, (_, len)| sum.saturating_add(*len as u64)),
        }
    }
}
