use toolshape::ToolResult;

#[derive(ToolResult)]
struct Ticket {
    #[shape(id(short))]
    id: f64,
}

fn main() {}
