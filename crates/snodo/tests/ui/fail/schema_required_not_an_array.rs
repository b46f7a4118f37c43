// `required` must list property names.
#[snodo::tool(input_schema = {
    "type": "object",
    "properties": { "name": { "type": "string" } },
    "required": 3
})]
async fn greet(args: snodo::Arguments) -> String {
    format!("{args:?}")
}

fn main() {}
