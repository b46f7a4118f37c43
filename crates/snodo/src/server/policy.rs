//! Authorization hook: what a principal may see, and what it may invoke.

use crate::context::Principal;
use crate::{Context, Error};

/// A component a policy decides about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Item<'a> {
    /// A tool, by name.
    Tool(&'a str),
    /// A resource, by URI (a fixed URI, a template, or the URI being read).
    Resource(&'a str),
    /// A prompt, by name.
    Prompt(&'a str),
}

/// An authorization policy in two phases.
///
/// - *Discovery*: [`Policy::can_see`] filters what a principal sees in the
///   four list methods, before paging (so cursors and page sizes stay
///   consistent per principal), and which `notifications/resources/updated`
///   a `subscriptions/listen` stream or an initialize-era session hears: an
///   update of a resource the listener may not see is not sent, whatever
///   its subscriptions cover (over stdio, which carries no principal, the
///   policy decides for `None`, as it does for lists).
/// - *Invocation*: [`Policy::check`] runs before a call, read or get, and
///   before `completion/complete` for the prompt or resource template it
///   names; its error is returned to the client unchanged.
///
/// ```
/// use snodo::server::{Item, Policy};
/// use snodo::{Context, Error, Principal};
///
/// struct AdminsOnly;
/// impl Policy for AdminsOnly {
///     fn can_see(&self, who: Option<&Principal>, item: Item<'_>) -> bool {
///         !matches!(item, Item::Tool(name) if name.starts_with("admin."))
///             || who.is_some_and(|p| p.subject == "admin")
///     }
///     fn check(&self, cx: &Context, item: Item<'_>) -> Result<(), Error> {
///         if self.can_see(cx.principal(), item) { Ok(()) } else { Err(Error::new(-31001, "Forbidden")) }
///     }
/// }
/// ```
pub trait Policy: Send + Sync + 'static {
    /// Whether `principal` may see `item` in lists.
    fn can_see(&self, principal: Option<&Principal>, item: Item<'_>) -> bool {
        let _ = (principal, item);
        true
    }

    /// Whether the request may invoke `item`.
    fn check(&self, cx: &Context, item: Item<'_>) -> Result<(), Error> {
        let _ = (cx, item);
        Ok(())
    }
}
