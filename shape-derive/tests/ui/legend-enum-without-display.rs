use toolshape::{Legend, ToolResult};

#[derive(Clone, Copy, PartialEq)]
enum StateReason {
    Completed,
    NotPlanned,
}

const REASON: Legend<StateReason> = Legend::new(&[
    (StateReason::Completed, "fixed"),
    (StateReason::NotPlanned, "won't fix"),
]);

#[derive(ToolResult)]
struct Issue {
    #[shape(id)]
    number: u64,
    #[shape(legend = REASON)]
    state_reason: StateReason,
}

fn main() {}
