#[snodo::resource(uri = "docs://readme")]
fn readme() -> String {
    String::new()
}

fn main() {
    // The stub keeps code that names the resource free of further errors.
    let _ = snodo::Server::builder("s", "1").resource(readme);
}
