//! Roles granted by a caller's token claims, each allowing name patterns
//! of tools, resources and prompts: an access [`Policy`] under which a
//! caller sees only what its roles allow, and cannot call, read, get or
//! complete what it does not see.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use serde_json::{Value, json};

use super::glob::{self, Glob};
use crate::context::Principal;
use crate::server::{Item, Policy};
use crate::{Context, Error};

/// One role: the claims that grant it and what it allows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Role {
    name: String,
    /// Per claim, the values that grant the role (every claim listed must
    /// hold one of its values).
    when: BTreeMap<String, Vec<String>>,
    tools: Vec<Glob>,
    resources: Vec<Glob>,
    prompts: Vec<Glob>,
}

impl Role {
    /// A role named `name` that no claim grants yet and that allows nothing.
    pub fn new(name: impl Into<String>) -> Self {
        Role {
            name: name.into(),
            ..Role::default()
        }
    }

    /// The role's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Granted when claim `claim` holds one of `values`: a claim that is a
    /// string holds itself and, for `scope` and `scp`, each of its
    /// space-separated words; an array holds its strings. The principal's
    /// granted scopes count as the `scope` claim too. Called for several
    /// claims, every one must hold. A role without `when` is granted to
    /// every caller with a token.
    pub fn when<S: Into<String>>(
        mut self,
        claim: impl Into<String>,
        values: impl IntoIterator<Item = S>,
    ) -> Self {
        self.when
            .entry(claim.into())
            .or_default()
            .extend(values.into_iter().map(Into::into));
        self
    }

    /// Allows the tools (by the names served) one of `patterns` matches.
    pub fn tools(mut self, patterns: impl IntoIterator<Item = Glob>) -> Self {
        self.tools.extend(patterns);
        self
    }

    /// Allows the resources and templates (by the URI served, or the URI
    /// read) one of `patterns` matches.
    pub fn resources(mut self, patterns: impl IntoIterator<Item = Glob>) -> Self {
        self.resources.extend(patterns);
        self
    }

    /// Allows the prompts (by the names served) one of `patterns` matches.
    pub fn prompts(mut self, patterns: impl IntoIterator<Item = Glob>) -> Self {
        self.prompts.extend(patterns);
        self
    }

    /// Whether `principal`'s claims grant the role.
    pub fn grants(&self, principal: &Principal) -> bool {
        self.when
            .iter()
            .all(|(claim, values)| holds(principal, claim, values))
    }

    fn allows(&self, item: Item<'_>) -> bool {
        match item {
            Item::Tool(name) => glob::any(&self.tools, name),
            Item::Resource(uri) => glob::any(&self.resources, uri),
            Item::Prompt(name) => glob::any(&self.prompts, name),
        }
    }

    /// A short account of the role, for summaries.
    pub fn describe(&self) -> String {
        let list = |globs: &[Glob]| globs.iter().map(Glob::as_str).collect::<Vec<_>>().join(" ");
        let when: Vec<String> = self
            .when
            .iter()
            .map(|(claim, values)| format!("{claim} in [{}]", values.join(" ")))
            .collect();
        format!(
            "role {}: when {}; tools [{}], resources [{}], prompts [{}]",
            self.name,
            if when.is_empty() {
                "any token".to_string()
            } else {
                when.join(" and ")
            },
            list(&self.tools),
            list(&self.resources),
            list(&self.prompts)
        )
    }
}

/// Whether claim `claim` of `principal` holds one of `values` (asked per
/// listed item: nothing is allocated but for a number or a boolean).
fn holds(principal: &Principal, claim: &str, values: &[String]) -> bool {
    let granted = |v: &str| values.iter().any(|w| w == v);
    let in_claim = match principal.claims.get(claim) {
        Some(Value::String(s)) if matches!(claim, "scope" | "scp") => {
            s.split_whitespace().any(granted)
        }
        Some(Value::String(s)) => granted(s),
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).any(granted),
        Some(Value::Bool(b)) => granted(&b.to_string()),
        Some(Value::Number(n)) => granted(&n.to_string()),
        _ => false,
    };
    in_claim || (claim == "scope" && principal.scopes.iter().any(|s| granted(s)))
}

/// An access [`Policy`] of [`Role`]s: a caller sees (and may use) what one
/// of its granted roles allows; a caller without a principal (no token),
/// or whose claims grant no role, sees nothing. Cheap to clone; clones
/// share the roles, which [`Roles::set`] replaces while the server runs.
///
/// ```
/// use snodo::proxy::{Glob, Role, Roles};
///
/// let roles = Roles::new([
///     Role::new("reader")
///         .when("scope", ["reports:read"])
///         .tools([Glob::new("reports.get_*").unwrap()]),
///     Role::new("ops")
///         .when("groups", ["ops"])
///         .tools([Glob::new("*").unwrap()])
///         .resources([Glob::new("*").unwrap()])
///         .prompts([Glob::new("*").unwrap()]),
/// ]);
/// let server = snodo::Server::builder("gateway", "1").policy(roles.clone());
/// ```
#[derive(Debug, Clone, Default)]
pub struct Roles {
    inner: Arc<RwLock<Vec<Role>>>,
}

impl Roles {
    /// A policy of `roles`.
    pub fn new(roles: impl IntoIterator<Item = Role>) -> Self {
        Roles {
            inner: Arc::new(RwLock::new(roles.into_iter().collect())),
        }
    }

    /// Replaces the roles (the next request sees the new ones).
    pub fn set(&self, roles: impl IntoIterator<Item = Role>) {
        *self.inner.write().unwrap_or_else(|e| e.into_inner()) = roles.into_iter().collect();
    }

    /// The roles `principal`'s claims grant, by name.
    pub fn granted(&self, principal: &Principal) -> Vec<String> {
        let roles = self.inner.read().unwrap_or_else(|e| e.into_inner());
        roles
            .iter()
            .filter(|r| r.grants(principal))
            .map(|r| r.name.clone())
            .collect()
    }
}

impl Policy for Roles {
    fn can_see(&self, principal: Option<&Principal>, item: Item<'_>) -> bool {
        let Some(principal) = principal else {
            return false;
        };
        let roles = self.inner.read().unwrap_or_else(|e| e.into_inner());
        roles.iter().any(|r| r.allows(item) && r.grants(principal))
    }

    /// Refuses what the caller cannot see as the server refuses what is
    /// not there: a hidden component is not told apart from a missing one.
    fn check(&self, cx: &Context, item: Item<'_>) -> Result<(), Error> {
        if self.can_see(cx.principal(), item) {
            return Ok(());
        }
        Err(match item {
            Item::Tool(name) => Error::invalid_params(format!("Unknown tool: {name}")),
            Item::Prompt(name) => Error::invalid_params(format!("Unknown prompt: {name}")),
            Item::Resource(uri) => {
                Error::invalid_params("Resource not found").with_data(json!({"uri": uri}))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(p: &str) -> Glob {
        Glob::new(p).unwrap()
    }

    fn roles() -> Roles {
        Roles::new([
            Role::new("reader")
                .when("scope", ["reports:read"])
                .tools([g("reports.get_*")])
                .resources([g("reports+*")]),
            Role::new("ops")
                .when("groups", ["ops", "sre"])
                .when("email_verified", ["true"])
                .tools([g("*")])
                .prompts([g("*")]),
        ])
    }

    #[test]
    fn claims_grant_roles_and_roles_allow_names() {
        let roles = roles();
        let reader = Principal::new("ada").with_claims(json!({"scope": "openid reports:read"}));
        let scoped = Principal::new("bob").with_scopes(["reports:read"]);
        let ops = Principal::new("cy")
            .with_claims(json!({"groups": ["dev", "sre"], "email_verified": true}));
        let half = Principal::new("dee").with_claims(json!({"groups": ["ops"]}));
        assert_eq!(roles.granted(&reader), ["reader"]);
        assert_eq!(roles.granted(&scoped), ["reader"]);
        assert_eq!(roles.granted(&ops), ["ops"]);
        assert!(roles.granted(&half).is_empty());
        let sees = |p: Option<&Principal>, item| roles.can_see(p, item);
        assert!(sees(Some(&reader), Item::Tool("reports.get_month")));
        assert!(!sees(Some(&reader), Item::Tool("reports.delete")));
        assert!(sees(Some(&reader), Item::Resource("reports+file:///a")));
        assert!(!sees(Some(&reader), Item::Prompt("reports.summary")));
        assert!(sees(Some(&ops), Item::Tool("reports.delete")));
        assert!(!sees(Some(&ops), Item::Resource("reports+file:///a")));
        assert!(!sees(Some(&half), Item::Tool("reports.get_month")));
        assert!(!sees(None, Item::Tool("reports.get_month")));
        roles.set([Role::new("all").tools([g("*")])]);
        assert!(sees(Some(&half), Item::Tool("x")));
        assert!(Role::new("all").describe().contains("when any token"));
    }

    #[test]
    fn a_hidden_item_is_refused_as_a_missing_one() {
        let roles = roles();
        let cx = Context::detached();
        let e = roles.check(&cx, Item::Tool("reports.delete")).unwrap_err();
        assert_eq!(
            (e.code(), e.message()),
            (-32602, "Unknown tool: reports.delete")
        );
        let e = roles
            .check(&cx, Item::Resource("reports+file:///a"))
            .unwrap_err();
        assert_eq!(e.message(), "Resource not found");
        let e = roles.check(&cx, Item::Prompt("p")).unwrap_err();
        assert_eq!(e.message(), "Unknown prompt: p");
    }
}
