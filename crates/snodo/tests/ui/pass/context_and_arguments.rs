//! `Context` and `Arguments`, in either order, or `Context` alone.
use snodo::{Arguments, CallResult, Context, Tool};

#[snodo::tool(description = "Context first")]
pub async fn context_first(cx: Context, args: Arguments) -> CallResult {
    Ok(format!("{} {:?}", cx.protocol_version(), args.get("x")).into())
}

#[snodo::tool(description = "Arguments first")]
pub(crate) async fn arguments_first(args: Arguments, _cx: snodo::Context) -> CallResult {
    Ok(format!("{:?}", args.get("x")).into())
}

#[snodo::tool(description = "Only the context")]
async fn context_only(cx: ::snodo::Context) -> String {
    cx.protocol_version().to_string()
}

/// Described by its doc comment.
#[snodo::tool]
async fn no_parameters() -> String {
    String::new()
}

fn assert_tool<T: Tool>(_: T) {}

fn main() {
    assert_tool(context_first);
    assert_tool(arguments_first);
    assert_tool(context_only);
    assert_tool(no_parameters);
}
