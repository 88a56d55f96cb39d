//! Resolution: opaque ids turned into names in one batched call per resolver per page.
//!
//! A [`Resolver`] is a marker type naming a kind of lookup and its key type; a field says
//! `#[shape(resolve = Users)]`. The caller's context implements [`Resolve<Users>`] by answering
//! a whole batch of keys at once (one `SELECT … WHERE id IN (…)`). If the context does not
//! implement it, or the key types differ, the call does not compile.
//!
//! A key the resolver does not answer renders as `unresolved user usr_…`, distinct from
//! `null` (which is what `None` stays).
//!
//! ```
//! use toolshape::{resolve, resolve::{Resolve, ResolveError, Resolver}};
//! use std::collections::HashMap;
//!
//! pub struct Users;
//! impl Resolver for Users {
//!     type Key = String;
//!     const NAME: &'static str = "users";
//!     const NOUN: &'static str = "user";
//! }
//!
//! struct Directory(HashMap<String, String>);
//!
//! // A synchronous lookup answers the batch at once.
//! impl Resolve<Users> for Directory {
//!     fn resolve(&self, keys: &[String]) -> impl Future<Output = Result<HashMap<String, String>, ResolveError>> + Send {
//!         resolve::answer(keys, |k| self.0.get(k).cloned())
//!     }
//! }
//! ```

pub(crate) mod batch;
pub(crate) mod field;
pub(crate) mod resolver;

pub(crate) use batch::Resolvers;
pub use batch::Supplies;
pub(crate) use field::{Arity, KeyField};
pub use resolver::{Resolve, ResolveError, Resolver, ResolverStats, answer};

/// Declares a [`Resolver`] marker type.
///
/// ```
/// toolshape::resolve::resolver!(pub Orgs: String, name = "orgs", noun = "organization");
/// ```
#[doc(hidden)]
#[macro_export]
macro_rules! __resolver {
    ($vis:vis $name:ident : $key:ty, name = $n:literal, noun = $noun:literal) => {
        #[doc = concat!("Resolver `", $n, "`: ", stringify!($key), " to the name of a ", $noun, ".")]
        #[derive(Debug, Clone, Copy, Default)]
        $vis struct $name;
        impl $crate::resolve::Resolver for $name {
            type Key = $key;
            const NAME: &'static str = $n;
            const NOUN: &'static str = $noun;
        }
    };
}

#[doc(inline)]
pub use crate::__resolver as resolver;
