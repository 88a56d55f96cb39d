use toolshape::ToolResult;

struct Label {
    name: String,
}

#[derive(ToolResult)]
struct Issue {
    #[shape(from = labels[].name, rank(desc, sum))]
    labels: Vec<Label>,
    #[shape(show)]
    title: String,
}

fn main() {}
