use toolshape::ToolResult;

#[derive(ToolResult)]
struct Ticket {
    #[shape(show)]
    id: String,
    #[shape(date)]
    created_at: u64,
}

fn main() {}
