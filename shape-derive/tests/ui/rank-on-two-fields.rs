use toolshape::ToolResult;

#[derive(ToolResult)]
struct Ticket {
    #[shape(rank = desc)]
    updated_at: String,
    #[shape(rank = asc)]
    priority: u8,
}

fn main() {}
