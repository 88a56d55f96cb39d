use toolshape::ToolResult;

#[derive(ToolResult)]
#[shape(absent = "|")]
struct Issue {
    #[shape(id)]
    number: u64,
    #[shape(show, absent = " ")]
    assignee: Option<String>,
    #[shape(skip, absent = "none")]
    node_id: Option<String>,
}

fn main() {}
