//! Which revision a connection speaks: the one rule every transport asks.
//!
//! A transport frames bytes into messages and hands each to its
//! [`Connection`], which says where the message goes: the 2026-07-28
//! pipeline, an initialize-era session, or the handshake that opens one.
//! The rule, in order:
//!
//! 1. a connection pinned to an initialize-era session (a line connection
//!    after `initialize`) stays in it;
//! 2. a message whose `_meta` claims `io.modelcontextprotocol/protocolVersion`
//!    is 2026-07-28 (a line connection is pinned there by its first such
//!    request other than `server/discover`, which answers without pinning so
//!    that a client may still fall back to `initialize`);
//! 3. a connection pinned to 2026-07-28 stays there, and so does every
//!    message of a server that serves no initialize-era revision;
//! 4. a message the transport says names a session (HTTP's
//!    `Mcp-Session-Id`) goes to that session, which the transport looks up;
//! 5. a transport header naming 2026-07-28 makes it 2026-07-28;
//! 6. otherwise `initialize` opens a session; notifications and responses
//!    are 2026-07-28's; on a line connection a request with `_meta` and
//!    `server/discover` are 2026-07-28's and `ping` is answered, and any
//!    other request is refused as sent before `initialize`.
//!
//! HTTP has no connection that outlives a request: each POST is a fresh,
//! unpinned connection, and the session it names is the state that lasts.

use std::sync::Arc;

use super::Server;
use super::legacy::Session;
use crate::protocol::{Revision, claims_modern};
use crate::wire::Message;

/// How a transport carries messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// One long-lived stream of lines (stdio): the connection is pinned to
    /// the first revision a message commits to.
    Lines,
    /// One message per HTTP POST: nothing is pinned.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    Http,
}

/// What the transport knows about a message besides its bytes.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Carried<'a> {
    /// The transport names an initialize-era session for it.
    pub(crate) names_session: bool,
    /// The revision a transport header names (HTTP's
    /// `MCP-Protocol-Version`), as sent.
    pub(crate) version_header: Option<&'a str>,
}

/// Where one message goes.
#[derive(Debug)]
pub(crate) enum Speaks {
    /// The 2026-07-28 pipeline ([`Server::handle`]).
    Modern,
    /// The initialize-era session the connection is pinned to.
    Session(Arc<Session>),
    /// The initialize-era session the transport names: the transport looks
    /// it up (and refuses the message when it names none).
    Named,
    /// `initialize`: open a session.
    Initialize,
    /// An initialize-era `ping` before `initialize`: answered `{}`.
    Ping,
    /// A request sent before `initialize`: refused.
    NotInitialized,
}

/// The revision state of one connection.
#[derive(Debug)]
pub(crate) struct Connection {
    framing: Framing,
    pin: Pin,
}

#[derive(Debug)]
enum Pin {
    Unpinned,
    Modern,
    Session(Arc<Session>),
}

impl Connection {
    /// A connection of `framing`, not yet pinned to a revision.
    pub(crate) fn new(framing: Framing) -> Self {
        Self {
            framing,
            pin: Pin::Unpinned,
        }
    }

    /// Decides where `message` goes, pinning a line connection to 2026-07-28
    /// on its first request that claims it. `carried` is asked only when the
    /// message itself does not decide (a claiming request reads no header).
    pub(crate) fn route<'a>(
        &mut self,
        server: &Server,
        message: &Message,
        carried: impl FnOnce() -> Carried<'a>,
    ) -> Speaks {
        let lines = self.framing == Framing::Lines;
        match &self.pin {
            Pin::Session(session) => return Speaks::Session(session.clone()),
            Pin::Modern => return Speaks::Modern,
            Pin::Unpinned => {}
        }
        if claims(message) {
            if lines
                && let Message::Request(request) = message
                && request.method != "server/discover"
            {
                self.pin = Pin::Modern;
            }
            return Speaks::Modern;
        }
        if !server.serves_legacy() {
            return Speaks::Modern;
        }
        let carried = carried();
        if carried.names_session {
            return Speaks::Named;
        }
        if carried.version_header == Some(Revision::V2026_07_28.as_str()) {
            return Speaks::Modern;
        }
        let Message::Request(request) = message else {
            return Speaks::Modern;
        };
        match request.method.as_str() {
            "initialize" => Speaks::Initialize,
            _ if !lines => Speaks::NotInitialized,
            "ping" if !request.meta.is_present() => Speaks::Ping,
            "server/discover" => Speaks::Modern,
            _ if request.meta.is_present() => Speaks::Modern,
            _ => Speaks::NotInitialized,
        }
    }

    /// Pins a line connection to the session its `initialize` opened.
    pub(crate) fn pin_session(&mut self, session: Arc<Session>) {
        if self.framing == Framing::Lines {
            self.pin = Pin::Session(session);
        }
    }

    /// The initialize-era session the connection is pinned to, if any.
    pub(crate) fn session(&self) -> Option<&Arc<Session>> {
        match &self.pin {
            Pin::Session(session) => Some(session),
            _ => None,
        }
    }
}

/// Whether a message claims 2026-07-28 through its `_meta`.
pub(crate) fn claims(message: &Message) -> bool {
    match message {
        Message::Request(r) => r.meta.claims_modern(),
        Message::Notification(n) => claims_modern(&n.params),
        Message::Response(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Revision;
    use crate::wire::{Limits, decode};

    fn both() -> Server {
        Server::builder("t", "1").build().unwrap()
    }

    fn modern_only() -> Server {
        Server::builder("t", "1")
            .revisions([Revision::V2026_07_28])
            .build()
            .unwrap()
    }

    fn message(text: &str) -> Message {
        decode(text.as_bytes(), &Limits::default()).unwrap()
    }

    const CLAIMING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    const DISCOVER: &str = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    const BARE_LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
    const PING: &str = r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#;
    const NOTE: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

    /// A session opened by the `initialize` vector.
    fn open_session(server: &Server) -> Arc<Session> {
        let Message::Request(request) = message(INITIALIZE) else {
            unreachable!()
        };
        server
            .initialize(&request, &crate::context::TransportInfo::default(), || {
                Ok((String::new(), None))
            })
            .unwrap()
            .session
    }

    fn route(connection: &mut Connection, server: &Server, text: &str) -> &'static str {
        route_with(connection, server, text, Carried::default())
    }

    fn route_with(
        connection: &mut Connection,
        server: &Server,
        text: &str,
        carried: Carried<'_>,
    ) -> &'static str {
        match connection.route(server, &message(text), || carried) {
            Speaks::Modern => "modern",
            Speaks::Session(_) => "session",
            Speaks::Named => "named",
            Speaks::Initialize => "initialize",
            Speaks::Ping => "ping",
            Speaks::NotInitialized => "not initialized",
        }
    }

    #[test]
    fn a_line_connection_is_pinned_by_its_first_claiming_request_but_not_by_discover() {
        let server = both();
        let mut lines = Connection::new(Framing::Lines);
        assert_eq!(route(&mut lines, &server, DISCOVER), "modern");
        assert_eq!(route(&mut lines, &server, BARE_LIST), "not initialized");
        assert_eq!(route(&mut lines, &server, INITIALIZE), "initialize");
        assert_eq!(route(&mut lines, &server, CLAIMING), "modern");
        // Pinned: an unclaimed request and even `initialize` stay 2026-07-28.
        assert_eq!(route(&mut lines, &server, BARE_LIST), "modern");
        assert_eq!(route(&mut lines, &server, INITIALIZE), "modern");
    }

    #[test]
    fn a_line_connection_pinned_to_a_session_stays_in_it_whatever_a_message_claims() {
        let server = both();
        let mut lines = Connection::new(Framing::Lines);
        lines.pin_session(open_session(&server));
        for text in [CLAIMING, BARE_LIST, PING, NOTE, INITIALIZE] {
            assert_eq!(route(&mut lines, &server, text), "session", "{text}");
        }
        assert!(lines.session().is_some());
    }

    #[test]
    fn before_initialize_a_line_connection_answers_ping_and_refuses_other_requests() {
        let server = both();
        let mut lines = Connection::new(Framing::Lines);
        assert_eq!(route(&mut lines, &server, PING), "ping");
        assert_eq!(route(&mut lines, &server, BARE_LIST), "not initialized");
        assert_eq!(route(&mut lines, &server, NOTE), "modern");
        // A request with `_meta` that makes no claim is 2026-07-28's to refuse.
        let with_meta = r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"progressToken":1}}}"#;
        assert_eq!(route(&mut lines, &server, with_meta), "modern");
    }

    #[test]
    fn an_http_post_is_never_pinned_and_names_its_session_by_header() {
        let server = both();
        let names = Carried {
            names_session: true,
            version_header: None,
        };
        let mut post = Connection::new(Framing::Http);
        assert_eq!(route(&mut post, &server, CLAIMING), "modern");
        assert_eq!(route(&mut post, &server, BARE_LIST), "not initialized");
        assert_eq!(route(&mut post, &server, PING), "not initialized");
        assert_eq!(route(&mut post, &server, INITIALIZE), "initialize");
        assert_eq!(route(&mut post, &server, NOTE), "modern");
        assert_eq!(route_with(&mut post, &server, BARE_LIST, names), "named");
        // The claim wins over the header.
        assert_eq!(route_with(&mut post, &server, CLAIMING, names), "modern");
        let modern_header = Carried {
            names_session: false,
            version_header: Some("2026-07-28"),
        };
        assert_eq!(
            route_with(&mut post, &server, BARE_LIST, modern_header),
            "modern"
        );
        assert_eq!(
            route_with(&mut post, &server, INITIALIZE, modern_header),
            "modern"
        );
        let old_header = Carried {
            names_session: false,
            version_header: Some("2025-11-25"),
        };
        assert_eq!(
            route_with(&mut post, &server, BARE_LIST, old_header),
            "not initialized"
        );
        // A session pinned to a POST is ignored: the session id is the state.
        post.pin_session(open_session(&server));
        assert!(post.session().is_none());
    }

    #[test]
    fn a_server_of_2026_07_28_only_sends_everything_there() {
        let server = modern_only();
        let names = Carried {
            names_session: true,
            version_header: None,
        };
        for framing in [Framing::Lines, Framing::Http] {
            let mut connection = Connection::new(framing);
            for text in [INITIALIZE, BARE_LIST, PING, NOTE] {
                assert_eq!(route(&mut connection, &server, text), "modern", "{text}");
            }
            assert_eq!(
                route_with(&mut connection, &server, BARE_LIST, names),
                "modern"
            );
        }
    }
}
