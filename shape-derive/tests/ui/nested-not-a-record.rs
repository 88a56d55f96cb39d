use toolshape::ToolResult;

#[derive(serde::Serialize)]
struct Milestone {
    title: String,
}

#[derive(ToolResult)]
struct Issue {
    #[shape(id)]
    number: u64,
    #[shape(nested)]
    milestone: Option<Milestone>,
}

fn main() {}
