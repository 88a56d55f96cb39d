use toolshape::ToolResult;

struct Key {
    id: u64,
}

#[derive(ToolResult)]
struct Issue {
    #[shape(from = keys[].id, id)]
    keys: Vec<Key>,
    #[shape(show)]
    title: String,
}

fn main() {}
