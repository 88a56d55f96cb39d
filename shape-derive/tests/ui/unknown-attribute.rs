use toolshape::ToolResult;

#[derive(ToolResult)]
struct Ticket {
    #[shape(hide)]
    secret: String,
    #[shape(show)]
    id: String,
}

fn main() {}
