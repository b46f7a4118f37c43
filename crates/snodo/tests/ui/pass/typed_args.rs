//! Typed arguments with an explicit schema, destructured or not, beside the
//! untyped arguments and the context.
use serde::Deserialize;
use snodo::{Args, Arguments, Context, Tool};

#[derive(Deserialize)]
struct Sum {
    a: i64,
    b: i64,
}

#[snodo::tool(
    description = "Add two integers",
    input_schema = {
        "type": "object",
        "properties": { "a": { "type": "integer" }, "b": { "type": "integer" } },
        "required": ["a", "b"]
    }
)]
async fn add(Args(Sum { a, b }): Args<Sum>) -> String {
    (a + b).to_string()
}

#[snodo::tool(input_schema = { "type": "object", "properties": { "a": { "type": "integer" }, "b": { "type": "integer" } } })]
async fn add_all(_cx: Context, sum: snodo::Args<Sum>, raw: Arguments) -> String {
    format!("{} of {}", sum.0.a + sum.0.b, raw.as_map().len())
}

fn assert_tool<T: Tool>(_: T) {}

fn main() {
    assert_tool(add);
    assert_tool(add_all);
}
