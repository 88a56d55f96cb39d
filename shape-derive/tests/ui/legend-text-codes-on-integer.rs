use toolshape::{Legend, ToolResult};

const CATEGORY: Legend<&str> = Legend::new(&[("new", "To Do"), ("done", "Done")]);

#[derive(ToolResult)]
struct Issue {
    #[shape(id)]
    key: String,
    #[shape(legend = CATEGORY)]
    status_category: u8,
}

fn main() {}
