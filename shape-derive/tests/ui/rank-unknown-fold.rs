use toolshape::ToolResult;

struct Container {
    restarts: i32,
}

#[derive(ToolResult)]
struct Pod {
    #[shape(from = containers[].restarts, rank(desc, median))]
    containers: Vec<Container>,
    #[shape(show)]
    name: String,
}

fn main() {}
