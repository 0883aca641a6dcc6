// Package chatapi sends the one-shot requests of synaxi's opt-in model
// features (the learning loop's API extractors, the guidance renderer) to
// a model endpoint: the Anthropic Messages API or an OpenAI-compatible
// chat completions endpoint (Ollama, llama.cpp, vLLM, …).
//
// Invariants: a request is one POST of JSON with the caller's headers; an
// answer is read up to MaxAnswerBytes; a status outside 2xx is an error
// naming the endpoint and quoting the end of its answer; an answer that is
// not JSON of the expected shape is an error wrapping ErrBadAnswer. Keys
// are sent only in the headers the caller gives and never appear in an
// error.
package chatapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// MaxAnswerBytes bounds the answer read from an endpoint.
const MaxAnswerBytes = 8 << 20

// ErrBadAnswer reports an answer that is not JSON of the expected shape.
var ErrBadAnswer = errors.New("the endpoint's answer is not in the expected shape")

// PostJSON posts body as JSON to url with the headers in hdr and decodes
// a 2xx answer into out.
func PostJSON(ctx context.Context, c *http.Client, url string, hdr map[string]string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("endpoint %s: %w", url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("endpoint %s: %w", url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswerBytes))
	if err != nil {
		return fmt.Errorf("endpoint %s: read the answer: %w", url, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("endpoint %s: HTTP %d: %s", url, resp.StatusCode, strings.TrimSpace(tail(string(data), 300)))
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%w: endpoint %s: not JSON: %v", ErrBadAnswer, url, err)
	}
	return nil
}

// tail is the last n bytes of s, marked when cut.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// OpenAI is an OpenAI-compatible chat completions endpoint.
type OpenAI struct {
	// Endpoint is the base URL (…/v1); Key, if set, is sent as a bearer
	// token.
	Endpoint, Model, Key string
	// JSONObject asks for a JSON object answer (response_format).
	JSONObject bool
	Client     *http.Client
}

// Chat sends one system and one user message, at temperature 0, and
// returns the first choice's text.
func (o *OpenAI) Chat(ctx context.Context, system, user string) (string, error) {
	body := map[string]any{
		"model": o.Model, "temperature": 0, "stream": false,
		"messages": []map[string]string{{"role": "system", "content": system}, {"role": "user", "content": user}},
	}
	if o.JSONObject {
		body["response_format"] = map[string]string{"type": "json_object"}
	}
	hdr := map[string]string{}
	if o.Key != "" {
		hdr["Authorization"] = "Bearer " + o.Key
	}
	var resp struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	url := strings.TrimRight(o.Endpoint, "/") + "/chat/completions"
	if err := PostJSON(ctx, o.Client, url, hdr, body, &resp); err != nil {
		return "", err
	}
	if len(resp.Choices) == 0 {
		return "", fmt.Errorf("%w: endpoint %s answered no choices, unlike an OpenAI-compatible chat endpoint", ErrBadAnswer, url)
	}
	return resp.Choices[0].Message.Content, nil
}
