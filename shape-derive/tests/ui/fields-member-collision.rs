use toolshape::ToolResult;

// Different output names, one Rust member of `Entry::FIELDS`.
#[derive(ToolResult)]
struct Entry {
    #[shape(show, rename = "last-seen")]
    seen: Option<u32>,
    #[shape(show)]
    last_seen: Option<u32>,
}

fn main() {
    let _ = Entry::FIELDS.last_seen;
}
