#[snodo::prompt(arguments = [{ "name": "topic", "description": ["What", "about"] }])]
async fn brief() -> String {
    String::new()
}

fn main() {}
