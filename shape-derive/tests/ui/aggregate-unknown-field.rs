use toolshape::{ToolResult, aggregate::{Aggregate}};

#[derive(ToolResult)]
struct Issue {
    #[shape(show)]
    labels: Vec<String>,
    #[shape(date, rename = "opened")]
    created_at: String,
}

fn main() {
    // `created_at` is the Rust field; its output name is `opened`.
    let _ = Aggregate::new().recent(Issue::FIELDS.created_at, 30).top(Issue::FIELDS.lables, 3);
}
