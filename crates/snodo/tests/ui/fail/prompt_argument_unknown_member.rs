#[snodo::prompt(arguments = [{ "name": "tone", "default": "neutral" }])]
async fn brief() -> String {
    String::new()
}

fn main() {}
