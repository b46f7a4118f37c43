//! Keeping each configured backend connected: connect, register, check its
//! health, withdraw its components when it stops answering, and connect
//! again (after a growing pause, see [`Backoff`]) until it is back.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;
use snodo::client::{Client, ClientBuilder, StderrMode, StdioCommand, Target};
use snodo::proxy::{PerCaller, PinStore, Proxy, Relay};
use tokio::sync::oneshot;

use super::backoff::Backoff;
use super::config::{Backend, Command};
use crate::escape;

/// The running backends' supervisors, by id.
pub(crate) struct Supervisors {
    proxy: Proxy,
    health_interval: Duration,
    running: BTreeMap<String, (Backend, tokio::task::AbortHandle)>,
    /// Where pinned definitions are kept, once a backend is pinned.
    pins: Option<PinStore>,
    /// The supervisors' last word on each backend.
    notes: Notes,
}

impl Supervisors {
    pub(crate) fn new(proxy: Proxy, health_interval: Duration, pins: Option<PinStore>) -> Self {
        Self {
            proxy,
            health_interval,
            running: BTreeMap::new(),
            pins,
            notes: Notes::default(),
        }
    }

    /// The supervisors' last word on each backend.
    pub(crate) fn notes(&self) -> Notes {
        self.notes.clone()
    }

    /// Where pinned definitions are kept, if any backend is pinned.
    pub(crate) fn pins(&self) -> Option<&PinStore> {
        self.pins.as_ref()
    }

    /// Sets where pinned definitions are kept (a reload that pins a
    /// backend for the first time).
    pub(crate) fn set_pins(&mut self, pins: PinStore) {
        self.pins = Some(pins);
    }

    /// Lists the pinned backends again (their pins changed on disk).
    pub(crate) fn relist_pinned(&self, pin: bool) {
        for (id, (b, _)) in &self.running {
            if b.pinned(pin) {
                let (proxy, id) = (self.proxy.clone(), id.clone());
                tokio::spawn(async move {
                    let _ = proxy.refresh(&id).await;
                });
            }
        }
    }

    /// Brings the backends in line with `backends`: removed and changed ones
    /// are stopped (their components withdrawn), new and changed ones
    /// started. Returns a receiver per started backend that fires once its
    /// first attempt has ended.
    pub(crate) fn apply(
        &mut self,
        backends: &BTreeMap<String, Backend>,
        pin: bool,
    ) -> Vec<oneshot::Receiver<()>> {
        let stale: Vec<String> = self
            .running
            .iter()
            .filter(|(id, (b, _))| !backends.get(*id).is_some_and(|n| n.same_connection(b)))
            .map(|(id, _)| id.clone())
            .collect();
        for id in stale {
            if let Some((_, task)) = self.running.remove(&id) {
                task.abort();
            }
            if self.proxy.remove_backend(&id) {
                eprintln!("snodo proxy: backend {id}: removed");
            }
        }
        let mut first = Vec::new();
        for (id, b) in backends {
            // Set before a new backend's first listing; a running one is
            // listed again when its shaping changed.
            let mut shaping = b.shaping.clone();
            if b.pinned(pin)
                && let Some(pins) = &self.pins
            {
                shaping = shaping.pin(pins.clone());
            }
            let set = self
                .proxy
                .shape(id, shaping)
                .and_then(|()| self.proxy.limit(id, b.limits.clone()));
            if let Err(e) = set {
                eprintln!("snodo proxy: backend {id}: refused: {e}");
                continue;
            }
            if !self.running.contains_key(id) {
                let set = per_caller(b)
                    .and_then(|p| self.proxy.per_caller(id, p).map_err(|e| e.to_string()));
                if let Err(e) = set {
                    eprintln!("snodo proxy: backend {id}: refused: {e}");
                    continue;
                }
            }
            if let Some((running, _)) = self.running.get_mut(id) {
                *running = b.clone();
                continue;
            }
            let (tx, rx) = oneshot::channel();
            first.push(rx);
            let task = match connector(b) {
                Ok(mut connector) => tokio::spawn(supervise(
                    self.proxy.clone(),
                    id.clone(),
                    {
                        connector.notes = Some(self.notes.clone());
                        connector
                    },
                    self.health_interval,
                    Some(tx),
                    None,
                )),
                Err(e) => {
                    eprintln!("snodo proxy: backend {id}: refused: {e}");
                    continue;
                }
            };
            self.running
                .insert(id.clone(), (b.clone(), task.abort_handle()));
        }
        first
    }
}

/// The last failure each backend's supervisor saw, by id.
pub(crate) type Notes = std::sync::Arc<std::sync::Mutex<BTreeMap<String, String>>>;

/// How to reach one backend.
#[derive(Clone)]
pub(crate) struct Connector {
    /// Where its failures are noted, if anywhere.
    pub(crate) notes: Option<Notes>,
    pub(crate) builder: ClientBuilder,
    pub(crate) target: Target,
    /// How long one attempt (start, handshake, listing) may take.
    pub(crate) timeout: Duration,
    /// What the status lines start with (`snodo proxy: backend ID`).
    pub(crate) label: String,
}

/// The connector of a configured backend.
fn connector(backend: &Backend) -> Result<Connector, String> {
    Ok(Connector {
        notes: None,
        builder: builder(backend),
        target: target(backend)?,
        timeout: Duration::from_secs_f64(backend.connect_timeout),
        label: String::new(),
    })
}

/// One backend's life: connected and checked, or waiting to connect again.
/// `connected` is a client already added to the proxy under `id`.
pub(crate) async fn supervise(
    proxy: Proxy,
    id: String,
    connector: Connector,
    interval: Duration,
    mut first: Option<oneshot::Sender<()>>,
    mut connected: Option<Client>,
) {
    let label = if connector.label.is_empty() {
        format!("snodo proxy: backend {id}")
    } else {
        connector.label.clone()
    };
    let note = |what: &str| {
        if let Some(notes) = &connector.notes {
            let mut notes = notes.lock().unwrap_or_else(|e| e.into_inner());
            notes.insert(id.clone(), what.to_owned());
        }
    };
    let mut backoff = Backoff::default();
    let mut changes = proxy.changes();
    loop {
        // Changes from here on may heal a clash this attempt runs into.
        changes.borrow_and_update();
        let client = match connected.take() {
            Some(client) => Some(client),
            None => {
                let attempt =
                    tokio::time::timeout(connector.timeout, connect(&proxy, &id, &connector)).await;
                match attempt {
                    Ok(Ok((client, synced))) => {
                        up(&label, &synced);
                        Some(client)
                    }
                    Ok(Err(Failure::Refused(e, client, relay))) => {
                        // A clash heals when the other backends' names
                        // move: tried again then, connected meanwhile.
                        eprintln!(
                            "{label}: refused: {} (tried again when the names served change)",
                            escape::line(&e)
                        );
                        if let Some(tx) = first.take() {
                            let _ = tx.send(());
                        }
                        let added =
                            add_once_clear(&proxy, &id, &client, &relay, &mut changes).await;
                        match added {
                            Ok(synced) => {
                                up(&label, &synced);
                                Some(client)
                            }
                            Err(e) => {
                                eprintln!("{label}: down: {}", escape::line(&e.to_string()));
                                note(&e.to_string());
                                client.close().await;
                                None
                            }
                        }
                    }
                    Ok(Err(Failure::Down(e))) => {
                        eprintln!("{label}: down: {}", escape::line(&e));
                        note(&e);
                        None
                    }
                    Err(_) => {
                        let e = format!("not ready within {} s", connector.timeout.as_secs_f64());
                        eprintln!("{label}: down: {e}");
                        note(&e);
                        None
                    }
                }
            }
        };
        if let Some(tx) = first.take() {
            let _ = tx.send(());
        }
        let up = match client {
            Some(client) => {
                let since = tokio::time::Instant::now();
                let why = watch_health(&client, interval).await;
                note(&why);
                proxy.remove_backend(&id);
                eprintln!(
                    "{label}: down ({}): its components are withdrawn",
                    escape::line(&why)
                );
                client.close().await;
                Some(since.elapsed())
            }
            None => None,
        };
        let pause = backoff.after(up);
        eprintln!("{label}: next attempt in {:.1} s", pause.as_secs_f64());
        tokio::time::sleep(pause).await;
    }
}

/// Says a backend is up, and what it brought.
fn up(label: &str, synced: &snodo::proxy::Synced) {
    eprintln!(
        "{label}: up ({} tools, {} resources, {} prompts)",
        synced.tools, synced.resources, synced.prompts
    );
    for refused in &synced.refused {
        eprintln!("{label}: left out: {}", escape::line(refused));
    }
}

/// Adds a connected backend the proxy refused (its names clash with
/// another's) each time the names served change, until it is added or its
/// client fails.
async fn add_once_clear(
    proxy: &Proxy,
    id: &str,
    client: &Client,
    relay: &Relay,
    changes: &mut tokio::sync::watch::Receiver<u64>,
) -> Result<snodo::proxy::Synced, String> {
    loop {
        if changes.changed().await.is_err() {
            return Err("the proxy has stopped".into());
        }
        match proxy
            .add_relayed_backend(id, client.clone(), relay.clone())
            .await
        {
            Ok(synced) => return Ok(synced),
            Err(e) if e.client_error().is_some() => return Err(e.to_string()),
            Err(_) => {}
        }
    }
}

/// Why a connection attempt failed.
enum Failure {
    /// The backend could not be reached or broke the protocol.
    Down(String),
    /// The proxy refused it (a name clash); its client stays connected.
    Refused(String, Client, Relay),
}

async fn connect(
    proxy: &Proxy,
    id: &str,
    connector: &Connector,
) -> Result<(Client, snodo::proxy::Synced), Failure> {
    let relay = Relay::new();
    let client = relay
        .install(connector.builder.clone())
        .connect(connector.target.clone())
        .await
        .map_err(|e| Failure::Down(e.to_string()))?;
    match proxy
        .add_relayed_backend(id, client.clone(), relay.clone())
        .await
    {
        Ok(synced) => Ok((client, synced)),
        Err(e) if e.client_error().is_some() => {
            client.close().await;
            Err(Failure::Down(e.to_string()))
        }
        Err(e) => Err(Failure::Refused(e.to_string(), client, relay)),
    }
}

/// How a backend started per caller starts each caller's server (`None`:
/// not such a backend).
fn per_caller(backend: &Backend) -> Result<Option<PerCaller>, String> {
    let Some(claims) = &backend.env_from_claims else {
        return Ok(None);
    };
    let mut per_caller = PerCaller::new(command(backend)?, builder(backend))
        .start_timeout(Duration::from_secs_f64(backend.connect_timeout));
    for (var, claim) in claims {
        per_caller = per_caller.env_from_claim(var, claim);
    }
    if let Some(n) = backend.max_callers {
        per_caller = per_caller.max_callers(usize::try_from(n).unwrap_or(usize::MAX));
    }
    if let Some(s) = backend.caller_idle {
        per_caller = per_caller.idle(Duration::from_secs_f64(s));
    }
    Ok(Some(per_caller))
}

/// The client a backend is spoken to with.
fn builder(backend: &Backend) -> ClientBuilder {
    let mut builder = Client::builder()
        .client_info("snodo-proxy", env!("CARGO_PKG_VERSION"))
        .timeout(Duration::from_secs_f64(backend.timeout))
        .reset_timeout_on_progress(true);
    for (name, value) in &backend.headers {
        builder = builder.header(name, value);
    }
    builder
}

/// Where a backend is reached; a command started per caller is also
/// started for the proxy itself, as [`PerCaller::listing_command`] says.
fn target(backend: &Backend) -> Result<Target, String> {
    if let Some(url) = &backend.url {
        if backend.transport.as_deref() == Some("sse") {
            return Ok(Target::Sse(url.clone()));
        }
        return Ok(Target::from(url.as_str()));
    }
    Ok(Target::Stdio(match per_caller(backend)? {
        Some(per_caller) => per_caller.listing_command(),
        None => command(backend)?,
    }))
}

/// A backend's command, its environment and standard error as the file
/// gives them.
fn command(backend: &Backend) -> Result<StdioCommand, String> {
    let mut command = match &backend.command {
        Some(Command::Line(line)) => StdioCommand::parse(line).map_err(|e| e.to_string())?,
        Some(Command::Argv(argv)) => StdioCommand::new(&argv[0], &argv[1..]),
        None => return Err("no command or url".into()),
    };
    for (k, v) in &backend.env {
        command = command.env(k, v);
    }
    let stderr = if backend.stderr == "quiet" {
        StderrMode::Null
    } else {
        StderrMode::Inherit
    };
    Ok(command.stderr(stderr))
}

/// Pings the backend every `interval`; returns why it is taken for down:
/// a failed connection at once, or two checks in a row without an answer.
async fn watch_health(client: &Client, interval: Duration) -> String {
    let mut silent = 0;
    loop {
        tokio::time::sleep(interval).await;
        let check = client.request("ping", json!({}));
        match tokio::time::timeout(interval.max(Duration::from_secs(2)), check).await {
            // Any answer, an error included, shows it is alive.
            Ok(Ok(_)) => silent = 0,
            Ok(Err(e)) if e.is_rpc() => silent = 0,
            Ok(Err(e)) if !e.is_timeout() => return e.to_string(),
            Ok(Err(_)) | Err(_) => {
                silent += 1;
                if silent >= 2 {
                    return "two health checks without an answer".into();
                }
            }
        }
    }
}
