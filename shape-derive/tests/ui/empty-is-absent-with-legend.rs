use toolshape::{Legend, ToolResult};

const STATE: Legend<u8> = Legend::new(&[(1, "open"), (2, "closed")]);

#[derive(ToolResult)]
struct Issue {
    #[shape(id)]
    number: u64,
    #[shape(legend = STATE, empty_is_absent)]
    state: u8,
}

fn main() {}
