//! What a field's type implements to take a `#[shape(...)]` transform (`date`, `id`,
//! `rank`, `legend`, `untrusted`), the values those traits give, and the day type dates
//! read as. The common types (`String`, integers, chrono, time, jiff, uuid) implement them
//! already; a type of your own implements one to take the transform.

pub(crate) mod date;
pub(crate) mod ids;
pub(crate) mod legend;
pub(crate) mod rank;
pub(crate) mod recorded;
pub(crate) mod view;

pub use date::{DateField, DateValue, Day, DayError, iso_date};
pub use ids::{IdField, IdKey, IdText, short_id};
pub use legend::{LegendCode, LegendError, LegendField, LegendSource, LoadedLegend};
pub use rank::{KeyValue, RankKey};
pub use recorded::NOT_RECORDED;
pub use view::UntrustedText;
