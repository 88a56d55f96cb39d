//! Configured records as a page's rows: their keys for ordering and cursors ([`JsonRow`]),
//! and each one rendered through the page pipeline like a derived record ([`JsonSource`]).

use super::plan::Plan;
use super::read::Pruned;
use super::value::{Reached, output_value, reach, reach_all, write_object};
use crate::fields::ids::IdKey;
use crate::fields::rank::{KeyValue, Order};
use crate::page::Source;
use crate::page::render::RenderRecord;
use crate::record::call_env::CallEnv;
use crate::shaper::Keyed;
use crate::text::{TextMode, TextSerializer};
use serde::Serialize;
use std::cmp::Ordering;

/// One record of a result with its rank key and id, read once.
#[derive(Debug)]
pub(crate) struct JsonRow<'p, 'a> {
    pub record: &'p Pruned<'a>,
    /// The rank key and its order, when the record type has one.
    rank: Option<(KeyValue, Order)>,
    id: Option<IdKey<'p>>,
}

impl<'p, 'a> JsonRow<'p, 'a> {
    pub(crate) fn new(record: &'p Pruned<'a>, plan: &Plan) -> Self {
        let rank = plan.projection.rank.map(|rank| {
            let output = &plan.outputs[rank.field];
            let key = reach(Some(record), &output.steps).rank_key(output.fold);
            (key, rank.order)
        });
        let id = plan
            .projection
            .id
            .and_then(|index| id_of(record, &plan.outputs[index].steps));
        JsonRow { record, rank, id }
    }
}

/// The id `steps` reach in `record`, borrowed from it.
fn id_of<'p>(record: &'p Pruned<'_>, steps: &[super::spec::Step]) -> Option<IdKey<'p>> {
    match reach(Some(record), steps) {
        Reached::Value(Pruned::Str(text)) => Some(IdKey::Text(text.as_ref())),
        reached => match reached.id_key()? {
            IdKey::Int(n) => Some(IdKey::Int(n)),
            // Text ids are borrowed above; nothing else is an id.
            _ => None,
        },
    }
}

impl Keyed for JsonRow<'_, '_> {
    fn rank_cmp(&self, other: &Self) -> Ordering {
        match (&self.rank, &other.rank) {
            (Some((a, order)), Some((b, _))) => {
                order.apply(a.total_cmp(b).then_with(|| self.id.cmp(&other.id)))
            }
            _ => Ordering::Equal,
        }
    }

    fn rank_key(&self) -> Option<KeyValue> {
        self.rank.as_ref().map(|(key, _)| key.clone())
    }

    fn id_key(&self) -> Option<IdKey<'_>> {
        self.id
    }
}

/// Configured records as a page's source: the rows at `order`.
pub(crate) struct JsonSource<'s, 'p, 'a> {
    pub rows: &'s [JsonRow<'p, 'a>],
    pub order: &'s [usize],
    pub plan: &'s Plan,
}

impl<'s, 'p, 'a> Source for JsonSource<'s, 'p, 'a> {
    type Record<'e>
        = JsonRecord<'e>
    where
        Self: 'e;

    fn records<'e>(&'e self, env: &'e CallEnv<'e>) -> Vec<JsonRecord<'e>> {
        self.order
            .iter()
            .map(|&i| {
                let row = &self.rows[i];
                JsonRecord {
                    reached: reach_all(row.record, self.plan),
                    row,
                    plan: self.plan,
                    env,
                }
            })
            .collect()
    }
}

/// One configured record in one channel's state.
pub(crate) struct JsonRecord<'e> {
    reached: Vec<Reached<'e, 'e>>,
    row: &'e JsonRow<'e, 'e>,
    plan: &'e Plan,
    env: &'e CallEnv<'e>,
}

impl RenderRecord for JsonRecord<'_> {
    fn write_json(&self, out: &mut Vec<u8>) -> Result<(), String> {
        write_object(
            self.plan,
            &self.reached,
            self.env,
            &mut serde_json::Serializer::new(out),
        )
        .map_err(|e| e.to_string())
    }

    fn write_json_field(&self, index: usize, out: &mut Vec<u8>) -> Result<(), String> {
        if index >= self.reached.len() {
            return Err(format!("no output field {index}"));
        }
        output_value(self.plan, &self.reached, index, self.env)
            .serialize(&mut serde_json::Serializer::new(out))
            .map_err(|e| e.to_string())
    }

    fn write_field(&self, index: usize, out: &mut String, mode: TextMode) -> Result<(), String> {
        if index >= self.reached.len() {
            return Err(format!("no output field {index}"));
        }
        let absent = self.plan.projection.fields[index].absent.as_deref();
        self.env
            .as_words(|| {
                output_value(self.plan, &self.reached, index, self.env)
                    .serialize(TextSerializer::new(out, mode).absent(absent))
            })
            .map_err(|e| e.to_string())
    }

    fn to_value(&self) -> Result<serde_json::Value, String> {
        write_object(
            self.plan,
            &self.reached,
            self.env,
            serde_json::value::Serializer,
        )
        .map_err(|e| e.to_string())
    }

    fn shows(&self, index: usize) -> bool {
        super::value::shows(self.plan, &self.reached, index)
    }

    fn rank_key(&self) -> Option<KeyValue> {
        self.row.rank_key()
    }

    fn id_key(&self) -> Option<IdKey<'_>> {
        self.row.id
    }
}
