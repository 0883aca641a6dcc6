// Package fakeapi is a scripted fake of the Anthropic Messages API for tests.
//
// A Server answers POST /v1/messages (streaming SSE and plain JSON, with or
// without ?beta=true) and POST /v1/messages/count_tokens the way the real API
// does: it validates every request as strictly as the real API (answering 400
// invalid_request_error and recording why), simulates prompt caching (prefix
// hashes at cache_control breakpoints, 20-block lookback, 5m/1h TTLs on an
// injectable clock, a minimum cacheable length) and reports usage the way the
// real API reports it. Faults (HTTP errors with retry-after, slow first byte,
// streams cut mid-event, in-stream error events, malformed JSON, count_tokens
// failures) can be injected by request number or matcher.
//
// The model is a scripted Agent. It sees only the parsed request (a View): the
// system text, the tool names, the messages, and helpers that pair each
// tool_result with its tool_use and rebuild file content from what Claude
// Code's Read, Write and Edit calls made visible. Content that is not in the
// request cannot be used, so information lost by a proxy shows up as loops or
// failures of the scripted agent.
//
// Token counting: every request is cut into blocks in prefix order (each tool
// definition, each system text block, each content block of each message; a
// string system prompt or string message content is one block). A block's
// tokens are internal/tokens' estimate (EstimateBytes) of the block's compact
// JSON with its cache_control field removed (at least 1 token), so moving a
// breakpoint changes no count. count_tokens returns the sum
// over all blocks, so for the same body count_tokens equals input_tokens +
// cache_creation_input_tokens + cache_read_input_tokens of the messages
// answer. See Tokens.
//
// Side requests: a messages request is a side request, answered without the
// Agent, when it declares no tools (absent or empty "tools", as in Claude
// Code's title generation), asks for structured output (output_config.format),
// or has max_tokens of 1 or less (quota probes). Title requests get
// {"title":"Scripted session"}; others get a short text.
package fakeapi
