//! The research call's budgets: defaults (the peer's), hard maxima, and the
//! running account the loop checks before every model turn and tool call.

use anyhow::{Result, bail};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What one research call may spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Budgets {
    /// Model turns (the repair turns come on top, see [`REPAIR_TURNS`]).
    pub turns: u32,
    /// Tool calls, the host's opening searches included.
    pub tool_calls: u32,
    /// Most chars one read (`read`, `read_source`) may return.
    pub read_chars: u64,
    /// Most chars of tool results returned to the model over the whole call.
    pub total_chars: u64,
    /// Wall-clock seconds for the whole call.
    pub seconds: u64,
}

/// Turns allowed after admission names problems: one to call tools it
/// needs (an inspection it skipped), one to resubmit. Outside `turns`, so a
/// kit submitted on the last turn can still be repaired.
pub const REPAIR_TURNS: u32 = 2;

impl Budgets {
    /// The peer's defaults.
    pub const DEFAULT: Budgets =
        Budgets { turns: 8, tool_calls: 24, read_chars: 32_000, total_chars: 96_000, seconds: 300 };
    /// Hard maxima: no configuration goes past these.
    pub const MAX: Budgets =
        Budgets { turns: 32, tool_calls: 128, read_chars: 32_000, total_chars: 400_000, seconds: 1_800 };

    /// Check every budget is within 1..=its maximum, naming the one that is not.
    pub fn validate(&self) -> Result<()> {
        let checks: [(&str, u64, u64); 5] = [
            ("turns", self.turns.into(), Self::MAX.turns.into()),
            ("tool-calls", self.tool_calls.into(), Self::MAX.tool_calls.into()),
            ("read-chars", self.read_chars, Self::MAX.read_chars),
            ("total-chars", self.total_chars, Self::MAX.total_chars),
            ("seconds", self.seconds, Self::MAX.seconds),
        ];
        for (name, value, max) in checks {
            if value == 0 || value > max {
                bail!("budget --budget-{name} {value} is out of range: give 1 to {max}");
            }
        }
        Ok(())
    }
}

impl Default for Budgets {
    fn default() -> Self {
        Budgets::DEFAULT
    }
}

/// What has been spent so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Spent {
    pub turns: u32,
    pub repair_turns: u32,
    pub tool_calls: u32,
    /// Calls refused (over a budget, a repeat, an unknown tool): not made.
    pub refused_calls: u32,
    pub chars: u64,
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// HTTP attempts past the first of each turn.
    pub retries: u32,
    /// Time waiting on the model, retries included.
    pub model_ms: u64,
    /// Time answering tool calls.
    pub tools_ms: u64,
    pub wall_ms: u64,
}

impl Spent {
    pub fn chars_left(&self, b: &Budgets) -> u64 {
        b.total_chars.saturating_sub(self.chars)
    }

    /// Why a tool call may not be made now, if it may not.
    pub fn call_refusal(&self, b: &Budgets) -> Option<String> {
        if self.tool_calls >= b.tool_calls {
            return Some(format!(
                "the tool-call budget ({} calls) is spent; submit the kit with what you have",
                b.tool_calls
            ));
        }
        if self.chars_left(b) == 0 {
            return Some(format!(
                "the {} chars this research call may return are spent; submit the kit with what you have",
                b.total_chars
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_peers_and_maxima_bound_every_budget() {
        assert_eq!((Budgets::DEFAULT.turns, Budgets::DEFAULT.tool_calls), (8, 24));
        assert_eq!((Budgets::DEFAULT.read_chars, Budgets::DEFAULT.total_chars), (32_000, 96_000));
        Budgets::DEFAULT.validate().unwrap();
        Budgets::MAX.validate().unwrap();
        let over = Budgets { turns: 33, ..Budgets::DEFAULT };
        let err = over.validate().unwrap_err().to_string();
        assert!(err.contains("--budget-turns 33") && err.contains("1 to 32"), "{err}");
        let zero = Budgets { total_chars: 0, ..Budgets::DEFAULT };
        assert!(zero.validate().unwrap_err().to_string().contains("--budget-total-chars 0"));
    }

    #[test]
    fn a_spent_budget_refuses_calls_and_says_which() {
        let b = Budgets { tool_calls: 2, total_chars: 100, ..Budgets::DEFAULT };
        let mut s = Spent::default();
        assert_eq!(s.call_refusal(&b), None);
        s.tool_calls = 2;
        assert!(s.call_refusal(&b).unwrap().contains("tool-call budget (2 calls)"));
        s.tool_calls = 1;
        s.chars = 100;
        assert!(s.call_refusal(&b).unwrap().contains("100 chars"));
    }
}
