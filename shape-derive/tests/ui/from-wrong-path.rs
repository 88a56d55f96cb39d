use toolshape::ToolResult;

struct User {
    login: String,
}

#[derive(ToolResult)]
struct Issue {
    #[shape(id)]
    number: u64,
    #[shape(from = user.logn, rename = "author")]
    user: User,
}

fn main() {}
