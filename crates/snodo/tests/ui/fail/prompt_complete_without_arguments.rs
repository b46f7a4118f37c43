#[snodo::prompt(complete = suggest)]
async fn brief() -> String {
    String::new()
}

async fn suggest(_argument: &str, _value: &str) -> Vec<String> {
    Vec::new()
}

fn main() {}
