//! The contract every [`EventBus`] keeps, as a test suite to run against an
//! implementation: [`run`] takes a function that opens a new connection to
//! the same bus (one per simulated node; it may connect asynchronously) and
//! panics on the first broken rule.
//!
//! The rules: every subscriber receives every payload once; the payloads of
//! one publisher arrive in the order it published them; payloads of any
//! size up to [`MAX_BUS_PAYLOAD`] arrive intact; hubs joined by the bus
//! hear each other's events, their own once; and what anyone else puts on
//! the bus (an envelope sealed with another key, a genuine one changed or
//! replayed) reaches no listener and is counted.
//!
//! ```no_run
//! # async fn example() {
//! use snodo::server::events::bus::MemoryBus;
//! let bus = MemoryBus::new();
//! snodo_test::event_bus::run(|| std::future::ready(bus.clone())).await;
//! # }
//! ```

use std::collections::HashMap;
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout};

use snodo::server::events::bus::{Delivery, EventBus, MAX_BUS_PAYLOAD};
use snodo::server::events::{Event, EventHub};
use snodo::server::keyring::Keyring;

/// How long one delivery may take before the suite gives up.
const PATIENCE: Duration = Duration::from_secs(20);

/// Payloads each publisher sends in the ordering check.
const PER_PUBLISHER: usize = 200;

/// Runs every rule against buses made by `connect` (each call: a new
/// connection to the same bus, as another node would hold).
pub async fn run<B, F, Fut>(connect: F)
where
    B: EventBus,
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = B>,
{
    every_subscriber_hears_every_publisher_in_order(&connect).await;
    payloads_of_every_size_arrive_intact(&connect).await;
    hubs_hear_each_other_once(&connect).await;
    forged_and_replayed_envelopes_reach_nobody(&connect).await;
}

/// A keyring of one random key.
fn keyring(id: &str) -> Keyring {
    let secret = Keyring::generate_secret().expect("the random source");
    Keyring::parse(&format!("{id}={secret}")).expect("a generated key")
}

/// Two hubs on buses from `connect` sharing one keyring, once B hears A.
async fn joined_hubs<B, Fut>(connect: &impl Fn() -> Fut) -> (EventHub, EventHub)
where
    B: EventBus,
    Fut: std::future::Future<Output = B>,
{
    let keys = keyring("contract");
    let a = EventHub::with_bus(8, connect().await, keys.clone()).expect("a node id");
    let b = EventHub::with_bus(8, connect().await, keys).expect("a node id");
    let mut hear_b = b.subscribe();
    // The hubs' subscriptions go live some time after they are made: publish
    // until B hears A.
    let deadline = Instant::now() + PATIENCE;
    loop {
        a.tools_changed();
        if let Ok(Ok(event)) = timeout(Duration::from_millis(100), hear_b.recv()).await {
            assert_eq!(event, Event::ToolsListChanged);
            break;
        }
        assert!(Instant::now() < deadline, "hub B never heard hub A");
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    (a, b)
}

/// Publishes probes from every bus until every subscriber has heard each
/// one (subscriptions of a networked bus are ready some time after
/// `subscribe`); returns the subscriptions.
async fn ready<B: EventBus>(buses: &[B], tag: &str) -> Vec<mpsc::Receiver<Delivery>> {
    let mut subs: Vec<_> = buses.iter().map(|b| b.subscribe()).collect();
    let deadline = Instant::now() + PATIENCE;
    let mut heard = vec![vec![false; buses.len()]; buses.len()];
    while heard.iter().any(|row| row.iter().any(|h| !h)) {
        assert!(
            Instant::now() < deadline,
            "the bus never delivered a probe: subscriptions are not live"
        );
        for (i, bus) in buses.iter().enumerate() {
            bus.publish(Bytes::from(format!("probe-{tag}-{i}")));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        for (s, sub) in subs.iter_mut().enumerate() {
            while let Ok(delivery) = sub.try_recv() {
                if let Delivery::Message(m) = delivery
                    && let Some(i) = std::str::from_utf8(&m)
                        .ok()
                        .and_then(|t| t.strip_prefix(&format!("probe-{tag}-")))
                        .and_then(|i| i.parse::<usize>().ok())
                    && i < buses.len()
                {
                    heard[s][i] = true;
                }
            }
        }
    }
    subs
}

/// The next non-probe message of a subscription.
async fn next_message(sub: &mut mpsc::Receiver<Delivery>) -> Bytes {
    loop {
        match timeout(PATIENCE, sub.recv()).await {
            Ok(Some(Delivery::Message(m))) if m.starts_with(b"probe-") => continue,
            Ok(Some(Delivery::Message(m))) => return m,
            Ok(Some(Delivery::Lost)) => panic!("the bus reported a loss during the contract"),
            Ok(Some(other)) => panic!("a delivery this suite does not know: {other:?}"),
            Ok(None) => panic!("the subscription ended"),
            Err(_) => panic!("no delivery within {PATIENCE:?}"),
        }
    }
}

/// `n` buses from `connect`.
async fn connect_n<B, Fut: std::future::Future<Output = B>>(
    connect: &impl Fn() -> Fut,
    n: usize,
) -> Vec<B> {
    let mut buses = Vec::with_capacity(n);
    for _ in 0..n {
        buses.push(connect().await);
    }
    buses
}

async fn every_subscriber_hears_every_publisher_in_order<B, Fut>(connect: &impl Fn() -> Fut)
where
    B: EventBus,
    Fut: std::future::Future<Output = B>,
{
    let buses = connect_n(connect, 3).await;
    let mut subs = ready(&buses, "order").await;
    for n in 0..PER_PUBLISHER {
        for (p, bus) in buses.iter().enumerate() {
            bus.publish(Bytes::from(format!("{p}:{n}")));
        }
    }
    for sub in &mut subs {
        let mut next: HashMap<usize, usize> = HashMap::new();
        for _ in 0..PER_PUBLISHER * buses.len() {
            let m = next_message(sub).await;
            let text = std::str::from_utf8(&m).expect("a payload as published");
            let (p, n) = text.split_once(':').expect("a payload as published");
            let (p, n): (usize, usize) = (p.parse().unwrap(), n.parse().unwrap());
            let expected = next.entry(p).or_default();
            assert_eq!(n, *expected, "publisher {p}'s payloads arrive in order");
            *expected += 1;
        }
        assert!(
            next.values().all(|n| *n == PER_PUBLISHER),
            "every payload arrives once"
        );
    }
}

async fn payloads_of_every_size_arrive_intact<B, Fut>(connect: &impl Fn() -> Fut)
where
    B: EventBus,
    Fut: std::future::Future<Output = B>,
{
    let buses = connect_n(connect, 2).await;
    let mut subs = ready(&buses, "size").await;
    let sizes = [1, 7_999, 8_000, 8_001, 100_000, MAX_BUS_PAYLOAD];
    for (i, size) in sizes.iter().enumerate() {
        let mut payload = vec![b'a' + (i as u8); *size];
        payload[0] = b'#';
        buses[0].publish(Bytes::from(payload));
    }
    for sub in &mut subs {
        for (i, size) in sizes.iter().enumerate() {
            let m = next_message(sub).await;
            assert_eq!(m.len(), *size, "a payload of {size} bytes arrives whole");
            assert!(m[1..].iter().all(|b| *b == b'a' + (i as u8)));
        }
    }
}

async fn hubs_hear_each_other_once<B, Fut>(connect: &impl Fn() -> Fut)
where
    B: EventBus,
    Fut: std::future::Future<Output = B>,
{
    let (a, b) = joined_hubs(connect).await;
    let (mut hear_a, mut hear_b) = (a.subscribe(), b.subscribe());
    a.resource_updated("test://contract/1");
    assert_eq!(
        timeout(PATIENCE, hear_b.recv()).await.unwrap().unwrap(),
        Event::ResourceUpdated("test://contract/1".into())
    );
    assert_eq!(
        hear_a.recv().await.unwrap(),
        Event::ResourceUpdated("test://contract/1".into())
    );
    b.prompts_changed();
    assert_eq!(
        timeout(PATIENCE, hear_a.recv()).await.unwrap().unwrap(),
        Event::PromptsListChanged
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        hear_a.try_recv().is_err(),
        "a hub hears its own events once, not again from the bus"
    );
    assert_eq!(a.resyncs(), 0);
    assert_eq!((a.refused(), b.refused()), (0, 0));
}

async fn forged_and_replayed_envelopes_reach_nobody<B, Fut>(connect: &impl Fn() -> Fut)
where
    B: EventBus,
    Fut: std::future::Future<Output = B>,
{
    // Anyone else on the bus: reads every payload, publishes its own.
    let outsider = connect().await;
    let mut tapped = outsider.subscribe();
    let (a, b) = joined_hubs(connect).await;
    let mut hear_b = b.subscribe();
    a.resource_updated("test://contract/genuine");
    assert_eq!(
        timeout(PATIENCE, hear_b.recv()).await.unwrap().unwrap(),
        Event::ResourceUpdated("test://contract/genuine".into())
    );
    let genuine = loop {
        let m = next_message(&mut tapped).await;
        if m.windows(8).any(|w| w == b"genuine\"") {
            break m;
        }
    };
    let refused = b.refused();
    // A genuine envelope again; changed; sealed with another key; garbage.
    let mut changed = genuine.to_vec();
    let at = changed.len() - 3;
    changed[at] ^= 1;
    for payload in [
        genuine.clone(),
        Bytes::from(changed),
        Bytes::from_static(br#"{"o":"outsider","s":1,"e":{"k":"tools"}}"#),
    ] {
        outsider.publish(payload);
    }
    // A hub of its own, under the same key id with another secret: its
    // envelopes are well formed and sealed, with the wrong key.
    let intruder = EventHub::with_bus(8, connect().await, keyring("contract")).expect("a node id");
    intruder.tools_changed();
    let deadline = Instant::now() + PATIENCE;
    while b.refused() < refused + 4 {
        assert!(
            Instant::now() < deadline,
            "hub B counted {} of the 4 refused envelopes",
            b.refused() - refused
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    a.prompts_changed();
    assert_eq!(
        timeout(PATIENCE, hear_b.recv()).await.unwrap().unwrap(),
        Event::PromptsListChanged,
        "nothing of the outsider's reached B's listeners"
    );
    assert_eq!(b.resyncs(), 0, "a refused envelope is no gap");
}
