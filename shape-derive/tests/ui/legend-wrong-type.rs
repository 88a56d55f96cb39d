use toolshape::{Legend, ToolResult};

const STATUS: Legend<u8> = Legend::new(&[(1, "new"), (3, "open")]);

#[derive(ToolResult)]
struct Ticket {
    #[shape(legend = STATUS)]
    status: String,
}

fn main() {}
