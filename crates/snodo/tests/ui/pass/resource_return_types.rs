//! Anything implementing `IntoReadResult` may be returned.
use snodo::resource::{ReadRequest, ReadResult, Resource, ResourceContents};
use snodo::HandlerError;

#[snodo::resource(uri = "a:text")]
async fn text() -> String {
    "text".to_string()
}

#[snodo::resource(uri = "a:static")]
async fn static_text() -> &'static str {
    "text"
}

#[snodo::resource(uri = "a:contents")]
async fn contents(req: ReadRequest) -> ResourceContents {
    ResourceContents::blob(req.uri, "AAAA")
}

#[snodo::resource(uri = "a:many")]
async fn many(req: ReadRequest) -> Vec<ResourceContents> {
    vec![ResourceContents::text(&req.uri, "a"), ResourceContents::text(&req.uri, "b")]
}

#[snodo::resource(uri = "a:result")]
async fn result(req: ReadRequest) -> ReadResult {
    ResourceContents::text(req.uri, "x").into()
}

#[snodo::resource(uri = "a:io")]
async fn io() -> std::io::Result<String> {
    std::fs::read_to_string("/nonexistent")
}

#[snodo::resource(uri = "a:boxed")]
async fn boxed(req: ReadRequest) -> Result<ReadResult, HandlerError> {
    Ok(ResourceContents::text(req.uri, "x").into())
}

#[snodo::resource(uri = "a:typed")]
async fn typed() -> Result<Vec<ResourceContents>, snodo::Error> {
    Err(snodo::Error::invalid_params("no"))
}

fn assert_resource<T: Resource>(_: T) {}

fn main() {
    assert_resource(text);
    assert_resource(static_text);
    assert_resource(contents);
    assert_resource(many);
    assert_resource(result);
    assert_resource(io);
    assert_resource(boxed);
    assert_resource(typed);
}
