// Six type mistakes through `from` paths: each reported once, at its attribute.
use toolshape::ToolResult;
use toolshape::resolve::Resolver;
pub struct Users;
impl Resolver for Users { type Key = String; const NAME: &'static str = "users"; const NOUN: &'static str = "user"; }
const STATUS: toolshape::Legend<u8> = toolshape::Legend::new(&[(1, "open")]);
struct Inner { n: u32, f: f64, s: String, m: std::collections::HashMap<u8, u8> }
#[derive(ToolResult)]
struct Issue {
    #[shape(from = a?.n, untrusted)]
    #[shape(from = a?.f, id, rename = "x")]
    #[shape(from = a?.n, resolve = Users, rename = "y")]
    #[shape(from = a?.s, date(epoch_seconds), rename = "z")]
    #[shape(from = a?.s, legend = STATUS, rename = "w")]
    #[shape(from = a?.m, rank = desc, rename = "v")]
    a: Option<Inner>,
}
fn main() {}
