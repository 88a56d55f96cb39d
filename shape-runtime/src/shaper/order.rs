//! Where a call's page starts and in what order its rows come: skipping what the cursor
//! covered, ranking to the page's reach, and what part of the whole result the rows are.

use super::call::{Call, Resume, RowOrder};
use super::keys::{Ids, Keyed};
use crate::handle::id::Handle;

impl<'a> Call<'a> {
    pub(super) fn page_size_limit(&self) -> Option<usize> {
        self.page_size.or(self.shaper.settings.page_size)
    }

    /// Indices of the rows this page can start from, in page order: what earlier pages
    /// covered is skipped (a no-op when the database already did), and at most `reach` are
    /// ordered. Returns them with how many records remain from this position in all (the
    /// page's `given`) and whether the next cursor is a keyset (else a count).
    pub(crate) fn page_order<T: Keyed>(
        &self,
        rows: &[T],
        order: RowOrder<'_, T>,
        reach: usize,
        ids: Ids,
    ) -> (Vec<usize>, usize, bool) {
        // An upstream's rows keep its order; the cursor says how many of its page to skip.
        let upstream = self.upstream_plan(rows.len()).ok().flatten();
        let order = if self.keep_order || upstream.is_some() {
            RowOrder::Given
        } else {
            order
        };
        // Ranked records with ids resume after the last one shown (a keyset). An id through
        // `?` may be missing: a walk whose first page finds a record without one pages by
        // count, and the cursor it hands out keeps saying which, page after page.
        let keyset = matches!(order, RowOrder::Ranked)
            && ids.field
            && match &self.after {
                Some(Resume::Keyset(_)) => true,
                Some(Resume::Offset(_)) => false,
                _ => !ids.may_be_absent || rows.iter().all(|r| r.id_key().is_some()),
            };
        let mut indices: Vec<usize> = match &self.after {
            Some(Resume::Keyset(k)) if keyset => (0..rows.len())
                .filter(|&i| k.admits(rows[i].rank_key().as_ref(), rows[i].id_key()))
                .collect(),
            _ => (0..rows.len()).collect(),
        };
        let skip = match (&upstream, &self.after) {
            (Some(plan), _) => plan.skip,
            (None, Some(Resume::Offset(n))) if !keyset => usize::try_from(*n).unwrap_or(usize::MAX),
            _ => 0,
        };
        let given = indices.len().saturating_sub(skip);
        let upto = skip.saturating_add(reach).min(indices.len());
        // Rank-then-truncate: only the records up to the page's reach are sorted.
        match order {
            RowOrder::Ranked => crate::fields::rank::top_k(&mut indices, upto, |a, b| {
                let (x, y) = (&rows[*a], &rows[*b]);
                x.rank_cmp(y)
                    .then_with(|| x.id_key().cmp(&y.id_key()))
                    .then(a.cmp(b))
            }),
            RowOrder::Custom(f) => crate::fields::rank::top_k(&mut indices, upto, |a, b| {
                f(&rows[*a], &rows[*b]).then(a.cmp(b))
            }),
            RowOrder::Given => indices.truncate(upto),
        }
        indices.drain(..skip.min(indices.len()));
        (indices, given, keyset)
    }

    /// Records the earlier pages covered, shown or skipped (from the cursor).
    pub(crate) fn covered_before(&self) -> u64 {
        self.shown_before.saturating_add(self.skipped_before)
    }

    /// The handle the walk's first page stored the whole result under, from the cursor.
    pub(crate) fn walk_handle(&self) -> Option<Handle> {
        self.walk_handle
    }

    /// All the rows in ranked order (or as given), whatever the cursor: what a stored result
    /// holds.
    pub(crate) fn ranked_whole<T: Keyed>(&self, rows: &[T], ids: Ids) -> (Vec<usize>, bool) {
        let whole = Call {
            after: None,
            ..self.clone()
        };
        let (order, _, keyset) = whole.page_order(rows, RowOrder::Ranked, usize::MAX, ids);
        (order, keyset)
    }

    /// What part of the whole result `rows` are: the place of the first (1-based), and
    /// whether they are all of it. Rows after a keyset cursor that none of the earlier
    /// records are among are the rest of the result, not the whole; rows paged by count are
    /// the whole (as the count needs); an upstream page is the part of it the cursor names.
    pub(crate) fn coverage<T: Keyed>(&self, rows: &[T]) -> (u64, bool) {
        let covered = self.shown_before.saturating_add(self.skipped_before);
        let first = match &self.after {
            None | Some(Resume::Offset(_)) => 1,
            Some(Resume::Keyset(k)) => {
                let earlier = rows
                    .iter()
                    .any(|r| !k.admits(r.rank_key().as_ref(), r.id_key()));
                if earlier {
                    1
                } else {
                    covered.saturating_add(1)
                }
            }
            Some(Resume::Upstream(at)) => covered.saturating_sub(at.skip).saturating_add(1),
        };
        let last = first.saturating_sub(1).saturating_add(rows.len() as u64);
        let more_upstream = self.upstream.as_ref().is_some_and(|u| u.next.is_some());
        let more = more_upstream || self.total.is_some_and(|t| last < t);
        (first, first == 1 && !more)
    }

    /// The rows in ranked order (or as given with `keep_order`) after the cursor, at most
    /// `reach` of them; see `page_order`.
    pub(crate) fn ranked_rows<T: Keyed>(
        &self,
        rows: &[T],
        reach: usize,
        ids: Ids,
    ) -> (Vec<usize>, usize, bool) {
        self.page_order(rows, RowOrder::Ranked, reach, ids)
    }

    /// How many ranked records a page can reach: every record costs at least one token, so
    /// no more than `budget` of them fit, and no more than `page_size`; one more is looked at
    /// to know where the cut is; 64 at least below the page size, for the figure a budget
    /// too small for any record states. Only these need ranking, resolving and rendering.
    pub(crate) fn reach(&self) -> usize {
        self.page_settings().reach()
    }
}
