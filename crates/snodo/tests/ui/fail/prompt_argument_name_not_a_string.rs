#[snodo::prompt(arguments = [{ "name": 1 }])]
async fn brief() -> String {
    String::new()
}

fn main() {}
