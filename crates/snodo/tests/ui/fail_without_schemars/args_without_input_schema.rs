// Without the `schemars` feature, typed arguments need an explicit schema.
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
