// Package extract is the second stage of synaxi's learning loop: it turns
// a read session (read.Doc) into grounded profile observations and merges
// them into the store. An Extractor proposes observations (Embedded, the
// default, or a model: the user's claude CLI, the Anthropic API, an
// OpenAI-compatible endpoint); Validate keeps only what the user's own
// words support; Ingest runs read, extract and merge for one transcript
// and saves one new profile version.
//
// Invariants:
//   - Evidence is a quote found verbatim in a human-typed turn of the
//     session; its session and timestamp come from the transcript, never
//     from the extractor.
//   - An observation's text is scrubbed (package redact) before it is kept.
//   - Extraction, which may call a model, runs outside the store's lock.
//   - Merging is idempotent per session (store.Merge), so retrying a
//     session after a crash never double counts.
package extract
