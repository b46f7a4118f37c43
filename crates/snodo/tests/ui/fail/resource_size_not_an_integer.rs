#[snodo::resource(uri = "docs://readme", size = -1)]
async fn readme() -> String {
    String::new()
}

fn main() {}
