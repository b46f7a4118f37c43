#[snodo::prompt(args = [{ "name": "topic" }])]
async fn brief() -> String {
    String::new()
}

fn main() {}
