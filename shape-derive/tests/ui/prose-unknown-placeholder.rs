use toolshape::ToolResult;

#[derive(ToolResult)]
#[shape(prose = "{id}: {subjet}")]
struct Ticket {
    #[shape(show)]
    id: String,
    #[shape(show)]
    subject: String,
}

fn main() {}
