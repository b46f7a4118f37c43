#[snodo::tool(description = "Deletes", scopes = ["files:read", "files write"])]
async fn delete() -> &'static str {
    "deleted"
}

fn main() {}
