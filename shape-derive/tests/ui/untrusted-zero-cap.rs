use toolshape::ToolResult;

#[derive(ToolResult)]
struct Ticket {
    #[shape(show)]
    id: String,
    #[shape(untrusted(max_tokens = 0))]
    body: String,
}

fn main() {}
