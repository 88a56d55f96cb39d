use toolshape::ToolResult;

#[derive(ToolResult)]
struct Issue {
    #[shape(show)]
    title: String,
    #[shape(rank = desc)]
    labels: Vec<String>,
}

fn main() {}
