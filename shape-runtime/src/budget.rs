//! Token budgets: how many tokens of a named tokenizer one tool call may return.
//!
//! ```
//! use toolshape::Budget;
//!
//! assert_eq!(Budget::tokens(2_000).max_tokens(), 2_000);
//! // A third of a 200k window for tool results, over 30 expected calls:
//! assert_eq!(Budget::from_run(200_000, 1.0 / 3.0, 30).unwrap().max_tokens(), 2_222);
//! ```

use serde::{Deserialize, Serialize};

/// A per-call ceiling in tokens, envelope included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "BudgetSpec", into = "BudgetSpec")]
pub struct Budget {
    max_tokens: usize,
}

/// Why a budget could not be derived.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum BudgetError {
    /// `share` outside (0, 1].
    #[error("share must be greater than 0 and at most 1 (a fraction of the window), got {0}")]
    Share(f64),
    /// No calls expected.
    #[error("expected_calls must be at least 1")]
    Calls,
    /// The derived budget is too small to hold any envelope.
    #[error(
        "the budget works out to {0} tokens, too small for an envelope; raise the window or share, or expect fewer calls"
    )]
    TooSmall(usize),
}

/// The smallest budget that can hold an envelope with a summary.
pub const MIN_BUDGET: usize = 24;

impl Budget {
    /// A fixed ceiling.
    pub const fn tokens(max_tokens: usize) -> Budget {
        Budget { max_tokens }
    }

    /// A ceiling derived from the whole run: `window × share / expected_calls`.
    pub fn from_run(
        window: usize,
        share: f64,
        expected_calls: usize,
    ) -> Result<Budget, BudgetError> {
        if !(share > 0.0 && share <= 1.0) {
            return Err(BudgetError::Share(share));
        }
        if expected_calls == 0 {
            return Err(BudgetError::Calls);
        }
        let tokens = ((window as f64) * share / (expected_calls as f64)).floor() as usize;
        if tokens < MIN_BUDGET {
            return Err(BudgetError::TooSmall(tokens));
        }
        Ok(Budget { max_tokens: tokens })
    }

    /// The ceiling.
    pub const fn max_tokens(&self) -> usize {
        self.max_tokens
    }
}

impl Default for Budget {
    fn default() -> Self {
        Budget::tokens(2_000)
    }
}

/// How a budget is written in configuration: `budget = 2000` or
/// `budget = { window = 200000, share = 0.33, expected_calls = 30 }`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum BudgetSpec {
    /// A fixed number of tokens.
    Tokens(usize),
    /// Derived from the run.
    Run {
        /// The model's context window in tokens.
        window: usize,
        /// The share of the window tool results may take.
        share: f64,
        /// Tool calls expected in a run.
        expected_calls: usize,
    },
}

impl TryFrom<BudgetSpec> for Budget {
    type Error = BudgetError;
    fn try_from(spec: BudgetSpec) -> Result<Budget, BudgetError> {
        match spec {
            BudgetSpec::Tokens(n) if n < MIN_BUDGET => Err(BudgetError::TooSmall(n)),
            BudgetSpec::Tokens(n) => Ok(Budget::tokens(n)),
            BudgetSpec::Run {
                window,
                share,
                expected_calls,
            } => Budget::from_run(window, share, expected_calls),
        }
    }
}

impl From<Budget> for BudgetSpec {
    fn from(b: Budget) -> BudgetSpec {
        BudgetSpec::Tokens(b.max_tokens)
    }
}
