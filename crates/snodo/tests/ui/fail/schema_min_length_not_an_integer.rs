// A validation keyword with a value the JSON Schema meta-schema refuses.
#[snodo::tool(input_schema = {
    "type": "object",
    "properties": { "name": { "type": "string", "minLength": "one" } }
})]
async fn greet(args: snodo::Arguments) -> String {
    format!("{args:?}")
}

fn main() {}
