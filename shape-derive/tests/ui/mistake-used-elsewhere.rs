use toolshape::{Shaper, ToolResult, aggregate::{Aggregate}};

// The derive reports its mistakes; the code that uses the struct reports nothing more.
#[derive(ToolResult)]
struct Ticket {
    #[shape(id, colour = "red")]
    id: String,
    #[shape(show)]
    title: String,
    #[shape(rank = desc)]
    updated_at: String,
    assignee: String,
}

fn count<T: ToolResult>(rows: &[T]) -> usize {
    rows.len() + T::PROJECTION.fields.len()
}

fn main() {
    let rows: Vec<Ticket> = Vec::new();
    let _ = Shaper::for_tool("search_tickets").shape_blocking(&rows);
    let _ = Shaper::for_tool("search_tickets").shape(&rows);
    let _ = Aggregate::new().top(Ticket::FIELDS.title, 3).top(Ticket::FIELDS.assignee, 3);
    let _ = count(&rows);
}
