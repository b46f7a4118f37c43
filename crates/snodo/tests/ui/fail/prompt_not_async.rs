#[snodo::prompt(description = "Blocking")]
fn brief(_args: snodo::prompt::PromptArguments) -> String {
    String::new()
}

fn main() {
    // The stub keeps code that names the prompt free of further errors.
    let _ = snodo::Server::builder("s", "1").prompt(brief);
}
