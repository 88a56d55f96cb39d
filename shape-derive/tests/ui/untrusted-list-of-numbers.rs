use toolshape::ToolResult;

#[derive(ToolResult)]
struct Issue {
    #[shape(id)]
    number: u64,
    #[shape(untrusted(max_tokens = 20))]
    label_ids: Vec<u64>,
}

fn main() {}
