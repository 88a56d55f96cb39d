use toolshape::ToolResult;

#[derive(ToolResult)]
#[shape(prose = "{id} due {sla_due_at}")]
struct Ticket {
    #[shape(show)]
    id: String,
    #[shape(skip)]
    sla_due_at: Option<String>,
}

fn main() {}
