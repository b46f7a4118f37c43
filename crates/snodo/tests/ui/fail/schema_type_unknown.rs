// `type` names one of the seven simple types.
#[snodo::tool(input_schema = {
    "type": "object",
    "properties": { "when": { "type": "date" } }
})]
async fn schedule(args: snodo::Arguments) -> String {
    format!("{args:?}")
}

fn main() {}
