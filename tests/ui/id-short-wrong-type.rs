use toolshape::ToolResult;

#[derive(ToolResult)]
struct Ticket {
    #[shape(id(short))]
    id: u64,
}

fn main() {}
