use toolshape::ToolResult;

#[derive(ToolResult)]
struct Issue {
    #[shape(id)]
    number: u64,
    #[shape(show, empty_is_absent)]
    comments: u32,
}

fn main() {}
