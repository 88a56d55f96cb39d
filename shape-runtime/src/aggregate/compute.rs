//! Counting: an [`Aggregate`](super::Aggregate) checked against the fields
//! ([`ValidAggregate`]) computed over the rows ([`AggregateResult`]).

use super::result::{
    AggregateResult, CountBy, Others, RecentResult, Stats, TopValues, share, significant,
};
use super::spec::{COUNT_BY_MAX, ValidAggregate};
use crate::aggregate::catalogue::{Row, int_of, num_cmp, value_cmp};
use crate::fields::date::Day;
use serde_json::{Number, Value};
use std::cmp::Ordering;
use std::collections::HashMap;

impl ValidAggregate {
    /// Counts over `rows`; `today` is the last day of the `recent` window.
    pub fn compute<'r>(
        &self,
        rows: impl IntoIterator<Item = &'r Row>,
        today: Day,
    ) -> AggregateResult {
        let mut total = 0u64;
        let mut count_by = self.count_by.as_ref().map(|f| (f, Tally::default()));
        let mut tops: Vec<_> = self
            .top
            .iter()
            .map(|(f, k)| (f, *k, Tally::default()))
            .collect();
        let mut recent = self.recent.as_ref().map(|(f, days)| RecentResult {
            field: f.clone(),
            days: *days,
            count: 0,
            share: 0.0,
            undated: 0,
            future: 0,
        });
        let mut stats: Vec<_> = self.stats.iter().map(|f| (f, Running::default())).collect();

        for row in rows {
            total += 1;
            if let Some((field, tally)) = &mut count_by {
                match row.get(field.as_str()) {
                    None | Some(Value::Null) => tally.none += 1,
                    Some(v) => tally.add(v),
                }
            }
            for (field, _, tally) in &mut tops {
                tally.add_each(row.get(field.as_str()));
            }
            if let Some(r) = &mut recent {
                let day = row
                    .get(&r.field)
                    .and_then(Value::as_str)
                    .and_then(Day::parse);
                match day {
                    None => r.undated += 1,
                    Some(d) if d > today => r.future += 1,
                    Some(d)
                        if i128::from(today.days_since_epoch())
                            - i128::from(d.days_since_epoch())
                            < i128::from(r.days) =>
                    {
                        r.count += 1
                    }
                    Some(_) => {}
                }
            }
            for (field, running) in &mut stats {
                match row.get(field.as_str()) {
                    None | Some(Value::Null) => running.none += 1,
                    Some(Value::Number(n)) => running.add(n),
                    Some(_) => running.non_numeric += 1,
                }
            }
        }

        if let Some(r) = &mut recent {
            r.share = share(r.count, total);
        }
        AggregateResult {
            total,
            recent,
            count_by: count_by.map(|(field, tally)| {
                let none = tally.none;
                let mut counts = tally.ranked();
                let other = (counts.len() > COUNT_BY_MAX).then(|| {
                    let rest = counts.split_off(COUNT_BY_MAX);
                    Others {
                        values: rest.len() as u64,
                        count: rest.iter().map(|(_, c)| c).sum(),
                    }
                });
                let untrusted = self.untrusted.contains(field);
                CountBy {
                    field: field.clone(),
                    counts: shown(counts, untrusted),
                    none,
                    other,
                    untrusted,
                }
            }),
            top: tops
                .into_iter()
                .map(|(field, k, tally)| {
                    let none = tally.none;
                    let mut values = tally.ranked();
                    values.truncate(k);
                    let untrusted = self.untrusted.contains(field);
                    TopValues {
                        field: field.clone(),
                        values: shown(values, untrusted),
                        none,
                        untrusted,
                    }
                })
                .collect(),
            stats: stats
                .into_iter()
                .map(|(field, r)| r.finish(field))
                .collect(),
        }
    }
}

/// Values as an answer shows them: outsiders' text sanitised, defused and cut to
/// [`CATEGORY_CHARS`](super::CATEGORY_CHARS) characters (`…` marking the cut), as an error
/// quotes an upstream's message; counted before, so two values that read alike after the cut
/// keep their own counts.
fn shown(values: Vec<(Value, u64)>, untrusted: bool) -> Vec<(Value, u64)> {
    if !untrusted {
        return values;
    }
    values
        .into_iter()
        .map(|(v, c)| match v {
            Value::String(s) => (Value::String(crate::untrusted::echo::category(&s)), c),
            other => (other, c),
        })
        .collect()
}

/// Counts per value; `none` counts records with no value.
#[derive(Default)]
struct Tally {
    counts: HashMap<ValueKey, (Value, u64)>,
    none: u64,
}

impl Tally {
    fn add(&mut self, value: &Value) {
        self.counts
            .entry(ValueKey::of(value))
            .or_insert_with(|| (value.clone(), 0))
            .1 += 1;
    }

    // A list counts each distinct non-null element once; a record with none counts as `none`.
    fn add_each(&mut self, value: Option<&Value>) {
        match value {
            Some(Value::Array(items)) => {
                let mut seen: Vec<ValueKey> = Vec::with_capacity(items.len());
                for item in items.iter().filter(|v| !v.is_null()) {
                    let key = ValueKey::of(item);
                    if !seen.contains(&key) {
                        seen.push(key);
                        self.add(item);
                    }
                }
                if seen.is_empty() {
                    self.none += 1;
                }
            }
            None | Some(Value::Null) => self.none += 1,
            Some(v) => self.add(v),
        }
    }

    /// Count descending, then value ascending.
    fn ranked(self) -> Vec<(Value, u64)> {
        let mut out: Vec<_> = self.counts.into_values().collect();
        out.sort_by(|(a, ca), (b, cb)| cb.cmp(ca).then_with(|| value_cmp(a, b)));
        out
    }
}

/// A hashable identity for a JSON value: numbers by their numeric value, so `3` and `3.0` are
/// one value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum ValueKey {
    Null,
    Bool(bool),
    Int(i128),
    Float(u64),
    Str(String),
    Other(String),
}

impl ValueKey {
    fn of(value: &Value) -> ValueKey {
        match value {
            Value::Null => ValueKey::Null,
            Value::Bool(b) => ValueKey::Bool(*b),
            Value::Number(n) => match int_of(n) {
                Some(i) => ValueKey::Int(i),
                None => ValueKey::Float(n.as_f64().unwrap_or(0.0).to_bits()),
            },
            Value::String(s) => ValueKey::Str(s.clone()),
            other => ValueKey::Other(other.to_string()),
        }
    }
}

#[derive(Default)]
struct Running {
    count: u64,
    none: u64,
    non_numeric: u64,
    min: Option<Number>,
    max: Option<Number>,
    mean: f64,
}

impl Running {
    fn add(&mut self, n: &Number) {
        self.count += 1;
        if self
            .min
            .as_ref()
            .is_none_or(|m| num_cmp(n, m) == Ordering::Less)
        {
            self.min = Some(n.clone());
        }
        if self
            .max
            .as_ref()
            .is_none_or(|m| num_cmp(n, m) == Ordering::Greater)
        {
            self.max = Some(n.clone());
        }
        // A running mean cannot overflow where a sum of large values would.
        let x = n.as_f64().unwrap_or(0.0);
        self.mean += (x - self.mean) / self.count as f64;
    }

    fn finish(self, field: &str) -> Stats {
        Stats {
            field: field.to_owned(),
            count: self.count,
            min: self.min,
            max: self.max,
            mean: (self.count > 0).then(|| significant(self.mean, 6)),
            none: self.none,
            non_numeric: self.non_numeric,
        }
    }
}
