package chatapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOpenAIChat(t *testing.T) {
	var got map[string]any
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/v1/chat/completions", r.URL.Path)
		auth = r.Header.Get("Authorization")
		b, _ := io.ReadAll(r.Body)
		got = nil
		require.NoError(t, json.Unmarshal(b, &got))
		w.Write([]byte(`{"choices":[{"message":{"content":"hello"}}]}`))
	}))
	defer srv.Close()
	api := OpenAI{Endpoint: srv.URL + "/v1/", Model: "m", Key: "sk-secret", JSONObject: true, Client: srv.Client()}
	out, err := api.Chat(context.Background(), "sys", "usr")
	require.NoError(t, err)
	assert.Equal(t, "hello", out)
	assert.Equal(t, "Bearer sk-secret", auth)
	assert.Equal(t, map[string]any{"type": "json_object"}, got["response_format"])
	assert.Equal(t, "m", got["model"])
	assert.Len(t, got["messages"], 2)

	api.Key, api.JSONObject = "", false
	_, err = api.Chat(context.Background(), "sys", "usr")
	require.NoError(t, err)
	assert.Empty(t, auth, "no key, no header")
	assert.NotContains(t, got, "response_format")
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name, answer string
		status       int
		bad          bool
		contains     string
	}{
		{"status", "overloaded", 529, false, "HTTP 529: overloaded"},
		{"not JSON", "<html>", 200, true, "not JSON"},
		{"no choices", `{"choices":[]}`, 200, true, "no choices"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				w.Write([]byte(tc.answer))
			}))
			defer srv.Close()
			api := OpenAI{Endpoint: srv.URL, Model: "m", Key: "sk-secret", Client: srv.Client()}
			_, err := api.Chat(context.Background(), "sys", "usr")
			require.Error(t, err)
			assert.Equal(t, tc.bad, errors.Is(err, ErrBadAnswer), err.Error())
			assert.ErrorContains(t, err, tc.contains)
			assert.NotContains(t, err.Error(), "sk-secret", "a key never appears in an error")
		})
	}
}
