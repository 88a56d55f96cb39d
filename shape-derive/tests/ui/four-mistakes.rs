use toolshape::ToolResult;

// Four mistakes, all reported by one compile.
#[derive(ToolResult)]
#[shape(prose = "{id}: {titel}")]
struct Issue {
    #[shape(id(short), colour = "red")]
    id: String,
    #[shape(show)]
    title: String,
    #[shape(skip, rank = desc)]
    updated_at: String,
    password_hash: String,
}

fn main() {}
