// Package extract is the second stage of synaxi's learning loop: it turns
// a read session (read.Doc) into grounded profile observations. An
// Extractor proposes observations (Embedded, the default, or a model: the
// user's claude CLI, the Anthropic API, an OpenAI-compatible endpoint);
// Validate keeps only what the user's own words support. Package pipeline
// runs read, extract, screen and merge for one transcript.
//
// Invariants:
//   - Evidence is a quote found verbatim in a human-typed turn of the
//     session; its session and timestamp come from the transcript, never
//     from the extractor.
//   - An observation's text is scrubbed (package redact) before it is kept.
package extract
