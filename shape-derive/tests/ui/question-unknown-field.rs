use toolshape::{Format, ToolResult};
use toolshape_eval::questions::{Questions, source_field};

#[derive(ToolResult)]
#[shape(name = "ticket", plural = "tickets")]
pub struct Ticket {
    #[shape(id)]
    pub id: String,
    #[shape(skip)]
    pub sla_due_at: Option<String>,
}

fn main() {
    let questions = Questions::for_tool("search_tickets")
        .ask("which tickets breach SLA this week?")
        .needs(Ticket::FIELDS.sla_due)
        .needs(source_field!(Ticket, sla_due));
    let _ = questions.check::<Ticket>(Format::Json);
}
