use toolshape::ToolResult;

#[derive(ToolResult)]
struct User {
    #[shape(show)]
    name: String,
    password_hash: String,
}

fn main() {}
