use toolshape::ToolResult;

struct User {
    login: String,
}

#[derive(ToolResult)]
struct Issue {
    #[shape(id)]
    number: u64,
    #[shape(from = author.login)]
    user: User,
}

fn main() {}
