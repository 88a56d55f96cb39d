use toolshape::ToolResult;

#[derive(ToolResult)]
enum Status {
    Open,
    Closed,
}

fn main() {}
