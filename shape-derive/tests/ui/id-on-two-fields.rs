use toolshape::ToolResult;

#[derive(ToolResult)]
struct Ticket {
    #[shape(id)]
    id: String,
    #[shape(id)]
    external_id: u64,
    #[shape(show)]
    subject: String,
}

fn main() {}
