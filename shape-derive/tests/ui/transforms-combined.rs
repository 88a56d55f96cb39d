use toolshape::{Legend, ToolResult};

const STATUS: Legend<u8> = Legend::new(&[(1, "new")]);

#[derive(ToolResult)]
struct Ticket {
    #[shape(show)]
    id: String,
    #[shape(legend = STATUS, date)]
    status: u8,
}

fn main() {}
