//! A checked [`RecordSpec`] made into what a page reads: the record model every path shares
//! (`Projection<Owned>`), and for each output the path its value is read from and how the
//! value is shaped.

use super::read::Want;
use super::spec::{ConfiguredLegend, DateFrom, Fold, OutputKind, RecordSpec, Step};
use crate::record::{Field, FieldKind, Owned, Projection, RankInfo};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A record as a page reads it.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// The record model: names, fields, prose, rank, id; `skipped` holds the keys the
    /// configuration names as left out (a result's unread keys are added per result).
    pub projection: Projection<Owned>,
    /// How each output's value is read and shaped, in output order.
    pub outputs: Vec<OutputPlan>,
    /// Every key path a record's outputs read.
    pub want: Want,
    /// Whether a record leaves out the outputs whose key it does not have, rather than
    /// showing them `not recorded`: records nobody described, whose keys are their own.
    pub omit_absent: bool,
}

/// How one output's value is read and shaped.
#[derive(Debug, Clone)]
pub(crate) struct OutputPlan {
    /// The path's steps.
    pub steps: Vec<Step>,
    /// How the value is shaped.
    pub value: ValuePlan,
    /// Whether `""` and `[]` read as absent.
    pub empty_is_absent: bool,
    /// How a rank path through `[]` folds its values, when this output is the rank key.
    pub fold: Option<Fold>,
}

/// How a value is shaped.
#[derive(Debug, Clone)]
pub(crate) enum ValuePlan {
    /// As it is.
    Show,
    /// The record's id.
    Id { short: bool },
    /// A date, from ISO text or a number since the epoch.
    Date(DateFrom),
    /// Outsiders' text.
    Untrusted { cap: Option<u32> },
    /// A code and its word.
    Legend(Arc<ConfiguredLegend>),
    /// Records of their own.
    Nested(Box<Plan>),
    /// As it is, its text as outsiders' text.
    Any { cap: Option<u32> },
}

impl Plan {
    /// The plan of `spec`, with the legends it names (checked to exist when the
    /// configuration loaded).
    pub(crate) fn new(spec: &RecordSpec, legends: &BTreeMap<String, ConfiguredLegend>) -> Plan {
        let mut fields = Vec::with_capacity(spec.outputs.len());
        let mut outputs = Vec::with_capacity(spec.outputs.len());
        let mut want = Want::default();
        let mut rank = None;
        let mut id = None;
        for (index, output) in spec.outputs.iter().enumerate() {
            let (kind, value) = match &output.kind {
                OutputKind::Show => (FieldKind::Show, ValuePlan::Show),
                OutputKind::Id { short } => {
                    id = Some(index);
                    (
                        FieldKind::Id { short: *short },
                        ValuePlan::Id { short: *short },
                    )
                }
                OutputKind::Date(from) => (FieldKind::Date, ValuePlan::Date(*from)),
                OutputKind::Untrusted { max_tokens } => (
                    FieldKind::Untrusted {
                        max_tokens: *max_tokens,
                    },
                    ValuePlan::Untrusted { cap: *max_tokens },
                ),
                OutputKind::Legend(name) => (
                    FieldKind::Legend,
                    ValuePlan::Legend(Arc::new(legends.get(name).cloned().unwrap_or(
                        ConfiguredLegend {
                            integer_codes: false,
                            words: BTreeMap::new(),
                        },
                    ))),
                ),
                OutputKind::Nested(inner) => (
                    FieldKind::Show,
                    ValuePlan::Nested(Box::new(Plan::new(inner, legends))),
                ),
                OutputKind::Any { max_tokens } => (
                    FieldKind::Untrusted {
                        max_tokens: *max_tokens,
                    },
                    ValuePlan::Any { cap: *max_tokens },
                ),
            };
            if let Some(r) = output.rank {
                rank = Some(RankInfo {
                    field: index,
                    order: r.order,
                    fold: r.fold,
                });
            }
            let keys: Vec<&str> = output
                .from
                .steps
                .iter()
                .filter_map(|s| match s {
                    Step::Key(k) => Some(k.as_str()),
                    _ => None,
                })
                .collect();
            match &value {
                // A nested record reads its own outputs' paths below this one.
                ValuePlan::Nested(inner) => want
                    .add(&keys, false)
                    .merge(&inner.want.clone().nested_under(&output.name)),
                _ => {
                    want.add(&keys, true);
                }
            }
            let absent = output.absent.clone().or_else(|| {
                spec.absent
                    .as_ref()
                    .map(|w| w.replace("{field}", &output.name.replace('_', " ")))
            });
            fields.push(Field {
                name: output.name.clone(),
                source: output.from.text.clone(),
                kind,
                absent,
            });
            outputs.push(OutputPlan {
                steps: output.from.steps.clone(),
                value,
                empty_is_absent: output.empty_is_absent,
                fold: output.rank.and_then(|r| r.fold),
            });
        }
        Plan {
            projection: Projection {
                name: spec.name.clone(),
                plural: spec.plural.clone(),
                fields,
                skipped: spec.skipped.clone(),
                prose: spec.prose.clone(),
                rank,
                id,
                nested: Vec::new(),
            },
            outputs,
            want,
            omit_absent: false,
        }
    }

    /// The names this record's nested outputs leave out, as `field.name` (deeper:
    /// `field.inner.name`): the keys their configuration skips.
    pub(crate) fn nested_skipped(&self) -> Vec<String> {
        let mut names = Vec::new();
        for (field, output) in self.projection.fields.iter().zip(&self.outputs) {
            if let ValuePlan::Nested(inner) = &output.value {
                for name in inner
                    .projection
                    .skipped
                    .iter()
                    .cloned()
                    .chain(inner.nested_skipped())
                {
                    names.push(format!("{}.{name}", field.name));
                }
            }
        }
        names
    }

    /// The untrusted fields inside nested outputs, as `field.name`.
    pub(crate) fn nested_untrusted(&self) -> Vec<String> {
        let mut paths = Vec::new();
        for (field, output) in self.projection.fields.iter().zip(&self.outputs) {
            if let ValuePlan::Nested(inner) = &output.value {
                let own = inner.projection.untrusted_paths();
                for name in own.into_iter().chain(inner.nested_untrusted()) {
                    paths.push(format!("{}.{name}", field.name));
                }
            }
        }
        paths
    }
}
