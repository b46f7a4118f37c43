#[snodo::prompt(arguments = [{ "name": "topic", "required": "yes" }])]
async fn brief() -> String {
    String::new()
}

fn main() {}
