#[snodo::resource(uri = "docs://count")]
async fn count() -> u32 {
    3
}

fn main() {}
