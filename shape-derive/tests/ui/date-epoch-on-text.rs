use toolshape::ToolResult;

#[derive(ToolResult)]
struct Issue {
    #[shape(id)]
    key: String,
    #[shape(date(epoch_millis))]
    created: String,
}

fn main() {}
