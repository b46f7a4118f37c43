#[snodo::prompt]
async fn brief() -> Option<String> {
    None
}

fn main() {}
