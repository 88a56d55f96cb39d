//! A server that knows nothing of shaping: each tool answers as written (feature `rmcp`).
//! What the harness is put in front of by the tests of answers nobody described and by
//! `examples/savings.rs`.

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a canned tool answers.
#[derive(Clone)]
pub enum Answer {
    /// `structuredContent` (and its JSON text as the text block, as servers do).
    Structured(Value),
    /// A text block only.
    Text(String),
    /// A whole result as written (an error, an embedded resource, several blocks).
    Result(Box<CallToolResult>),
}

/// A server whose tools answer as written, knowing nothing of shaping.
#[derive(Clone)]
pub struct Canned {
    answers: Arc<BTreeMap<String, Answer>>,
    /// The arguments every tool lists besides `q`.
    arguments: Arc<Vec<String>>,
}

impl Canned {
    /// A server whose tool `name` answers `answer`, for each pair; another tool's call is a
    /// protocol error (invalid params).
    pub fn new(answers: impl IntoIterator<Item = (&'static str, Answer)>) -> Canned {
        Canned {
            answers: Arc::new(
                answers
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect(),
            ),
            arguments: Arc::default(),
        }
    }

    /// This server, its tools listing `names` as arguments besides `q`.
    pub fn arguments(mut self, names: &[&str]) -> Canned {
        self.arguments = Arc::new(names.iter().map(|n| (*n).to_owned()).collect());
        self
    }
}

impl ServerHandler for Canned {
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
        let result = match self.answers.get(request.name.as_ref()) {
            Some(Answer::Structured(value)) => {
                let mut r = CallToolResult::success(vec![ContentBlock::text(value.to_string())]);
                r.structured_content = Some(value.clone());
                r
            }
            Some(Answer::Text(text)) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Some(Answer::Result(result)) => (**result).clone(),
            None => {
                return Err(ErrorData::invalid_params(
                    format!("no tool {}", request.name),
                    None,
                ));
            }
        };
        Ok(result.into())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut properties = serde_json::Map::new();
        for name in std::iter::once("q").chain(self.arguments.iter().map(String::as_str)) {
            properties.insert(name.to_owned(), json!({"type": "string"}));
        }
        let schema = Arc::new(
            json!({"type": "object", "properties": properties})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
        Ok(ListToolsResult::with_all_items(
            self.answers
                .keys()
                .map(|name| Tool::new(name.clone(), format!("the {name} tool"), schema.clone()))
                .collect(),
        ))
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}
