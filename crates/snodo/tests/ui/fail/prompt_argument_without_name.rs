#[snodo::prompt(arguments = [{ "description": "What about", "required": true }])]
async fn brief() -> String {
    String::new()
}

fn main() {}
