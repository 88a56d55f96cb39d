use toolshape::ToolResult;

struct Milestone {
    number: u32,
}

#[derive(ToolResult)]
struct Issue {
    #[shape(id)]
    number: u64,
    #[shape(from = milestone?.number, date)]
    milestone: Option<Milestone>,
}

fn main() {}
