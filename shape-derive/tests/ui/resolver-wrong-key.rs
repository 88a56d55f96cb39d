use toolshape::ToolResult;

toolshape::resolve::resolver!(pub Users: u64, name = "users", noun = "user");

#[derive(ToolResult)]
struct Ticket {
    #[shape(resolve = Users)]
    assignee: Option<String>,
}

fn main() {}
