use toolshape::ToolResult;

#[derive(ToolResult)]
struct Pod {
    #[shape(rank(desc, max))]
    restarts: i32,
    #[shape(show)]
    name: String,
}

fn main() {}
