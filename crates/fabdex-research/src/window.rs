//! The model's context window: how big it is, where that was learned, and
//! what a server's refusal for length says about it. Shared by the chat
//! client (which asks the server and reads refusals) and the fitting of
//! requests (`fit.rs`).

/// The answer's reserve: an eighth of the window, at most this many
/// tokens. A tool call takes a few hundred and a kit about a thousand; a
/// small model that rambles instead would otherwise spend minutes of CPU
/// filling a quarter of its window.
const MAX_ANSWER_TOKENS: u32 = 2_048;

/// The model's context window and where it was learned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    pub tokens: u32,
    /// `config`, `flag`, `server /v1/models`, `server /props` or `refusal`.
    pub source: String,
}

impl Window {
    /// Tokens kept free for the answer (`max_tokens` of the request).
    pub fn answer_reserve(&self) -> u32 {
        (self.tokens / 8).min(MAX_ANSWER_TOKENS)
    }
}

/// What a server's refusal says about the context, when it is one: the
/// window and the prompt tokens of the refused request. Covers OpenAI's and
/// vLLM's wording, llama-cpp-python's (which copies it) and llama.cpp's
/// server (`n_prompt_tokens`, `n_ctx`).
pub fn refusal_numbers(body: &str) -> Option<(Option<u32>, Option<u64>)> {
    let lower = body.to_ascii_lowercase();
    let is_context = ["context_length_exceeded", "maximum context length", "exceed_context_size", "context window"]
        .iter()
        .any(|p| lower.contains(p));
    if !is_context {
        return None;
    }
    let number_after = |marker: &str| -> Option<u64> {
        let at = lower.find(marker)? + marker.len();
        let digits: String =
            lower[at..].chars().skip_while(|c| !c.is_ascii_digit()).take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    };
    let window = number_after("maximum context length is")
        .or_else(|| number_after("\"n_ctx\""))
        .or_else(|| number_after("context window of"))
        .and_then(|n| u32::try_from(n).ok());
    let prompt = lower
        .find(" in the messages")
        .and_then(|end| {
            let digits: String = lower[..end]
                .chars()
                .rev()
                .take_while(char::is_ascii_digit)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            digits.parse().ok()
        })
        .or_else(|| number_after("messages resulted in"))
        .or_else(|| number_after("\"n_prompt_tokens\""));
    Some((window, prompt))
}
