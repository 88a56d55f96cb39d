use toolshape::ToolResult;

#[derive(ToolResult)]
struct Issue {
    #[shape(id)]
    key: String,
    #[shape(date(epoch_nanos))]
    updated: i64,
}

fn main() {}
