use toolshape::ToolResult;

/// A Jira issue id wrapped in a newtype that implements neither `IdText` nor `IdField`.
pub struct IssueId(u64);

#[derive(ToolResult)]
struct Issue {
    #[shape(id)]
    id: IssueId,
    #[shape(show)]
    summary: String,
}

fn main() {}
