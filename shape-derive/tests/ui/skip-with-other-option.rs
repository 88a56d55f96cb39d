use toolshape::ToolResult;

#[derive(ToolResult)]
struct Ticket {
    #[shape(show)]
    id: String,
    #[shape(skip, rename = "due")]
    sla_due_at: Option<String>,
}

fn main() {}
