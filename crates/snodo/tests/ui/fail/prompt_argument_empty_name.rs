#[snodo::prompt(arguments = [{ "name": "" }])]
async fn brief() -> String {
    String::new()
}

fn main() {}
