use toolshape::{Shaper, ToolResult, resolve::{Resolve, ResolveError}};
use std::collections::HashMap;

toolshape::resolve::resolver!(pub Users: String, name = "users", noun = "user");
toolshape::resolve::resolver!(pub Orgs: String, name = "orgs", noun = "organization");

#[derive(ToolResult)]
struct Ticket {
    #[shape(resolve = Users)]
    assignee: String,
    #[shape(resolve = Orgs)]
    org: String,
}

struct Db;

impl Resolve<Users> for Db {
    fn resolve(&self, _keys: &[String]) -> impl Future<Output = Result<HashMap<String, String>, ResolveError>> + Send {
        std::future::ready(Ok(HashMap::new()))
    }
}

fn main() {
    let rows: Vec<Ticket> = Vec::new();
    let _ = Shaper::for_tool("search_tickets").shape_blocking((&rows, &Db));
}
