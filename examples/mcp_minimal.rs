//! The README's MCP server, whole: one tool over an in-memory list of tickets, paged with
//! signed cursors, the whole result stored behind a handle when it is many pages and reopened
//! by `open_result`, answered in the form each client's model reads. The README shows this
//! file as it is (a test checks they are the same); CI builds it and drives it with a client.
//!
//! Run with `cargo run --example mcp_minimal --features mcp` (it speaks MCP on stdio).

use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, ServiceExt, tool, tool_router};
use std::sync::Arc;
use toolshape::cursor::CursorKeys;
use toolshape::mcp::{self, Pages};
use toolshape::{Budget, Format, Legend, Shaped, Shaper, ToolResult};

pub const STATUS: Legend<u8> = Legend::new(&[(1, "open"), (2, "pending"), (3, "closed")]);

/// A ticket as the service has it; the derive decides what a model sees of it.
#[derive(Clone, ToolResult)]
#[shape(
    name = "ticket",
    plural = "tickets",
    prose = "{id} {subject}: {status}, updated {updated}"
)]
pub struct Ticket {
    #[shape(id)]
    pub id: String,
    /// Written by customers: sanitised, capped and marked.
    #[shape(untrusted(max_tokens = 40))]
    pub subject: String,
    #[shape(legend = STATUS)]
    pub status: u8,
    #[shape(date, rank = desc)]
    pub updated: String,
    #[shape(skip)]
    pub internal_notes: String,
}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
pub struct SearchArgs {
    /// Only tickets whose subject contains this text (any case).
    pub query: Option<String>,
    /// The cursor from the last answer's `next`, for the next page.
    pub cursor: Option<String>,
}

fn budget() -> Budget {
    Budget::tokens(600)
}

#[derive(Clone)]
pub struct Desk {
    tickets: Arc<Vec<Ticket>>,
    // Glue: cursors, stored results and `open_result`, in one value.
    pages: Arc<Pages>,
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Desk {
    pub fn new(tickets: Vec<Ticket>, keys: CursorKeys) -> Self {
        Desk {
            tickets: Arc::new(tickets),
            pages: Arc::new(Pages::new(keys)),
            tool_router: Self::tool_router()
                .with_route(Pages::open_result_route(|d: &Desk| &d.pages)),
        }
    }

    #[tool(
        description = "Search support tickets, most recently updated first; page with the cursor from `next`.",
        output_schema = mcp::output_schema::<Ticket>(),
        meta = mcp::size_hint_meta(budget()),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn search_tickets(
        &self,
        context: RequestContext<RoleServer>,
        Parameters(args): Parameters<SearchArgs>,
    ) -> Shaped {
        let needle = args.query.clone().unwrap_or_default().to_lowercase();
        let rows: Vec<Ticket> = self
            .tickets
            .iter()
            .filter(|t| t.subject.to_lowercase().contains(&needle))
            .cloned()
            .collect();
        // The client's profile and cuts, the cursor in `args` (bound to the other arguments),
        // and the whole result stored behind a handle when it is many pages.
        let shaper = Shaper::for_tool("search_tickets")
            .budget(budget())
            .format(Format::Prose);
        self.pages.page(&shaper, &context, &args, &rows).await
    }
}

impl ServerHandler for Desk {
    // Glue: rmcp's `#[tool_handler]`, listing the tools as each client should see them.
    mcp::tool_handler!(tool_router);

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let subjects = [
        "Card declined at checkout",
        "Cannot reset password",
        "Export times out",
    ];
    let tickets = (1..=120)
        .map(|i| Ticket {
            id: format!("tkt_{i:04}"),
            subject: subjects[i % subjects.len()].to_owned(),
            status: (i % 3 + 1) as u8,
            updated: format!("2026-11-{:02}T09:30:00Z", i % 28 + 1),
            internal_notes: String::new(),
        })
        .collect();
    // In production: a key of 32 random bytes from configuration, the same on every replica.
    let keys = CursorKeys::random()?;
    let service = Desk::new(tickets, keys)
        .serve(mcp::guarded(rmcp::transport::stdio()))
        .await?;
    service.waiting().await?;
    Ok(())
}
