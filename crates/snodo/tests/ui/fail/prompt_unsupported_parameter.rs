#[snodo::prompt]
async fn brief(args: snodo::Arguments) -> String {
    format!("{args:?}")
}

fn main() {}
