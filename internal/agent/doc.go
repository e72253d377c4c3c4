// Package agent is the expert stage's tool-using runtime: it investigates one
// finding by letting an LLM explore the head snapshot of the reviewed
// repository through read-only tools, and ends with a verdict whose evidence
// has been checked deterministically.
//
// # The loop
//
// Run sends the conversation to the model, executes the tool calls it gets
// back (read_file, grep, list_dir, find_symbol) inside a sandbox rooted at the
// snapshot, appends the results and repeats. The sandbox reads through
// os.Root, follows no symlink, refuses hard-linked files and the paths of
// Config.Deny (.git always), and leaves denied files out of listings and
// searches. The run ends only through the
// submit_verdict tool or through one of the runtime's stops:
//
//   - Accept gate: every evidence item of a submitted verdict is checked
//     against the snapshot and the tool results recorded during the run. All
//     required checks pass → StopAccepted for a confirmed or refuted verdict,
//     StopInconclusive for an inconclusive one (nothing was established, so
//     nothing is "accepted"); any fails → StopAcceptCheckFailed, the
//     submitted verdict kept with its confidence multiplied by
//     Config.AcceptFailFactor.
//   - Completion protocol: a reply with no tool call gets a reminder;
//     Config.MaxMissingCompletion such replies in a row → StopMissingCompletion.
//     The forced summarize rounds are the exception (see below).
//   - Repeat-cycle detector: the same call returning the same result
//     Config.RepeatThreshold times in a row gets a reminder; once more →
//     StopRepeatCycle.
//   - Exploration tracker: phases explore → verify → summarize with nudges.
//     When Config.MaxRounds rounds are spent the runtime forces the summarize
//     phase and, Config.GracefulExitRounds rounds later, stops with
//     StopBudgetExhausted.
//   - The caller's context: a deadline → StopTimeout; a cancellation is
//     returned as an error.
//
// # Forced summarize
//
// When Config.MaxRounds rounds are spent, the runtime moves to the summarize
// phase and sends the next Config.GracefulExitRounds requests with
// tool_choice "none": the model may no longer call tools and is asked to
// reply with its verdict as one JSON object in the message text, holding
// exactly the submit_verdict arguments (verdict, confidence, reasoning,
// evidence). submit_verdict stays listed, alone, because tool_choice is only
// valid alongside tools.
//
// In those rounds the verdict is read from the text tolerantly: the bodies
// of ``` fenced blocks first, then the whole reply, taking the first
// balanced {...} with a verdict field that validates, so prose around the
// object does not matter. A submit_verdict call that arrives anyway, from an
// endpoint that ignores tool_choice, is accepted as well; other tool calls
// are refused. Either way the verdict goes through exactly the validation
// and the accept gate of a submit_verdict call. A reply with no usable
// verdict gets one short reminder (naming the problems when a verdict was
// found but did not validate) and does not count as a missing completion
// signal; the run stops with StopBudgetExhausted once the graceful exit
// rounds are over.
//
// Outside the forced rounds a verdict written as plain text is not
// accepted; such a reply counts as a missing completion signal.
//
// With Config.SummarySchema set, the forced requests also carry
// response_format json_schema (strict) with that schema, which should
// describe the submit_verdict arguments; the structured reply is read by
// the same text extraction. Earlier requests never carry a response format.
//
// # Judging a verdict without a run
//
// Judge applies the end of a run to a verdict document obtained some other
// way, for a fallback: the same tolerant reading, the same validation and
// the same accept gate against the snapshot, with no tool results, so
// tool_fact checks fail.
//
// # Verdicts of unfinished runs
//
// A run that stops without a submitted verdict (repeat_cycle,
// missing_completion_signal, budget_exhausted, timeout, error) reports the
// verdict "inconclusive" with the finding's own confidence multiplied by
// Config.AcceptFailFactor: the investigation neither confirmed nor refuted
// the finding, and an unfinished investigation should not raise trust in it.
// A run that stops with StopError carries its failure in Result.Err as well
// as in the text of Result.Error. Result.ToolCalls and Result.Phases are
// never nil.
package agent
