use toolshape::ToolResult;

#[derive(ToolResult)]
struct Comment {
    #[shape(show)]
    likes: u32,
}

// The rule configuration states too (`tests/config/ranks.toml`): one rulebook.
#[derive(ToolResult)]
struct Issue {
    #[shape(id)]
    number: u64,
    #[shape(nested, rank = desc)]
    comments: Vec<Comment>,
}

fn main() {}
