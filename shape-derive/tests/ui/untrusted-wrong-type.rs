use toolshape::ToolResult;

#[derive(ToolResult)]
struct Ticket {
    #[shape(show)]
    id: String,
    #[shape(untrusted(max_tokens = 40))]
    attachments: Vec<u8>,
}

fn main() {}
