//! What surrounds the spans and the metrics in an export request: the
//! resource and the instrumentation scope.

use super::proto::{self, AnyValue};

/// The instrumentation scope every span and metric is reported under.
pub(super) fn scope(buf: &mut Vec<u8>) {
    proto::message(buf, 1, |s| {
        proto::string(s, 1, "snodo");
        proto::string(s, 2, env!("CARGO_PKG_VERSION"));
    });
}

/// The encoded `resource` field (1) of `ResourceSpans`/`ResourceMetrics`.
pub(super) fn resource(attrs: &[(String, String)]) -> Vec<u8> {
    let mut buf = Vec::new();
    proto::message(&mut buf, 1, |r| {
        for (k, v) in attrs {
            proto::key_value(r, 1, k, AnyValue::Str(v));
        }
    });
    buf
}
