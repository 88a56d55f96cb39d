use toolshape::{Legend, ToolResult};

#[derive(Clone, Copy)]
enum Priority {
    Low,
    High,
}

impl std::fmt::Display for Priority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Priority::Low => "low",
            Priority::High => "high",
        })
    }
}

const PRIORITY: Legend<Priority> = Legend::new(&[(Priority::Low, "can wait"), (Priority::High, "today")]);

#[derive(ToolResult)]
struct Issue {
    #[shape(id)]
    number: u64,
    #[shape(legend = PRIORITY)]
    priority: Priority,
}

fn main() {}
