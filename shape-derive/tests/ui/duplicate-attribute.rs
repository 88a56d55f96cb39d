use toolshape::ToolResult;

#[derive(ToolResult)]
struct Ticket {
    #[shape(rename = "status", rename = "state")]
    status: String,
}

fn main() {}
