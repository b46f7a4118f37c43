#[snodo::tool(description = "Blocking")]
fn blocking(_args: snodo::Arguments) -> String {
    String::new()
}

fn main() {
    // The stub keeps code that names the tool free of further errors.
    let _ = blocking;
}
