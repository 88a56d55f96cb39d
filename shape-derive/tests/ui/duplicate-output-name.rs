use toolshape::ToolResult;

#[derive(ToolResult)]
struct Ticket {
    #[shape(show)]
    status: String,
    #[shape(show, rename = "status")]
    status_code: u8,
}

fn main() {}
