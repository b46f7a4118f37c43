//! OAuth scope names (RFC 6749 §3.3): what a component may declare it needs.

use crate::RuleError;

/// Checks one scope token: non-empty, printable ASCII without space, `"`
/// or `\`.
///
/// ```
/// assert!(snodo_rules::check_scope("files:write").is_ok());
/// assert!(snodo_rules::check_scope("two words").is_err());
/// assert!(snodo_rules::check_scope("").is_err());
/// ```
pub fn check_scope(scope: &str) -> Result<(), RuleError> {
    if scope.is_empty() {
        return Err(RuleError::new("", "a scope must not be empty"));
    }
    match scope
        .bytes()
        .find(|b| !matches!(b, 0x21 | 0x23..=0x5B | 0x5D..=0x7E))
    {
        None => Ok(()),
        Some(b) => Err(RuleError::new(
            "",
            format!(
                "scope {scope:?} contains {:?}; a scope is printable ASCII without spaces, `\"` or `\\`",
                b as char
            ),
        )),
    }
}
