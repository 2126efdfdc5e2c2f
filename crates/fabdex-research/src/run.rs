//! The loop: an opening pass by the host, model turns with tool calls under
//! the budgets, a kit submitted through `submit_kit` (or as JSON content),
//! admission, one bounded repair, and the outcome written under the run.
//!
//! Every tool call goes through the registry ([`fabdex_tools::call`]) with
//! the run's session, so it is one ledger record like any other caller's;
//! every model turn is a `model-turn` record written when the turn is over
//! (after the records of the calls it asked for).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::Result;
use fabdex_kit::kit::{Missing, Recommendation, RecommendationKind};
use fabdex_kit::{Admission, Kit, KitStatus, Problem};
use fabdex_ledger::{Item, NewRecord, RecordKind, TurnCall, TurnUsage};
use serde_json::{Value, json};

use crate::budget::{REPAIR_TURNS, Spent};
use crate::chat::{ChatError, Message, Reply, ToolCall};
use crate::fit::{self, Opening, OpeningCall, Rate, Window};
use crate::prior::Carried;
use crate::prompt;
use crate::service::{GrantsInfo, ModelInfo, Outcome, Request, Service};
use crate::toolset::{READ_ONLY, READS, SUBMIT_KIT, model_tools};

/// How the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Submitted,
    TurnBudget,
    TimeBudget,
    ModelError,
    NoValidKit,
}

impl Stop {
    fn as_str(self) -> &'static str {
        match self {
            Stop::Submitted => "kit-submitted",
            Stop::TurnBudget => "turn-budget",
            Stop::TimeBudget => "time-budget",
            Stop::ModelError => "model-error",
            Stop::NoValidKit => "no-valid-kit",
        }
    }
}

/// One request as it will be sent, and how it was fitted.
struct Planned {
    messages: Vec<Message>,
    tools: Vec<Value>,
    chars: u64,
    fit: Option<fabdex_ledger::ContextFit>,
}

/// What one turn produced, for the loop.
enum TurnEnd {
    /// The model called tools (answered); go on.
    Continue,
    /// A kit candidate.
    Kit(Box<Kit>),
    /// The model answered without tools and without a kit.
    NoKit(String),
    /// The endpoint failed.
    Failed(String),
}

pub(crate) struct Loop<'s> {
    svc: &'s Service<'s>,
    req: &'s Request,
    ctx: fabdex_tools::Context<'s>,
    run: String,
    tools: Vec<Value>,
    messages: Vec<Message>,
    spent: Spent,
    started: Instant,
    /// Canonical `tool arguments` → the call number that made it.
    made: BTreeMap<String, u32>,
    /// Why the run stopped without a valid kit, for `missing`.
    failure: Option<(String, String)>,
    notes: Vec<String>,
    /// The model's context window, once known (configuration, server, or
    /// a refusal); every request is fitted inside it.
    window: Option<Window>,
    /// Chars per token of this endpoint's requests, learned from its counts.
    rate: Rate,
    /// The task message without its opening results, and those results,
    /// so a fitted request can carry them cut.
    task_head: String,
    opening: Vec<OpeningCall>,
}

impl<'s> Loop<'s> {
    pub(crate) fn new(svc: &'s Service<'s>, req: &'s Request, run: String) -> Result<Loop<'s>> {
        let mut session = fabdex_ledger::Session::new(svc.engine);
        session.ledger = Some(svc.store.ledger(&run)?);
        session.policy = svc.policy.clone();
        session.consumer = "research".into();
        let ctx =
            fabdex_tools::Context { session, runs: Some(svc.store.clone()), grants: Some(req.grants.handles.clone()) };
        Ok(Loop {
            svc,
            req,
            ctx,
            run,
            tools: model_tools(),
            messages: Vec::new(),
            spent: Spent::default(),
            started: Instant::now(),
            made: BTreeMap::new(),
            failure: None,
            notes: Vec::new(),
            window: None,
            rate: Rate::default(),
            task_head: String::new(),
            opening: Vec::new(),
        })
    }

    /// The whole research call.
    pub(crate) fn run(mut self, carried: Option<Carried>) -> Result<Outcome> {
        self.window = self.context_window();
        self.messages.push(Message::system(prompt::system(&self.req.budgets)));
        let opening = match &carried {
            Some(c) => self.carry_prior(c)?,
            None => self.opening_pass(),
        };
        self.task_head = prompt::task(self.req, &[], carried.as_ref());
        self.messages.push(Message::user(prompt::task(self.req, &opening, carried.as_ref())));
        self.opening = opening;
        let (stop, candidate) = self.research_turns();
        let (stop, admission, first_problems) = self.admit_with_repair(stop, candidate);
        self.finish(stop, admission, first_problems, carried)
    }

    /// The host's opening searches: the task as a pattern search and a docs
    /// search, and every attached pattern inspected. Their results open the
    /// conversation, so the model's first turn can already read.
    fn opening_pass(&mut self) -> Vec<(String, Value, String)> {
        let limit = self.opening_limit();
        let mut pattern_query = self.opening_pattern_query();
        pattern_query["limit"] = json!(limit);
        let mut calls = vec![
            ("search_patterns".to_string(), pattern_query),
            ("search_docs".to_string(), json!({"query": self.req.task, "limit": limit})),
        ];
        for id in &self.req.pattern_refs {
            calls.push(("inspect_pattern".to_string(), json!({"id": id})));
        }
        self.host_calls(calls)
    }

    /// The window from the configuration, else as the server states it.
    fn context_window(&self) -> Option<Window> {
        let endpoint = self.svc.client.endpoint();
        match endpoint.context_tokens {
            Some(tokens) => Some(Window { tokens, source: "config".into() }),
            None => self.svc.client.context_window(),
        }
    }

    /// Hits per opening search: 5, or 3 in a window under 16k tokens, where
    /// the opening would otherwise take most of the room.
    fn opening_limit(&self) -> u32 {
        match &self.window {
            Some(w) if w.tokens < 16_384 => 3,
            _ => 5,
        }
    }

    fn opening_pattern_query(&self) -> Value {
        // A handle whose schema names its type is offered as `--have`, so fit says what it binds.
        let have: Vec<String> = self
            .req
            .grants
            .handles
            .iter()
            .filter_map(|h| {
                let title = h.schema.as_ref()?.get("title")?.as_str()?;
                Some(format!("{}:{title}", h.token))
            })
            .collect();
        let mut q = json!({"text": self.req.task, "limit": 5});
        if !have.is_empty() {
            q["have"] = json!(have.iter().map(|h| fabdex_query::FieldSpec::parse(h, "have").ok()).collect::<Vec<_>>());
        }
        q
    }

    /// Attached patterns a follow-up brings that the prior run did not inspect.
    fn carry_prior(&mut self, carried: &Carried) -> Result<Vec<(String, Value, String)>> {
        carried.record(&self.ctx.session)?;
        let calls = self
            .req
            .pattern_refs
            .iter()
            .filter(|id| !carried.inspected.iter().any(|p| p.starts_with(id.as_str())))
            .map(|id| ("inspect_pattern".to_string(), json!({"id": id})))
            .collect();
        Ok(self.host_calls(calls))
    }

    fn host_calls(&mut self, calls: Vec<(String, Value)>) -> Vec<(String, Value, String)> {
        calls
            .into_iter()
            .map(|(tool, args)| {
                let (text, _) = self.call_tool(&tool, &args.to_string());
                (tool, args, text)
            })
            .collect()
    }

    /// Model turns until a kit is submitted or a budget ends the loop.
    fn research_turns(&mut self) -> (Stop, Option<Kit>) {
        let mut format_repair_used = false;
        loop {
            if self.spent.turns >= self.req.budgets.turns {
                self.fail(
                    "budget",
                    format!("the turn budget ({} turns) ran out before a kit was submitted", self.req.budgets.turns),
                );
                return (Stop::TurnBudget, None);
            }
            if self.time_left().is_none() {
                self.fail(
                    "budget",
                    format!("the time budget ({} s) ran out before a kit was submitted", self.req.budgets.seconds),
                );
                return (Stop::TimeBudget, None);
            }
            match self.turn("research") {
                TurnEnd::Continue => {}
                TurnEnd::Kit(kit) => return (Stop::Submitted, Some(*kit)),
                TurnEnd::Failed(why) => {
                    self.fail("model", why);
                    return (Stop::ModelError, None);
                }
                TurnEnd::NoKit(why) if !format_repair_used => {
                    format_repair_used = true;
                    self.notes.push(format!("turn {}: {why}; asked once for the kit", self.spent.turns));
                    self.messages.push(Message::user(prompt::format_repair(&why)));
                }
                TurnEnd::NoKit(why) => {
                    self.fail("kit", format!("no valid kit after one repair: {why}"));
                    return (Stop::NoValidKit, None);
                }
            }
        }
    }

    fn time_left(&self) -> Option<Duration> {
        Duration::from_secs(self.req.budgets.seconds).checked_sub(self.started.elapsed()).filter(|d| !d.is_zero())
    }

    fn fail(&mut self, kind: &str, why: String) {
        self.failure = Some((kind.to_string(), why));
    }

    /// One model turn: the request (fitted to the window), then every tool
    /// call it asked for. A request the server refuses as too long teaches
    /// the window and the rate, and is sent once more, smaller.
    fn turn(&mut self, phase: &str) -> TurnEnd {
        self.spent.turns += 1;
        if phase == "repair" {
            self.spent.repair_turns += 1;
        }
        let exposure = self.exposure();
        let mut usage = TurnUsage {
            turn: self.spent.turns,
            model: self.svc.client.endpoint().model.clone(),
            phase: phase.to_string(),
            tokens_in: 0,
            tokens_out: 0,
            chars_in: 0,
            wall_ms: 0,
            attempts: 0,
            finish: String::new(),
            calls: vec![],
            exposure,
            context: None,
        };
        let mut retried = false;
        let reply = loop {
            let request = self.fitted();
            usage.chars_in = request.messages.iter().map(Message::chars).sum();
            let timeout = self.time_left().unwrap_or(Duration::from_millis(1));
            let max_tokens = self.window.as_ref().map(Window::answer_reserve);
            let reply = self.svc.client.complete_within(&request.messages, &request.tools, max_tokens, timeout);
            usage.context = request.fit.map(|mut fit| {
                fit.retried_smaller = retried;
                fit
            });
            match reply {
                Err(e) if e.kind == "context-exceeded" && !retried && self.learn_refusal(&e, request.chars) => {
                    retried = true;
                    usage.wall_ms += e.wall.as_millis() as u64;
                    usage.attempts += e.attempts;
                }
                Err(e) => break Err(e),
                Ok(r) => {
                    self.rate.learn(request.chars, r.tokens_in);
                    break Ok(r);
                }
            }
        };
        if let Some(note) = usage.context.as_ref().and_then(|fit| fit::note(usage.turn, fit)) {
            self.notes.push(note);
        }
        let reply = match reply {
            Ok(r) => r,
            Err(e) => {
                usage.wall_ms += e.wall.as_millis() as u64;
                usage.attempts += e.attempts;
                usage.finish = e.kind.clone();
                self.account_model(&usage);
                self.record_turn(usage, Some(e.to_string()));
                return TurnEnd::Failed(format!("the model endpoint failed: {e}"));
            }
        };
        usage.tokens_in = reply.tokens_in;
        usage.tokens_out = reply.tokens_out;
        usage.wall_ms += reply.wall.as_millis() as u64;
        usage.attempts += reply.attempts;
        usage.finish = reply.finish.clone();
        self.account_model(&usage);
        let end = self.answer(reply, &mut usage);
        self.record_turn(usage, None);
        end
    }

    /// This turn's request: the conversation as it is when no window is
    /// known, else planned inside it ([`fit::plan`]).
    fn fitted(&self) -> Planned {
        let Some(window) = &self.window else {
            return Planned {
                chars: fit::request_chars(&self.messages, &self.tools),
                messages: self.messages.clone(),
                tools: self.tools.clone(),
                fit: None,
            };
        };
        let head = &self.task_head;
        let render = |calls: &[OpeningCall]| format!("{head}{}", prompt::opening_calls(calls));
        let task_at = self.messages.iter().position(|m| m.role == "user");
        let opening = task_at.map(|at| Opening { at, calls: &self.opening, render: &render });
        let f = fit::plan(&self.messages, &self.tools, opening.as_ref(), window, &self.rate);
        Planned { messages: f.messages, tools: f.tools, chars: f.chars, fit: Some(f.fit) }
    }

    /// Learn from a context refusal: the window it names (or, when it names
    /// none, the one we assumed), and the rate from the prompt tokens it
    /// counted. False when there is nothing to learn, so nothing to retry.
    fn learn_refusal(&mut self, e: &ChatError, chars_sent: u64) -> bool {
        let (window, prompt) = e.context.unwrap_or((None, None));
        let before = (self.window.clone(), self.rate);
        if let Some(tokens) = window {
            self.window = Some(Window { tokens, source: "refusal".into() });
        }
        match prompt {
            Some(p) => self.rate.learn(chars_sent, p),
            // No count: assume a quarter more tokens per char than we thought.
            None => self.rate.chars_per_token *= 0.75,
        }
        self.window.is_some() && (self.window.clone(), self.rate) != before
    }

    fn account_model(&mut self, usage: &TurnUsage) {
        self.spent.tokens_in += usage.tokens_in;
        self.spent.tokens_out += usage.tokens_out;
        self.spent.model_ms += usage.wall_ms;
        self.spent.retries += usage.attempts.saturating_sub(1);
    }

    /// Answer the model's message: run its tool calls, or read a kit from it.
    fn answer(&mut self, reply: Reply, usage: &mut TurnUsage) -> TurnEnd {
        let message = reply.message;
        if message.tool_calls.is_empty() {
            let content = message.content.clone().unwrap_or_default();
            self.messages.push(Message::assistant(message));
            return match kit_from_content(&content) {
                Ok(kit) => {
                    usage.finish = "kit".into();
                    TurnEnd::Kit(Box::new(kit))
                }
                Err(why) => TurnEnd::NoKit(why),
            };
        }
        let calls = message.tool_calls.clone();
        self.messages.push(Message::assistant(message));
        let mut kit: Option<Result<Kit, String>> = None;
        for call in &calls {
            let (text, record) = if call.function.name == SUBMIT_KIT {
                let parsed = parse_kit(&call.function.arguments);
                let text = match &parsed {
                    Ok(_) => json!({"received": true, "note": "the host is admitting the kit"}).to_string(),
                    Err(e) => json!({"error": {"kind": "invalid-argument", "message": e}}).to_string(),
                };
                kit = Some(parsed);
                let outcome = if text.contains("\"error\"") { "invalid-arguments" } else { "ok" };
                (
                    text.clone(),
                    TurnCall { tool: SUBMIT_KIT.into(), outcome: outcome.into(), chars: 0, wall_ms: 0, seq: None },
                )
            } else if kit.is_some() {
                let text = refusal("not made: the kit was submitted in the same turn");
                (
                    text,
                    TurnCall {
                        tool: call.function.name.clone(),
                        outcome: "refused".into(),
                        chars: 0,
                        wall_ms: 0,
                        seq: None,
                    },
                )
            } else {
                self.call_tool(&call.function.name, &call.function.arguments)
            };
            usage.calls.push(record);
            self.messages.push(Message::tool(&tool_call_id(call), text));
        }
        match kit {
            Some(Ok(kit)) => {
                usage.finish = "kit".into();
                TurnEnd::Kit(Box::new(kit))
            }
            Some(Err(why)) => TurnEnd::NoKit(why),
            None => TurnEnd::Continue,
        }
    }

    /// Run one tool call under the budgets; returns the text for the model
    /// and the call's accounting.
    fn call_tool(&mut self, name: &str, arguments: &str) -> (String, TurnCall) {
        let started = Instant::now();
        let mut record = TurnCall { tool: name.to_string(), outcome: "ok".into(), chars: 0, wall_ms: 0, seq: None };
        let text = match self.prepare(name, arguments) {
            Err((outcome, text)) => {
                record.outcome = outcome.into();
                self.spent.refused_calls += 1;
                text
            }
            Ok(args) => {
                self.spent.tool_calls += 1;
                let before = self.last_seq();
                let result = fabdex_tools::call(&self.ctx, name, args);
                let (citations, seq) = self.citations_since(before);
                record.seq = seq;
                match result {
                    Ok(value) => self
                        .within_char_budget(json!({"result": value, "citations": citations}).to_string(), &mut record),
                    Err(e) => {
                        record.outcome = "tool-error".into();
                        json!({"error": {"kind": e.kind, "message": e.message}}).to_string()
                    }
                }
            }
        };
        record.chars = text.chars().count() as u64;
        record.wall_ms = started.elapsed().as_millis() as u64;
        self.spent.chars += record.chars;
        self.spent.tools_ms += record.wall_ms;
        (text, record)
    }

    /// Check a call may be made, and give its arguments as the registry takes them.
    fn prepare(&mut self, name: &str, arguments: &str) -> Result<Value, (&'static str, String)> {
        if name == "research" {
            return Err(("refused", refusal("research cannot call research")));
        }
        if !READ_ONLY.contains(&name) {
            let known = READ_ONLY.join(", ");
            return Err((
                "refused",
                tool_error("unknown-tool", &format!("no tool `{name}` here (tools: {known}, {SUBMIT_KIT})")),
            ));
        }
        let mut args: Value = if arguments.trim().is_empty() {
            json!({})
        } else {
            serde_json::from_str(arguments).map_err(|e| {
                ("invalid-arguments", tool_error("invalid-argument", &format!("{name}: arguments are not JSON: {e}")))
            })?
        };
        let Some(obj) = args.as_object_mut() else {
            return Err((
                "invalid-arguments",
                tool_error("invalid-argument", &format!("{name}: arguments must be a JSON object")),
            ));
        };
        if obj.remove("run").is_some() {
            self.notes.push(format!("a `{name}` call named a run; the research run was used"));
        }
        if let Some(why) = self.spent.call_refusal(&self.req.budgets) {
            return Err(("refused", refusal(&why)));
        }
        if READS.contains(&name) {
            self.cap_read(obj);
        }
        let key = format!("{name} {args}");
        if let Some(n) = self.made.get(&key) {
            return Err((
                "refused",
                refusal(&format!("not made again: the same call was call {n} of this research; use its result")),
            ));
        }
        self.made.insert(key, self.spent.tool_calls + 1);
        Ok(args)
    }

    /// A read returns at most the read budget, and no more than is left.
    fn cap_read(&mut self, args: &mut serde_json::Map<String, Value>) {
        // Room for the envelope around the text (address, digest, citation…).
        const ENVELOPE: u64 = 800;
        let left = self.spent.chars_left(&self.req.budgets).saturating_sub(ENVELOPE).max(1);
        let cap = self.req.budgets.read_chars.min(left);
        let asked = args.get("max_chars").and_then(Value::as_u64).unwrap_or(fabdex_model::Limits::READ_DEFAULT_CHARS);
        if asked > cap {
            args.insert("max_chars".into(), json!(cap));
            self.notes.push(format!("a read asked for {asked} chars; capped at {cap} by the budget"));
        }
    }

    /// A result longer than what is left of the char budget is not returned.
    fn within_char_budget(&mut self, text: String, record: &mut TurnCall) -> String {
        let n = text.chars().count() as u64;
        let left = self.spent.chars_left(&self.req.budgets);
        if n <= left {
            return text;
        }
        record.outcome = "refused".into();
        refusal(&format!(
            "the result ({n} chars) is longer than the {left} chars left of this research call's budget; it was not returned (ask for less: a smaller limit or max_chars)"
        ))
    }

    fn last_seq(&self) -> u64 {
        self.ctx
            .session
            .ledger
            .as_ref()
            .and_then(|l| l.read().ok())
            .and_then(|c| c.records.last().map(|r| r.seq))
            .unwrap_or(0)
    }

    /// Citation ids of the items the call just recorded: how the model cites what it read.
    fn citations_since(&self, before: u64) -> (Vec<Value>, Option<u64>) {
        let Some(contents) = self.ctx.session.ledger.as_ref().and_then(|l| l.read().ok()) else {
            return (vec![], None);
        };
        let mut seq = None;
        let mut out = Vec::new();
        for r in contents.records.iter().filter(|r| r.seq > before) {
            seq = Some(r.seq);
            for i in r.call.items.iter().filter(|i| i.released) {
                if let Some(c) = &i.citation {
                    out.push(citation_entry(i, c));
                }
            }
        }
        (out, seq)
    }

    fn exposure(&self) -> Vec<String> {
        self.ctx
            .session
            .ledger
            .as_ref()
            .and_then(|l| l.read().ok())
            .map(|c| fabdex_ledger::audit::exposure(&c).origins)
            .unwrap_or_default()
    }

    fn record_turn(&mut self, usage: TurnUsage, error: Option<String>) {
        let Some(ledger) = &self.ctx.session.ledger else { return };
        let record = NewRecord {
            kind: RecordKind::ModelTurn,
            arguments: json!({"phase": usage.phase, "turn": usage.turn}),
            turn: Some(usage),
            tool: "model".into(),
            snapshot: Some(self.svc.engine.snapshot_id().to_string()),
            consumer: "research".into(),
            policy: self.ctx.session.policy.as_ref().map_or("none".to_string(), |p| p.label.clone()),
            items: vec![],
            error,
        };
        if let Err(e) = ledger.append(record) {
            self.notes.push(format!("a model turn could not be recorded: {e:#}"));
        }
    }

    /// Admit the candidate; when admission names problems, one bounded
    /// repair (up to [`REPAIR_TURNS`] turns), then admit again.
    fn admit_with_repair(&mut self, stop: Stop, candidate: Option<Kit>) -> (Stop, Option<Admission>, Vec<Problem>) {
        let Some(kit) = candidate else { return (stop, None, vec![]) };
        let first = self.admit(&kit);
        if first.problems.is_empty() && first.kit.missing.is_empty() {
            return (stop, Some(first), vec![]);
        }
        let problems = first.problems.clone();
        self.messages.push(Message::user(prompt::admission_repair(&first, REPAIR_TURNS)));
        let mut resubmitted = None;
        for _ in 0..REPAIR_TURNS {
            if self.time_left().is_none() {
                break;
            }
            match self.turn("repair") {
                TurnEnd::Kit(kit) => {
                    resubmitted = Some(*kit);
                    break;
                }
                TurnEnd::Continue => {}
                TurnEnd::NoKit(why) | TurnEnd::Failed(why) => {
                    self.notes.push(format!("repair: {why}; the first kit's admission stands"));
                    break;
                }
            }
        }
        match resubmitted {
            Some(kit) => (stop, Some(self.admit(&kit)), problems),
            None => {
                self.notes.push("repair: no kit was resubmitted; the first kit's admission stands".into());
                (stop, Some(first), problems)
            }
        }
    }

    fn admit(&self, kit: &Kit) -> Admission {
        let contents = match self.ctx.session.ledger.as_ref().map(|l| l.read()) {
            Some(Ok(c)) => c,
            _ => fabdex_ledger::Contents { run: self.run.clone(), records: vec![], problems: vec![] },
        };
        fabdex_kit::admit(self.svc.engine, &contents, &self.req.grants.handles, kit)
    }

    fn finish(
        mut self,
        stop: Stop,
        admission: Option<Admission>,
        first_problems: Vec<Problem>,
        carried: Option<Carried>,
    ) -> Result<Outcome> {
        self.spent.wall_ms = self.started.elapsed().as_millis() as u64;
        let (kit, problems) = match admission {
            Some(a) => (a.kit, a.problems),
            None => (self.host_kit(), vec![]),
        };
        Ok(Outcome {
            run: self.run.clone(),
            status: kit.status,
            stopped: stop.as_str().to_string(),
            kit,
            problems,
            repair_problems: first_problems,
            model: ModelInfo {
                base_url: self.svc.client.endpoint().base_url.clone(),
                model: self.svc.client.endpoint().model.clone(),
                label: self.svc.model_label.clone(),
            },
            budgets: self.req.budgets,
            spent: self.spent,
            grants: GrantsInfo { count: self.req.grants.handles.len(), digest: self.req.grants.digest.clone() },
            prior: carried.map(|c| c.summary).or_else(|| self.req.prior_note.clone()),
            notes: self.notes,
        })
    }

    /// The kit when the model gave none that could be admitted: incomplete,
    /// with `missing` saying why, and no claim of the model's in it.
    fn host_kit(&self) -> Kit {
        let (kind, why) = self.failure.clone().unwrap_or_else(|| ("kit".into(), "no kit was submitted".into()));
        let contents = self.ctx.session.ledger.as_ref().and_then(|l| l.read().ok());
        Kit {
            status: KitStatus::Incomplete,
            task: self.req.task.clone(),
            summary: String::new(),
            recommendation: Recommendation {
                kind: RecommendationKind::FocusedApi,
                rationale: format!("research did not finish ({why}); no recommendation is made"),
            },
            inputs: vec![],
            patterns: vec![],
            steps: vec![],
            example: None,
            rules: vec![],
            verification: vec![],
            sources: vec![],
            missing: vec![Missing {
                kind,
                pattern_id: String::new(),
                argument: String::new(),
                ty: String::new(),
                description: Some(why),
                resolution: "run the research again once the cause is fixed (endpoint, budgets), or with `--prior` to extend what this run read".into(),
            }],
            run: Some(self.run.clone()),
            exposure: contents.map(|c| fabdex_ledger::audit::exposure(&c).origins).unwrap_or_default(),
        }
    }
}

fn citation_entry(item: &Item, citation: &str) -> Value {
    let mut e = json!({"citation": citation, "address": item.address, "kind": item.kind});
    if let (Some(o), Some(end)) = (item.offset, item.end) {
        e["range"] = json!([o, end]);
    }
    e
}

fn tool_call_id(call: &ToolCall) -> String {
    call.id.clone()
}

fn refusal(why: &str) -> String {
    tool_error("refused", why)
}

fn tool_error(kind: &str, message: &str) -> String {
    json!({"error": {"kind": kind, "message": message}}).to_string()
}

/// A kit from `submit_kit`'s arguments.
fn parse_kit(arguments: &str) -> Result<Kit, String> {
    let value: Value =
        serde_json::from_str(arguments).map_err(|e| format!("submit_kit: arguments are not JSON: {e}"))?;
    // Some models wrap the kit in a `kit` field.
    let value = match value.get("kit") {
        Some(inner) if inner.is_object() && value.get("task").is_none() => inner.clone(),
        _ => value,
    };
    serde_json::from_value(value).map_err(|e| format!("submit_kit: the kit does not match `fabdex kit schema`: {e}"))
}

/// A kit given as the final message's content: the JSON object in it
/// (a fenced ```json block is accepted).
fn kit_from_content(content: &str) -> Result<Kit, String> {
    let trimmed = content.trim();
    if trimmed.is_empty() {
        return Err("the model answered with neither a tool call nor a kit".into());
    }
    let (Some(start), Some(end)) = (trimmed.find('{'), trimmed.rfind('}')) else {
        return Err("the final answer is not JSON".into());
    };
    if end < start {
        return Err("the final answer is not JSON".into());
    }
    parse_kit(&trimmed[start..=end]).map_err(|e| e.replace("submit_kit: ", "the final answer: "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kit_is_read_from_a_fenced_answer_and_prose_is_not_a_kit() {
        let fenced = "Here it is:\n```json\n{\"task\": \"t\", \"recommendation\": {\"kind\": \"focused-api\", \"rationale\": \"r\"}}\n```";
        assert_eq!(kit_from_content(fenced).unwrap().task, "t");
        assert!(kit_from_content("I think you should use the inbox.").unwrap_err().contains("not JSON"));
        assert!(kit_from_content("{\"task\": 3}").unwrap_err().contains("does not match"));
        let wrapped = r#"{"kit": {"task": "w", "recommendation": {"kind": "author", "rationale": ""}}}"#;
        assert_eq!(parse_kit(wrapped).unwrap().task, "w");
    }
}
