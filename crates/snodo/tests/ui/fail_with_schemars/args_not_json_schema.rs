// With the `schemars` feature, typed arguments without a schema must derive one.
#[derive(serde::Deserialize)]
struct Sum {
    a: i64,
    b: i64,
}

#[snodo::tool]
async fn add(snodo::Args(Sum { a, b }): snodo::Args<Sum>) -> String {
    (a + b).to_string()
}

fn main() {}
