#[snodo::resource(uri = "docs://readme", mime = "text/markdown")]
async fn readme() -> String {
    String::new()
}

fn main() {}
