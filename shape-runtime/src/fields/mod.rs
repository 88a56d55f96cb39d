//! What a field's type implements to take a `#[shape(...)]` transform (`date`, `id`,
//! `rank`, `legend`, `untrusted`), the values those traits give, and the day type dates
//! read as. The common types (`String`, integers, chrono, time, jiff, uuid) implement them
//! already; a type of your own implements one to take the transform.

#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod date;
pub(crate) mod ids;
#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod legend;
pub(crate) mod rank;
#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod recorded;
pub(crate) mod view;

pub use date::{DateField, DateValue, Day, DayError, DayOf};
pub use ids::{IdField, IdKey, IdText, short_id};
pub use legend::{LegendCode, LegendError, LegendField, LegendSource, LoadedLegend};
pub use rank::{KeyValue, RankKey};
pub use view::UntrustedText;
