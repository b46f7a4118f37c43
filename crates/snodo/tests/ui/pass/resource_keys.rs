//! `#[snodo::resource]`: every key, fixed URIs and templates, raw identifiers,
//! `#[cfg]`, and the parameters in any order.
use snodo::resource::{ReadRequest, Resource};
use snodo::Context;

/// Shadowed by `description`, kept on the struct.
#[snodo::resource(
    uri = "file:///etc/hosts",
    name = "hosts",
    title = "Hosts",
    description = "The hosts file",
    mime_type = "text/plain",
    annotations = { "audience": ["user"], "priority": 1, "lastModified": "2025-01-12T15:00:58Z" },
    size = 1024,
    icons = [{ "src": "data:image/png;base64,AAAA", "sizes": ["any"] }],
    meta = { "com.example/tier": 2 },
)]
pub async fn r#type(req: ReadRequest, cx: Context) -> String {
    format!("{} {}", req.uri, cx.protocol_version())
}

#[snodo::resource(uri_template = "https://{host}/repos{/owner}{?page,per_page}")]
pub(crate) async fn repos(_cx: snodo::Context, req: snodo::resource::ReadRequest) -> String {
    format!("{:?}", req.var("owner"))
}

/// Described by its doc comment.
#[snodo::resource(uri_template = "file:///{+path}", complete = suggest::paths)]
async fn files(_: ::snodo::resource::ReadRequest) -> String {
    String::new()
}

mod suggest {
    pub async fn paths(_variable: &str, value: &str) -> Vec<String> {
        vec![format!("{value}/README.md")]
    }
}

#[snodo::resource(uri = "docs://nothing")]
async fn no_parameters() -> &'static str {
    ""
}

#[snodo::resource(uri = "docs://compiled-out")]
#[cfg(any())]
async fn compiled_out(req: ReadRequest) -> String {
    missing_function(req)
}

fn assert_resource<T: Resource>(_: T) {}

fn main() {
    assert_eq!(Resource::name(&r#type), "hosts");
    assert_eq!(Resource::size(&r#type), Some(1024));
    assert_eq!(Resource::uri_template(&repos), Some("https://{host}/repos{/owner}{?page,per_page}"));
    assert!(Resource::completes(&files));
    assert_eq!(Resource::description(&files), Some("Described by its doc comment."));
    assert_resource(no_parameters);
}
