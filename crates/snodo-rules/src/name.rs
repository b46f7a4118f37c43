//! The tool name rule.

use crate::RuleError;

/// Longest tool name the specification allows.
pub(crate) const MAX_TOOL_NAME: usize = 128;

/// Checks a tool name: 1 to 128 characters of `A-Z a-z 0-9 _ - .`.
///
/// ```
/// assert!(snodo_rules::check_tool_name("admin.tools.list").is_ok());
/// assert!(snodo_rules::check_tool_name("").is_err());
/// assert!(snodo_rules::check_tool_name("has space").is_err());
/// ```
pub fn check_tool_name(name: &str) -> Result<(), RuleError> {
    if name.is_empty() {
        return Err(RuleError::new("", "tool name must not be empty"));
    }
    if name.len() > MAX_TOOL_NAME {
        return Err(RuleError::new(
            "",
            format!("tool name must be at most {MAX_TOOL_NAME} characters"),
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Err(RuleError::new(
            "",
            format!("tool name may only contain A-Z, a-z, 0-9, '_', '-' and '.' (found {bad:?})"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_specs_examples() {
        for name in ["getUser", "DATA_EXPORT_v2", "admin.tools.list", "a", "x-y"] {
            assert!(check_tool_name(name).is_ok(), "{name}");
        }
    }

    #[test]
    fn refuses_empty_long_and_foreign_characters() {
        assert!(check_tool_name("").is_err());
        assert!(check_tool_name(&"a".repeat(129)).is_err());
        assert!(check_tool_name(&"a".repeat(128)).is_ok());
        for name in ["a b", "a/b", "é", "a,b", "a:b"] {
            assert!(check_tool_name(name).is_err(), "{name}");
        }
    }
}
