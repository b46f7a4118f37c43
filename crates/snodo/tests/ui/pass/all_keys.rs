//! Every attribute key, raw identifiers, trailing commas and `#[cfg]`.
use snodo::{Arguments, Tool};

/// Shadowed by `description`, kept on the struct.
#[snodo::tool(
    name = "every-key.v1",
    title = "Every key",
    description = "Uses every key",
    input_schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": { "id": { "type": "string", "pattern": "^[a-z]+$" } },
        "properties": {
            "region": { "type": "string", "x-mcp-header": "Region" },
            "opts": {
                "type": "object",
                "properties": { "dry": { "type": "boolean", "x-mcp-header": "Dry-Run" } },
            },
            "ids": { "type": "array", "items": { "$ref": "#/$defs/id" }, "maxItems": 10 },
            "ratio": { "type": "number", "minimum": -1, "maximum": 1.5e3, "default": null },
        },
        "required": ["region"],
    },
    output_schema = { "type": "object" },
    annotations = { "readOnlyHint": true, "destructiveHint": false },
    icons = [{ "src": "data:image/png;base64,AAAA", "sizes": ["any"] }],
    meta = { "com.example/tier": 2 },
    scopes = ["files:write", "demo:read"],
)]
pub async fn r#type(args: Arguments) -> String {
    format!("{:?}", args.get("region"))
}

#[snodo::tool]
#[cfg(any())]
async fn compiled_out(args: Arguments) -> String {
    missing_function(args)
}

fn main() {
    assert_eq!(Tool::name(&r#type), "every-key.v1");
    assert_eq!(Tool::required_scopes(&r#type), ["files:write", "demo:read"]);
}
