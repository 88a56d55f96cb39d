//! The page pipeline: rows and settings in, one budgeted page (or an error envelope) out.
//!
//! One page, in stages: its records in each channel's state (`source`: every entry point
//! comes in here) → notes (facts stated once in the head) → plan (which records the page
//! shows, and which it skips as too large for any page of their own; each rendered and
//! counted once per channel, the envelope sized with its true counts and cursor) →
//! assemble both channels → report. A page that can make no progress within the budget is
//! an error envelope that says which budget it needs; error envelopes are cut to the budget
//! here too ([`error_page`]).
//!
//! The plan is exact and the same on every call: a cursor's, a handle's and a delimiter
//! nonce's tokens depend on their length alone ([`crate::text::digits`]), so the envelope is sized
//! before any cursor is made, and the same rows at the same budget give the same page.

mod admit;
pub(crate) mod envelope;
mod error;
mod frame;
mod inputs;
mod notes;
mod pipeline;
mod plan;
pub(crate) mod render;
pub mod report;
mod shaped;
mod source;
mod state;
mod upstream;

pub(crate) use error::{error_page, error_page_quoting};
pub(crate) use inputs::{PageInputs, PageSettings, Records};
pub use shaped::{ReadError, ShapeError, Shaped};
pub(crate) use source::{Source, TypedRows, UseRecords, prepare, shape};
pub(crate) use upstream::UpstreamPlan;
