#[snodo::resource(uri = "docs://readme", complete = suggest)]
async fn readme() -> String {
    String::new()
}

async fn suggest(_variable: &str, _value: &str) -> Vec<String> {
    Vec::new()
}

fn main() {}
