// A subschema must be an object or a boolean, in the output schema too.
#[snodo::tool(output_schema = {
    "type": "object",
    "properties": { "items": { "type": "array", "items": "string" } }
})]
async fn list() -> String {
    String::new()
}

fn main() {}
