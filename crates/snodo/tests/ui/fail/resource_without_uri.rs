#[snodo::resource(name = "readme", mime_type = "text/markdown")]
async fn readme() -> String {
    String::new()
}

fn main() {}
