use toolshape::ToolResult;

#[derive(ToolResult)]
struct Issue {
    #[shape(id)]
    number: u64,
    #[shape(show, absent = "untitled")]
    title: String,
}

fn main() {}
