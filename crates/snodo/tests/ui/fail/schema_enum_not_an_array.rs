// `enum` must be an array, here deep inside `$defs`.
#[snodo::tool(input_schema = {
    "type": "object",
    "$defs": { "color": { "enum": {} } },
    "properties": { "c": { "$ref": "#/$defs/color" } }
})]
async fn paint(args: snodo::Arguments) -> String {
    format!("{args:?}")
}

fn main() {}
