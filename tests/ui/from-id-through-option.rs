use toolshape::ToolResult;

struct Key {
    id: u64,
}

#[derive(ToolResult)]
struct Issue {
    #[shape(from = key?.id, id)]
    key: Option<Key>,
    #[shape(show)]
    title: String,
}

fn main() {}
