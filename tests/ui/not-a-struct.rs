use shape_runtime::ToolResult;

#[derive(ToolResult)]
enum Status {
    Open,
    Closed,
}

fn main() {}
