// Every problem is reported at once: the schema and the signature.
#[snodo::tool(input_schema = { "type": "array" }, icons = { "src": "x.png" })]
fn handler<T>(&self, count: u32) -> String {
    String::new()
}

fn main() {}
