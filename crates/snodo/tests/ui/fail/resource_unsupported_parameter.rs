#[snodo::resource(uri_template = "docs://pages/{page}")]
async fn page(req: &snodo::resource::ReadRequest, page: String) -> String {
    format!("{page} {req:?}")
}

fn main() {}
