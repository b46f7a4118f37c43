//! The exporter's settings, read from the standard `OTEL_*` variables.

use std::time::Duration;

use super::ExportError;
use super::sampler::Sampler;

/// One signal's destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    /// The full URL (`…/v1/traces` or `…/v1/metrics`).
    pub(crate) url: String,
    /// Headers sent with every export (`OTEL_EXPORTER_OTLP_HEADERS` and the
    /// signal's own, the latter winning).
    pub(crate) headers: Vec<(String, String)>,
    /// How long one export may take.
    pub(crate) timeout: Duration,
}

/// The batch span processor's settings (`OTEL_BSP_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Batching {
    /// The longest a span waits before it is sent.
    pub(crate) delay: Duration,
    /// The most spans held; more are dropped (and counted).
    pub(crate) max_queue: usize,
    /// The most spans in one export.
    pub(crate) max_batch: usize,
}

/// Everything the exporter needs.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) traces: Option<Target>,
    pub(crate) metrics: Option<Target>,
    pub(crate) sampler: Sampler,
    pub(crate) batching: Batching,
    /// `OTEL_METRIC_EXPORT_INTERVAL`.
    pub(crate) metric_interval: Duration,
    /// The resource's attributes, `service.name` first.
    pub(crate) resource: Vec<(String, String)>,
}

/// A variable's value, `None` when unset or blank.
pub(crate) type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

fn get(env: Lookup<'_>, name: &str) -> Option<String> {
    env(name)
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// The two signals.
#[derive(Debug, Clone, Copy)]
enum Signal {
    Traces,
    Metrics,
}

impl Signal {
    fn upper(self) -> &'static str {
        match self {
            Signal::Traces => "TRACES",
            Signal::Metrics => "METRICS",
        }
    }

    fn path(self) -> &'static str {
        match self {
            Signal::Traces => "/v1/traces",
            Signal::Metrics => "/v1/metrics",
        }
    }

    fn var(self, rest: &str) -> String {
        format!("OTEL_EXPORTER_OTLP_{}_{rest}", self.upper())
    }
}

impl Config {
    /// The settings `env` gives; `endpoint` (a base URL) replaces the
    /// endpoint variables when given. `None` when nothing is exported.
    pub(crate) fn read(
        env: Lookup<'_>,
        endpoint: Option<&str>,
        default_service: &str,
    ) -> Result<Option<Self>, ExportError> {
        if get(env, "OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        let traces = target(env, Signal::Traces, endpoint)?;
        let metrics = target(env, Signal::Metrics, endpoint)?;
        if traces.is_none() && metrics.is_none() {
            return Ok(None);
        }
        Ok(Some(Config {
            traces,
            metrics,
            sampler: Sampler::read(
                get(env, "OTEL_TRACES_SAMPLER").as_deref(),
                get(env, "OTEL_TRACES_SAMPLER_ARG").as_deref(),
            )?,
            batching: Batching {
                delay: millis(env, "OTEL_BSP_SCHEDULE_DELAY", 5_000)?,
                max_queue: count(env, "OTEL_BSP_MAX_QUEUE_SIZE", 2_048)?,
                max_batch: count(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512)?,
            },
            metric_interval: millis(env, "OTEL_METRIC_EXPORT_INTERVAL", 60_000)?,
            resource: resource(env, default_service),
        }))
    }
}

/// A signal's destination, or `None` when it is not exported: it is when
/// `OTEL_{SIGNAL}_EXPORTER` is `otlp` or an endpoint is given, unless that
/// variable is `none`.
fn target(
    env: Lookup<'_>,
    signal: Signal,
    endpoint: Option<&str>,
) -> Result<Option<Target>, ExportError> {
    let exporter_var = format!("OTEL_{}_EXPORTER", signal.upper());
    let asked = match get(env, &exporter_var).as_deref() {
        Some("none") => return Ok(None),
        Some("otlp") => true,
        Some(other) => {
            return Err(ExportError::new(format!(
                "{exporter_var}={other} is not supported (otlp or none)"
            )));
        }
        None => false,
    };
    let url = match endpoint {
        Some(base) => format!("{}{}", base.trim_end_matches('/'), signal.path()),
        None => match get(env, &signal.var("ENDPOINT")) {
            Some(url) => url,
            None => match get(env, "OTEL_EXPORTER_OTLP_ENDPOINT") {
                Some(base) => format!("{}{}", base.trim_end_matches('/'), signal.path()),
                None if asked => format!("http://localhost:4318{}", signal.path()),
                None => return Ok(None),
            },
        },
    };
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(ExportError::new(format!(
            "the OTLP endpoint {url:?} is not an http:// or https:// URL"
        )));
    }
    for var in [signal.var("PROTOCOL"), "OTEL_EXPORTER_OTLP_PROTOCOL".into()] {
        if let Some(p) = get(env, &var) {
            if p != "http/protobuf" {
                return Err(ExportError::new(format!(
                    "{var}={p} is not supported (http/protobuf)"
                )));
            }
            break;
        }
    }
    for var in [
        signal.var("COMPRESSION"),
        "OTEL_EXPORTER_OTLP_COMPRESSION".into(),
    ] {
        if let Some(c) = get(env, &var) {
            if c != "none" {
                return Err(ExportError::new(format!(
                    "{var}={c} is not supported (none)"
                )));
            }
            break;
        }
    }
    let mut headers = list(get(env, "OTEL_EXPORTER_OTLP_HEADERS").as_deref());
    for (k, v) in list(get(env, &signal.var("HEADERS")).as_deref()) {
        headers.retain(|(old, _)| !old.eq_ignore_ascii_case(&k));
        headers.push((k, v));
    }
    for (k, v) in &headers {
        if http::HeaderName::from_bytes(k.as_bytes()).is_err()
            || http::HeaderValue::from_str(v).is_err()
        {
            return Err(ExportError::new(format!(
                "the OTLP header {k:?} is not valid"
            )));
        }
    }
    let timeout = match get(env, &signal.var("TIMEOUT")) {
        Some(_) => millis(env, &signal.var("TIMEOUT"), 10_000)?,
        None => millis(env, "OTEL_EXPORTER_OTLP_TIMEOUT", 10_000)?,
    };
    Ok(Some(Target {
        url,
        headers,
        timeout,
    }))
}

fn number(env: Lookup<'_>, name: &str, default: u64) -> Result<u64, ExportError> {
    match get(env, name) {
        None => Ok(default),
        Some(v) => v
            .parse::<u64>()
            .map_err(|_| ExportError::new(format!("{name}={v} is not a whole number"))),
    }
}

fn millis(env: Lookup<'_>, name: &str, default: u64) -> Result<Duration, ExportError> {
    number(env, name, default).map(Duration::from_millis)
}

fn count(env: Lookup<'_>, name: &str, default: u64) -> Result<usize, ExportError> {
    match number(env, name, default)? {
        0 => Err(ExportError::new(format!("{name} must be at least 1"))),
        n => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
    }
}

/// `k=v,k2=v2` with percent-encoded values (the W3C baggage shape the
/// specification uses for headers and resource attributes); malformed
/// members are skipped.
fn list(text: Option<&str>) -> Vec<(String, String)> {
    let Some(text) = text else { return Vec::new() };
    text.split(',')
        .filter_map(|member| {
            let (k, v) = member.split_once('=')?;
            let k = k.trim();
            (!k.is_empty()).then(|| (k.to_owned(), percent_decode(v.trim())))
        })
        .collect()
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = text.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `service.name` (from `OTEL_SERVICE_NAME`, else `OTEL_RESOURCE_ATTRIBUTES`,
/// else `default_service`), the other resource attributes, and the SDK's
/// own.
fn resource(env: Lookup<'_>, default_service: &str) -> Vec<(String, String)> {
    let mut attrs = list(get(env, "OTEL_RESOURCE_ATTRIBUTES").as_deref());
    let service = get(env, "OTEL_SERVICE_NAME")
        .or_else(|| {
            attrs
                .iter()
                .find(|(k, _)| k == "service.name")
                .map(|(_, v)| v.clone())
        })
        .unwrap_or_else(|| default_service.to_owned());
    attrs.retain(|(k, _)| k != "service.name" && !k.starts_with("telemetry.sdk."));
    let mut out = vec![("service.name".to_owned(), service)];
    out.extend(attrs);
    out.extend([
        ("telemetry.sdk.name".to_owned(), "snodo".to_owned()),
        ("telemetry.sdk.language".to_owned(), "rust".to_owned()),
        (
            "telemetry.sdk.version".to_owned(),
            env!("CARGO_PKG_VERSION").to_owned(),
        ),
    ]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn read(vars: &[(&str, &str)]) -> Result<Option<Config>, ExportError> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::read(&|name| map.get(name).cloned(), None, "svc")
    }

    #[test]
    fn nothing_is_exported_unless_asked() {
        assert!(read(&[]).unwrap().is_none());
        assert!(
            read(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
                ("OTEL_SDK_DISABLED", "true")
            ])
            .unwrap()
            .is_none()
        );
        let only_metrics = read(&[("OTEL_METRICS_EXPORTER", "otlp")]).unwrap().unwrap();
        assert!(only_metrics.traces.is_none());
        assert_eq!(
            only_metrics.metrics.unwrap().url,
            "http://localhost:4318/v1/metrics"
        );
    }

    #[test]
    fn endpoints_headers_and_timeouts() {
        let c = read(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318/"),
            (
                "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
                "http://127.0.0.1:9/m",
            ),
            ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=a%20b,x=1"),
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "X=2"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
            ("OTEL_TRACES_EXPORTER", "otlp"),
        ])
        .unwrap()
        .unwrap();
        let t = c.traces.unwrap();
        assert_eq!(t.url, "http://127.0.0.1:4318/v1/traces");
        assert_eq!(
            t.headers,
            vec![("api-key".into(), "a b".into()), ("X".into(), "2".into())]
        );
        assert_eq!(t.timeout, Duration::from_millis(2500));
        assert_eq!(c.metrics.unwrap().url, "http://127.0.0.1:9/m");
    }

    #[test]
    fn unsupported_settings_are_refused_by_name() {
        let base = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318");
        for (var, value) in [
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"),
            ("OTEL_TRACES_EXPORTER", "zipkin"),
            ("OTEL_BSP_MAX_QUEUE_SIZE", "many"),
            ("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "0"),
            ("OTEL_TRACES_SAMPLER", "sometimes"),
        ] {
            let err = read(&[base, (var, value)]).unwrap_err().to_string();
            assert!(err.contains(var), "{var}: {err}");
        }
        let err = read(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "ftp://x")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("ftp://x"), "{err}");
    }

    #[test]
    fn http_json_is_refused_naming_the_variable() {
        let base = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318");
        let err = read(&[base, ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "OpenTelemetry export: OTEL_EXPORTER_OTLP_PROTOCOL=http/json is not supported (http/protobuf)"
        );
        let err = read(&[base, ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json")]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "OpenTelemetry export: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json is not supported (http/protobuf)"
        );
        let ok = read(&[base, ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")]).unwrap();
        assert!(ok.unwrap().traces.is_some());
    }

    #[test]
    fn traces_exporter_none_with_an_endpoint_exports_no_traces() {
        let c = read(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
            ("OTEL_TRACES_EXPORTER", "none"),
        ])
        .unwrap()
        .unwrap();
        assert!(c.traces.is_none());
        assert_eq!(c.metrics.unwrap().url, "http://127.0.0.1:4318/v1/metrics");
        // An endpoint given in code (`Exporter::to_endpoint`) too.
        let none = |name: &str| (name == "OTEL_TRACES_EXPORTER").then(|| "none".to_owned());
        let c = Config::read(&none, Some("http://127.0.0.1:4318"), "svc")
            .unwrap()
            .unwrap();
        assert!(c.traces.is_none());
        assert!(c.metrics.is_some());
    }

    #[test]
    fn an_empty_environment_gives_a_10_s_timeout_and_a_queue_of_2048_spans() {
        let c = Config::read(&|_| None, Some("http://127.0.0.1:4318"), "svc")
            .unwrap()
            .unwrap();
        let traces = c.traces.unwrap();
        assert_eq!(traces.url, "http://127.0.0.1:4318/v1/traces");
        assert_eq!(traces.timeout, Duration::from_secs(10));
        assert_eq!(c.metrics.unwrap().timeout, Duration::from_secs(10));
        assert_eq!(
            c.batching,
            Batching {
                delay: Duration::from_secs(5),
                max_queue: 2048,
                max_batch: 512,
            }
        );
        assert_eq!(c.metric_interval, Duration::from_secs(60));
    }

    #[test]
    fn the_resource_names_the_service_once() {
        let c = read(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "service.name=from-attrs,deployment.environment=ci,bad",
            ),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(c.resource[0], ("service.name".into(), "from-attrs".into()));
        assert_eq!(
            c.resource[1],
            ("deployment.environment".into(), "ci".into())
        );
        assert_eq!(
            c.resource
                .iter()
                .filter(|(k, _)| k == "service.name")
                .count(),
            1
        );
        let named = read(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
            ("OTEL_SERVICE_NAME", "mine"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(named.resource[0].1, "mine");
        assert_eq!(
            read(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")])
                .unwrap()
                .unwrap()
                .resource[0]
                .1,
            "svc"
        );
    }
}
