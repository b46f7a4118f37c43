#[snodo::resource(
    mime_type = "text/markdown",
    uri_template = "docs://guide{#section}",
)]
async fn guide() -> String {
    String::new()
}

fn main() {}
