#[snodo::prompt(arguments = [{ "name": "topic" }, "tone"])]
async fn brief() -> String {
    String::new()
}

fn main() {}
