#[snodo::prompt(arguments = [
    { "name": "topic", "required": true },
    { "name": "tone" },
    { "name": "topic", "description": "Again" },
])]
async fn brief() -> String {
    String::new()
}

fn main() {}
