#[snodo::resource(uri_template = "docs://pages/{page}", complete = suggest)]
async fn page() -> String {
    String::new()
}

async fn suggest(value: &str) -> Vec<&'static str> {
    vec![if value.is_empty() { "intro" } else { "usage" }]
}

fn main() {}
