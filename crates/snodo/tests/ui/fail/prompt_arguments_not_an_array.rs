#[snodo::prompt(arguments = { "name": "topic" })]
async fn brief() -> String {
    String::new()
}

fn main() {}
