use toolshape::Shaper;

fn main() {
    // Rows of a type that is no `ToolResult`: the error names what a call can shape.
    let rows = vec!["a".to_owned(), "b".to_owned()];
    let _ = Shaper::for_tool("list").shape_blocking(&rows);
}
