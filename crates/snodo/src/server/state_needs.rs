//! The state handlers need, checked against the state a server was given
//! when a component is registered, so that a missing
//! [`ServerBuilder::state`](crate::ServerBuilder::state) is refused at start
//! instead of failing every call.

use std::any::TypeId;
use std::collections::HashSet;

use super::error::BuildError;
use crate::extract::StateNeed;

/// Refuses a component (`kind` `name`) that needs state of a type not in
/// `given`.
pub(super) fn check(
    kind: &'static str,
    name: &str,
    needs: &[StateNeed],
    given: &HashSet<TypeId>,
) -> Result<(), BuildError> {
    match needs.iter().find(|n| !given.contains(&n.type_id())) {
        None => Ok(()),
        Some(need) => Err(BuildError::MissingState {
            kind,
            name: name.to_owned(),
            type_name: need.type_name(),
        }),
    }
}
