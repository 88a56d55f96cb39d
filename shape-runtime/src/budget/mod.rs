//! Token budgets: how many tokens of a named tokenizer one tool call may return, and, for
//! clients that cut a tool's output by size or lines, how many bytes and lines.
//!
//! ```
//! use toolshape::Budget;
//!
//! assert_eq!(Budget::tokens(2_000).max_tokens(), 2_000);
//! // A third of a 200k window for tool results, over 30 expected calls:
//! assert_eq!(Budget::from_run(200_000, 1.0 / 3.0, 30).unwrap().max_tokens(), 2_222);
//! // Codex keeps 10 KiB or 256 lines of a tool's output: stay under both.
//! let codex = Budget::tokens(8_000).bytes(10 * 1024).lines(256);
//! assert_eq!((codex.max_bytes(), codex.max_lines()), (Some(10_240), Some(256)));
//! ```

#[cfg(feature = "bpe-openai")]
#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod bpe_openai;
pub(crate) mod channel;
#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod clients;
pub mod tokens;

use serde::{Deserialize, Serialize};

/// A per-call ceiling in tokens, envelope included; optionally also in bytes (UTF-8) and
/// lines, each channel held to all three, so a client that cuts by size or lines never
/// truncates a shaped answer behind its back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "BudgetSpec", into = "BudgetSpec")]
pub struct Budget {
    max_tokens: usize,
    max_bytes: Option<usize>,
    max_lines: Option<usize>,
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
    /// A byte or line ceiling too small to hold any envelope.
    #[error("a budget of {value} {unit} is too small for an envelope; allow at least {min}")]
    TooFew {
        /// `bytes` or `lines`.
        unit: &'static str,
        /// The ceiling given.
        value: usize,
        /// The smallest accepted.
        min: usize,
    },
}

/// Where a client cuts or refuses a tool's output: in tokens (its own count), bytes or
/// lines. `None` where no limit is known.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientLimits {
    /// Tokens.
    pub tokens: Option<usize>,
    /// Bytes (UTF-8).
    pub bytes: Option<usize>,
    /// Lines.
    pub lines: Option<usize>,
}

impl ClientLimits {
    /// No known limit.
    pub const NONE: ClientLimits = ClientLimits {
        tokens: None,
        bytes: None,
        lines: None,
    };
}

/// The smallest budget that can hold an envelope with a summary.
pub(crate) const MIN_BUDGET: usize = 24;

/// The smallest byte ceiling configuration accepts (an envelope with a summary).
pub(crate) const MIN_BYTES: usize = 256;

/// The smallest line ceiling configuration accepts (a summary, a record, what was left out).
pub(crate) const MIN_LINES: usize = 4;

impl Budget {
    /// A fixed ceiling.
    pub const fn tokens(max_tokens: usize) -> Budget {
        Budget {
            max_tokens,
            max_bytes: None,
            max_lines: None,
        }
    }

    /// Also at most `max_bytes` bytes of UTF-8 per channel, envelope included (bytes, not
    /// characters, so a limit in characters is kept too).
    pub const fn bytes(self, max_bytes: usize) -> Budget {
        Budget {
            max_bytes: Some(max_bytes),
            ..self
        }
    }

    /// Also at most `max_lines` lines per channel, envelope included.
    pub const fn lines(self, max_lines: usize) -> Budget {
        Budget {
            max_lines: Some(max_lines),
            ..self
        }
    }

    /// This budget, lowered to what `limits` allows: the smaller of each ceiling.
    ///
    /// ```
    /// use toolshape::Budget;
    /// use toolshape::clients::reader;
    ///
    /// let limits_for = |name| reader(Some(name), &Default::default()).limits;
    ///
    /// let budget = Budget::tokens(40_000).within(limits_for("claude-code"));
    /// assert_eq!(budget.max_tokens(), 25_000);
    /// let budget = Budget::tokens(8_000).within(limits_for("codex-mcp-client"));
    /// assert_eq!((budget.max_tokens(), budget.max_bytes(), budget.max_lines()), (8_000, Some(10_240), Some(256)));
    /// ```
    pub fn within(self, limits: ClientLimits) -> Budget {
        let min = |a: Option<usize>, b: Option<usize>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Budget {
            max_tokens: limits
                .tokens
                .map_or(self.max_tokens, |t| t.min(self.max_tokens)),
            max_bytes: min(self.max_bytes, limits.bytes),
            max_lines: min(self.max_lines, limits.lines),
        }
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
        Ok(Budget::tokens(tokens))
    }

    /// The ceiling in tokens.
    pub const fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// The ceiling in bytes, if set.
    pub const fn max_bytes(&self) -> Option<usize> {
        self.max_bytes
    }

    /// The ceiling in lines, if set.
    pub const fn max_lines(&self) -> Option<usize> {
        self.max_lines
    }
}

impl Default for Budget {
    fn default() -> Self {
        Budget::tokens(2_000)
    }
}

/// How a budget is written in configuration: `budget = 2000`,
/// `budget = { tokens = 8000, bytes = 10240, lines = 256 }` or
/// `budget = { window = 200000, share = 0.33, expected_calls = 30 }`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum BudgetSpec {
    /// A fixed number of tokens.
    Tokens(usize),
    /// Tokens, and bytes or lines too.
    Limits {
        /// The ceiling in tokens.
        tokens: usize,
        /// The ceiling in bytes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bytes: Option<usize>,
        /// The ceiling in lines.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lines: Option<usize>,
    },
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
            BudgetSpec::Limits { tokens, .. } if tokens < MIN_BUDGET => {
                Err(BudgetError::TooSmall(tokens))
            }
            BudgetSpec::Limits { bytes: Some(b), .. } if b < MIN_BYTES => {
                Err(BudgetError::TooFew {
                    unit: "bytes",
                    value: b,
                    min: MIN_BYTES,
                })
            }
            BudgetSpec::Limits { lines: Some(l), .. } if l < MIN_LINES => {
                Err(BudgetError::TooFew {
                    unit: "lines",
                    value: l,
                    min: MIN_LINES,
                })
            }
            BudgetSpec::Limits {
                tokens,
                bytes,
                lines,
            } => Ok(Budget {
                max_tokens: tokens,
                max_bytes: bytes,
                max_lines: lines,
            }),
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
        match (b.max_bytes, b.max_lines) {
            (None, None) => BudgetSpec::Tokens(b.max_tokens),
            (bytes, lines) => BudgetSpec::Limits {
                tokens: b.max_tokens,
                bytes,
                lines,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(json: &str) -> Result<Budget, String> {
        serde_json::from_str::<Budget>(json).map_err(|e| e.to_string())
    }

    /// Every bound configuration checks, at the edge, one before and one past.
    #[test]
    fn configured_budgets_are_checked_at_each_bound() {
        assert_eq!(spec("23"), Err(BudgetError::TooSmall(23).to_string()));
        assert_eq!(spec("24"), Ok(Budget::tokens(24)));
        assert_eq!(spec("25"), Ok(Budget::tokens(25)));
        assert_eq!(
            spec(r#"{"tokens": 23}"#),
            Err(BudgetError::TooSmall(23).to_string())
        );
        assert_eq!(spec(r#"{"tokens": 24}"#), Ok(Budget::tokens(24)));
        let bytes = |b: usize| spec(&format!(r#"{{"tokens": 100, "bytes": {b}}}"#));
        let too_few = |unit, value, min| Err(BudgetError::TooFew { unit, value, min }.to_string());
        assert_eq!(bytes(255), too_few("bytes", 255, 256));
        assert_eq!(bytes(256), Ok(Budget::tokens(100).bytes(256)));
        assert_eq!(bytes(257), Ok(Budget::tokens(100).bytes(257)));
        let lines = |l: usize| spec(&format!(r#"{{"tokens": 100, "lines": {l}}}"#));
        assert_eq!(lines(3), too_few("lines", 3, 4));
        assert_eq!(lines(4), Ok(Budget::tokens(100).lines(4)));
        assert_eq!(lines(5), Ok(Budget::tokens(100).lines(5)));
        // Both at once: the first that fails is named.
        assert_eq!(
            spec(r#"{"tokens": 100, "bytes": 255, "lines": 3}"#),
            too_few("bytes", 255, 256)
        );
        assert_eq!(
            spec(r#"{"tokens": 100, "bytes": 256, "lines": 4}"#),
            Ok(Budget::tokens(100).bytes(256).lines(4))
        );
        assert!(spec(r#"{"tokens": 100, "bites": 300}"#).is_err());
    }

    #[test]
    fn a_run_budget_is_checked_at_each_bound() {
        let run = Budget::from_run;
        assert_eq!(run(24, 1.0, 1), Ok(Budget::tokens(24)));
        assert_eq!(run(23, 1.0, 1), Err(BudgetError::TooSmall(23)));
        assert_eq!(run(25, 1.0, 1), Ok(Budget::tokens(25)));
        // 71 / 3 is 23.67, rounded down: too small; 72 / 3 is 24.
        assert_eq!(run(71, 1.0, 3), Err(BudgetError::TooSmall(23)));
        assert_eq!(run(72, 1.0, 3), Ok(Budget::tokens(24)));
        assert_eq!(run(48, 0.5, 1), Ok(Budget::tokens(24)));
        assert_eq!(run(1_000, 0.0, 1), Err(BudgetError::Share(0.0)));
        assert_eq!(run(1_000, -0.5, 1), Err(BudgetError::Share(-0.5)));
        assert_eq!(
            run(1_000, 1.0 + f64::EPSILON, 1),
            Err(BudgetError::Share(1.0 + f64::EPSILON))
        );
        assert_eq!(
            run(1_000, f64::MIN_POSITIVE, 1),
            Err(BudgetError::TooSmall(0))
        );
        assert!(matches!(run(1_000, f64::NAN, 1), Err(BudgetError::Share(s)) if s.is_nan()));
        assert_eq!(run(1_000, 1.0, 0), Err(BudgetError::Calls));
        assert_eq!(run(1_000, 1.0, 1), Ok(Budget::tokens(1_000)));
        let spec = spec(r#"{"window": 200000, "share": 0.33, "expected_calls": 30}"#);
        assert_eq!(spec, Ok(Budget::tokens(2_200)));
    }

    #[test]
    fn within_takes_the_smaller_of_each_ceiling() {
        let limits = |tokens, bytes, lines| ClientLimits {
            tokens,
            bytes,
            lines,
        };
        let b = Budget::tokens(1_000);
        assert_eq!(b.within(ClientLimits::NONE), b);
        assert_eq!(b.within(limits(Some(999), None, None)), Budget::tokens(999));
        assert_eq!(b.within(limits(Some(1_001), None, None)), b);
        assert_eq!(b.within(limits(Some(1_000), None, None)), b);
        let set = b.bytes(500).lines(10);
        assert_eq!(set.within(ClientLimits::NONE), set);
        assert_eq!(
            set.within(limits(None, Some(499), Some(11))),
            b.bytes(499).lines(10)
        );
        assert_eq!(
            set.within(limits(None, Some(501), Some(9))),
            b.bytes(500).lines(9)
        );
        assert_eq!(
            b.within(limits(None, Some(300), Some(5))),
            b.bytes(300).lines(5)
        );
    }

    #[test]
    fn a_budget_writes_back_as_it_was_written() {
        for budget in [
            Budget::tokens(24),
            Budget::tokens(100).bytes(256),
            Budget::tokens(100).lines(4),
            Budget::tokens(100).bytes(300).lines(7),
        ] {
            let json = serde_json::to_string(&budget).unwrap();
            assert_eq!(
                serde_json::from_str::<Budget>(&json).unwrap(),
                budget,
                "{json}"
            );
        }
        assert_eq!(serde_json::to_string(&Budget::tokens(30)).unwrap(), "30");
        assert_eq!(
            serde_json::to_string(&Budget::tokens(30).lines(5)).unwrap(),
            r#"{"tokens":30,"lines":5}"#
        );
    }
}
