//! Backends started once per caller: a stdio server of its own for each
//! caller (known by its token's subject), its environment set from the
//! caller's claims, so that the server acts as that caller without ever
//! seeing the caller's token.
//!
//! The backend the proxy added (its listing child) is listed and followed
//! as any other; a caller's requests go to the caller's own child, started
//! on its first request and stopped once idle. A request without a
//! principal is refused: there is no one to start a server for.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::OnceCell;

use super::relay::Relay;
use crate::client::{Client, ClientBuilder, StdioCommand, Target};
use crate::error::HandlerError;
use crate::{Context, Error, Principal};

/// How long a caller's server may sit idle before it is stopped.
pub const CALLER_IDLE: Duration = Duration::from_secs(300);
/// The most callers' servers one backend runs at once.
pub const MAX_CALLERS: usize = 64;
/// How long a caller's server may take to start and initialize.
pub const CALLER_START: Duration = Duration::from_secs(30);

/// A backend whose callers each get a server of their own: `command`
/// started for each caller with the environment variables
/// [`PerCaller::env_from_claim`] names set from the caller's claims. Set
/// it with [`Proxy::per_caller`](super::Proxy::per_caller).
///
/// A claim that is a string is passed as it is, a list of strings joined
/// by spaces, a number or a boolean as its JSON text, and any other value
/// as its JSON text; a claim the caller's token lacks sets the variable
/// empty (it never inherits the proxy's own value). A caller whose claims
/// change gets a new server. Past [`PerCaller::max_callers`] servers the
/// one idle longest is stopped to make room; when none is idle the request
/// is refused with `BACKEND_UNAVAILABLE`.
///
/// ```
/// use snodo::client::{Client, StdioCommand};
/// use snodo::proxy::PerCaller;
///
/// let github = PerCaller::new(StdioCommand::new("github-mcp", ["--stdio"]), Client::builder())
///     .env_from_claim("GITHUB_USER", "sub")
///     .env_from_claim("GITHUB_TEAMS", "groups")
///     .max_callers(16);
/// assert_eq!(github.claims().count(), 2);
/// ```
#[derive(Clone)]
pub struct PerCaller {
    command: StdioCommand,
    builder: ClientBuilder,
    claims: Vec<(String, String)>,
    idle: Duration,
    max: usize,
    start: Duration,
}

impl std::fmt::Debug for PerCaller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PerCaller")
            .field("command", &self.command)
            .field("claims", &self.claims)
            .field("idle", &self.idle)
            .field("max", &self.max)
            .field("start", &self.start)
            .finish_non_exhaustive()
    }
}

impl PerCaller {
    /// `command`, started for each caller with a client `builder` builds.
    pub fn new(command: StdioCommand, builder: ClientBuilder) -> Self {
        Self {
            command,
            builder,
            claims: Vec::new(),
            idle: CALLER_IDLE,
            max: MAX_CALLERS,
            start: CALLER_START,
        }
    }

    /// Sets environment variable `var` of each caller's server from the
    /// caller's claim `claim`.
    pub fn env_from_claim(mut self, var: impl Into<String>, claim: impl Into<String>) -> Self {
        self.claims.push((var.into(), claim.into()));
        self
    }

    /// Stops a caller's server once idle this long (default
    /// [`CALLER_IDLE`]).
    pub fn idle(mut self, idle: Duration) -> Self {
        self.idle = idle;
        self
    }

    /// Runs at most `max` callers' servers at once (default
    /// [`MAX_CALLERS`]; at least 1).
    pub fn max_callers(mut self, max: usize) -> Self {
        self.max = max.max(1);
        self
    }

    /// Gives a caller's server this long to start and initialize (default
    /// [`CALLER_START`]).
    pub fn start_timeout(mut self, start: Duration) -> Self {
        self.start = start;
        self
    }

    /// The builder of each caller's client.
    pub(crate) fn builder(&self) -> &ClientBuilder {
        &self.builder
    }

    /// How long a caller's server may sit idle.
    pub fn idle_time(&self) -> Duration {
        self.idle
    }

    /// The variables set from claims, as `(variable, claim)`.
    pub fn claims(&self) -> impl Iterator<Item = (&str, &str)> {
        self.claims.iter().map(|(v, c)| (v.as_str(), c.as_str()))
    }

    /// The command the proxy starts for itself, to list and follow the
    /// backend: every variable from claims set empty.
    pub fn listing_command(&self) -> StdioCommand {
        self.command_for(None)
    }

    /// The command a caller with `principal` runs (`None`: the listing
    /// child's, every variable empty).
    pub(crate) fn command_for(&self, principal: Option<&Principal>) -> StdioCommand {
        let mut command = self.command.clone();
        for (var, claim) in &self.claims {
            let value = principal.map(|p| claim_text(p, claim)).unwrap_or_default();
            command = command.env(var, value);
        }
        command
    }
}

/// Claim `claim` of `principal` as an environment variable's text.
fn claim_text(principal: &Principal, claim: &str) -> String {
    let value = match principal.claims.get(claim) {
        Some(value) => value,
        // A principal built without its claims still has its subject.
        None if claim == "sub" => return principal.subject.clone(),
        None => return String::new(),
    };
    let text = match value {
        Value::String(s) => s.clone(),
        Value::Array(items) if items.iter().all(Value::is_string) => items
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" "),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    // An environment variable cannot hold a NUL.
    text.replace('\0', "")
}

/// The servers started for one backend's callers.
pub(crate) struct Callers {
    spec: PerCaller,
    children: Mutex<HashMap<String, Arc<Child>>>,
}

/// One caller's server: started on first use (a failed start is kept, so
/// that the requests waiting on it fail with it instead of starting
/// another).
pub(crate) struct Child {
    key: String,
    command: StdioCommand,
    started: OnceCell<Result<(Client, Relay), String>>,
    used: Mutex<Instant>,
}

impl Child {
    /// Its client and relay, once started.
    pub(crate) fn parts(&self) -> Option<&(Client, Relay)> {
        self.started.get().and_then(|r| r.as_ref().ok())
    }

    /// Whether a request holds it or one waits parked on it for its caller.
    fn busy(self: &Arc<Self>) -> bool {
        Arc::strong_count(self) > 1 || self.parts().is_some_and(|(_, r)| r.parked_now() > 0)
    }

    /// Lets its server stop once no request holds it: the requests parked
    /// on it (which hold its client) are dropped.
    fn stop(&self) {
        if let Some((_, relay)) = self.parts() {
            relay.drop_parked();
        }
    }

    fn idle_for(&self) -> Duration {
        self.used
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .elapsed()
    }

    fn touch(&self) {
        *self.used.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }
}

impl std::fmt::Debug for Callers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Callers")
            .field("spec", &self.spec)
            .field("running", &self.running())
            .finish()
    }
}

impl Callers {
    pub(crate) fn new(spec: PerCaller) -> Self {
        Self {
            spec,
            children: Mutex::default(),
        }
    }

    /// The setting these callers' servers follow.
    pub(crate) fn spec(&self) -> &PerCaller {
        &self.spec
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Child>>> {
        self.children.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many callers' servers run now.
    pub(crate) fn running(&self) -> usize {
        self.lock().len()
    }

    /// Stops every caller's server (requests running keep theirs until they
    /// end).
    pub(crate) fn clear(&self) {
        let gone: Vec<Arc<Child>> = self.lock().drain().map(|(_, c)| c).collect();
        gone.iter().for_each(|c| c.stop());
    }

    /// Stops the servers idle past the setting (those no request holds and
    /// none waits parked on).
    pub(crate) fn sweep(&self) {
        let idle = self.spec.idle;
        let mut gone = Vec::new();
        self.lock().retain(|_, child| {
            let keep = child.busy() || child.idle_for() < idle;
            if !keep {
                gone.push(child.clone());
            }
            keep
        });
        gone.iter().for_each(|c| c.stop());
    }

    /// Forgets `child` (its server failed): the caller's next request
    /// starts another.
    pub(crate) fn forget(&self, child: &Arc<Child>) {
        let removed = {
            let mut children = self.lock();
            let same = children
                .get(&child.key)
                .is_some_and(|c| Arc::ptr_eq(c, child));
            same.then(|| children.remove(&child.key)).flatten()
        };
        if let Some(c) = removed {
            c.stop();
        }
    }

    /// The caller of `cx`, refused when there is none.
    pub(crate) fn caller_of<'a>(
        &self,
        id: &str,
        cx: &'a Context,
    ) -> Result<&'a Principal, HandlerError> {
        cx.principal().ok_or_else(|| {
            HandlerError::protocol(Error::invalid_request(format!(
                "backend {id:?} starts a server for each caller: the request needs a caller's token"
            )))
        })
    }

    /// The running server of the caller of `cx`, if it has one.
    pub(crate) fn running_child(&self, cx: &Context) -> Option<Arc<Child>> {
        let principal = cx.principal()?;
        let key = key(principal, &self.spec.command_for(Some(principal)));
        let child = self.lock().get(&key).cloned()?;
        child.parts().is_some().then_some(child)
    }

    /// The server of the caller of `cx`, started if it is not running.
    pub(crate) async fn child(&self, id: &str, cx: &Context) -> Result<Arc<Child>, HandlerError> {
        let principal = self.caller_of(id, cx)?;
        let command = self.spec.command_for(Some(principal));
        let key = key(principal, &command);
        let child = self.slot(id, key, command)?;
        let started = child
            .started
            .get_or_init(|| async {
                let relay = Relay::new();
                let connect = relay
                    .install(self.spec.builder.clone())
                    .connect(Target::Stdio(child.command.clone()));
                match tokio::time::timeout(self.spec.start, connect).await {
                    Ok(Ok(client)) => Ok((client, relay)),
                    Ok(Err(e)) => Err(e.to_string()),
                    Err(_) => Err(format!(
                        "it did not start within {} s",
                        self.spec.start.as_secs_f64()
                    )),
                }
            })
            .await;
        if let Err(why) = started {
            self.forget(&child);
            return Err(unavailable(
                id,
                format!("backend {id:?} could not start the caller's server: {why}"),
            ));
        }
        child.touch();
        Ok(child)
    }

    /// The caller's entry, made (room made first) when it has none.
    fn slot(
        &self,
        id: &str,
        key: String,
        command: StdioCommand,
    ) -> Result<Arc<Child>, HandlerError> {
        let mut children = self.lock();
        if let Some(child) = children.get(&key) {
            child.touch();
            return Ok(child.clone());
        }
        if children.len() >= self.spec.max {
            let idlest = children
                .iter()
                .filter(|(_, c)| !c.busy())
                .max_by_key(|(_, c)| c.idle_for())
                .map(|(k, _)| k.clone());
            match idlest.and_then(|k| children.remove(&k)) {
                Some(gone) => gone.stop(),
                None => {
                    return Err(unavailable(
                        id,
                        format!(
                            "backend {id:?} runs a server for each of {} callers, all busy: try again later",
                            self.spec.max
                        ),
                    ));
                }
            }
        }
        let child = Arc::new(Child {
            key: key.clone(),
            command,
            started: OnceCell::new(),
            used: Mutex::new(Instant::now()),
        });
        children.insert(key, child.clone());
        Ok(child)
    }
}

/// One caller's key: its issuer, its subject and the environment its
/// claims give (a caller whose claims change gets a new server).
fn key(principal: &Principal, command: &StdioCommand) -> String {
    let mut key = format!(
        "{}\0{}",
        principal.issuer.as_deref().unwrap_or_default(),
        principal.subject
    );
    for (var, value) in &command.env {
        key.push('\0');
        key.push_str(&var.to_string_lossy());
        key.push('=');
        key.push_str(&value.to_string_lossy());
    }
    key
}

fn unavailable(id: &str, message: String) -> HandlerError {
    HandlerError::protocol(
        Error::new(crate::error::code::BACKEND_UNAVAILABLE, message)
            .with_data(json!({"backend": id})),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> PerCaller {
        PerCaller::new(
            StdioCommand::new("server", ["--stdio"]),
            ClientBuilder::default(),
        )
        .env_from_claim("WHO", "sub")
        .env_from_claim("TEAMS", "groups")
        .env_from_claim("LEVEL", "level")
        .env_from_claim("MISSING", "nope")
    }

    fn env(command: &StdioCommand) -> Vec<(String, String)> {
        command
            .env
            .iter()
            .map(|(k, v)| (k.to_string_lossy().into(), v.to_string_lossy().into()))
            .collect()
    }

    #[test]
    fn claims_become_variables_and_a_missing_one_is_empty() {
        let ada = Principal::new("ada")
            .with_claims(json!({"sub": "ada", "groups": ["ops", "dev"], "level": 3}));
        let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        assert_eq!(
            env(&spec().command_for(Some(&ada))),
            pairs(&[
                ("WHO", "ada"),
                ("TEAMS", "ops dev"),
                ("LEVEL", "3"),
                ("MISSING", "")
            ])
        );
        // The listing child: every variable set, empty.
        assert_eq!(
            env(&spec().command_for(None)),
            pairs(&[("WHO", ""), ("TEAMS", ""), ("LEVEL", ""), ("MISSING", "")])
        );
        // Without claims, the subject still answers `sub`.
        let bare = Principal::new("bob");
        assert_eq!(env(&spec().command_for(Some(&bare)))[0].1, "bob");
    }

    #[test]
    fn a_nul_in_a_claim_is_dropped_and_objects_are_json() {
        let p = Principal::new("x").with_claims(json!({"sub": "a\u{0}b", "groups": {"k": 1}}));
        let got = env(&spec().command_for(Some(&p)));
        assert_eq!(got[0].1, "ab");
        assert_eq!(got[1].1, r#"{"k":1}"#);
    }

    #[test]
    fn callers_with_other_claims_have_other_keys() {
        let s = spec();
        let a = Principal::new("ada").with_claims(json!({"groups": ["ops"]}));
        let b = Principal::new("ada").with_claims(json!({"groups": ["dev"]}));
        let c = Principal::new("ada").with_claims(json!({"groups": ["ops"]}));
        let k = |p: &Principal| key(p, &s.command_for(Some(p)));
        assert_ne!(k(&a), k(&b));
        assert_eq!(k(&a), k(&c));
        assert_eq!(
            PerCaller::new(StdioCommand::new("x", [""; 0]), ClientBuilder::default())
                .max_callers(0)
                .max,
            1
        );
    }

    #[tokio::test]
    async fn past_the_cap_the_idlest_idle_server_makes_room_and_busy_ones_refuse() {
        let callers = Callers::new(spec().max_callers(2));
        let cmd = StdioCommand::new("x", [""; 0]);
        let a = callers.slot("b", "a".into(), cmd.clone()).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        let b = callers.slot("b", "b".into(), cmd.clone()).unwrap();
        // Both held: a third is refused.
        let Err(e) = callers.slot("b", "c".into(), cmd.clone()) else {
            panic!("a third caller is refused");
        };
        let e = e.as_protocol().unwrap();
        assert_eq!(e.code(), crate::error::code::BACKEND_UNAVAILABLE);
        assert!(e.message().contains("all busy"), "{}", e.message());
        // `a` released, and idle longest: it makes room.
        drop(a);
        drop(b);
        let _c = callers.slot("b", "c".into(), cmd.clone()).unwrap();
        let mut keys: Vec<String> = callers.lock().keys().cloned().collect();
        keys.sort();
        assert_eq!(keys, ["b", "c"]);
        // Sweeping with no idle time left stops the unheld ones.
        let callers2 = Callers::new(spec().idle(Duration::ZERO));
        let held = callers2.slot("b", "h".into(), cmd.clone()).unwrap();
        drop(callers2.slot("b", "u".into(), cmd).unwrap());
        callers2.sweep();
        assert_eq!(callers2.running(), 1);
        callers2.forget(&held);
        assert_eq!(callers2.running(), 0);
    }
}
