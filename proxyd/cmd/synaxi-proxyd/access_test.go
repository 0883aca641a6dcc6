package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"io/fs"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/proxyinfo"
	"github.com/synaxi/synaxi/internal/xdg"
)

const (
	apiKey    = "sk-ant-api03-CLIENTSECRETKEY"
	oauth     = "sk-ant-oat01-CLIENTOAUTHSECRET"
	teamToken = "0123456789abcdef0123456789abcdef"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

func TestTokenFileChecked(t *testing.T) {
	isolate(t)
	for content, want := range map[string]string{
		"tiny-tok\n":                 "shorter than 16 characters",
		"0123456789abcdef 0123456\n": "holds whitespace",
	} {
		code, _, errOut := runCmd(t, "serve", "--token-file", writeFile(t, "token", content))
		assert.Equal(t, 2, code)
		assert.Contains(t, errOut, want)
		assert.NotContains(t, errOut, strings.TrimSpace(content), "the token is never printed")
	}
	code, _, errOut := runCmd(t, "serve", "--token-file", "/nonexistent/token")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--token-file")
	code, _, errOut = runCmd(t, "serve", "--tls-cert", "/nonexistent/cert.pem")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "tls_cert and tls_key go together")
}

// serveBG runs `serve args…` in the background until the test ends and
// returns its address and a function that reads its log so far.
func serveBG(t *testing.T, args ...string) (addr string, logs func() string) {
	t.Helper()
	d := xdg.Resolve()
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var errb bytes.Buffer
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return errb.Write(p) })
	done := make(chan int, 1)
	go func() { done <- run(ctx, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...), io.Discard, w) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop")
		}
	})
	require.Eventually(t, func() bool {
		info, err := proxyinfo.Read(d)
		if err == nil {
			addr = info.Addr
		}
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)
	return addr, func() string { mu.Lock(); defer mu.Unlock(); return errb.String() }
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// With a token: a request without it gets 401 and never reaches the
// upstream; with it, it is forwarded without the token and with the
// client's credentials. No log line and no state file written during the
// run holds a credential or the token.
func TestTeamTokenServe(t *testing.T) {
	d := isolate(t)
	var hits atomic.Int64
	var leaked atomic.Value
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("X-Synaxi-Token") != "" || r.Header.Get("X-Api-Key") != apiKey {
			leaked.Store(r.URL.Path)
		}
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/messages/count_tokens" {
			_, _ = io.WriteString(w, `{"input_tokens":7}`)
			return
		}
		_, _ = io.WriteString(w, `{"id":"msg_1","type":"message","model":"claude-sonnet-4-6","usage":{"input_tokens":1,"output_tokens":2}}`)
	}))
	defer up.Close()
	addr, logs := serveBG(t, "--upstream", up.URL, "--token-file", writeFile(t, "token", teamToken+"\n"),
		"--project-all", "--log-conversations", "--log-level", "debug")
	post := func(token string) int {
		req, _ := http.NewRequest("POST", "http://"+addr+"/v1/messages?beta=true",
			strings.NewReader(`{"model":"claude-sonnet-4-6","max_tokens":32000,"tools":[{"name":"Read"}],"messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("X-Api-Key", apiKey)
		req.Header.Set("Authorization", "Bearer "+oauth)
		req.Header.Set("X-Claude-Code-Session-Id", "s1")
		if token != "" {
			req.Header.Set("X-Synaxi-Token", token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, 401, post(""))
	assert.Equal(t, 401, post("wrong-token-wrong-token-wrong"))
	assert.Equal(t, int64(0), hits.Load(), "an unauthorized request never reaches the upstream")
	assert.Equal(t, 200, post(teamToken))
	require.Eventually(t, func() bool { return hits.Load() == 2 }, 10*time.Second, 10*time.Millisecond, "the request and its probe")
	assert.Nil(t, leaked.Load(), "the upstream saw the token, or not the client's key")

	// Every state file and the log.
	time.Sleep(200 * time.Millisecond) // the row is written beside the response
	var files int
	require.NoError(t, filepath.WalkDir(d.State, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		files++
		for _, secret := range []string{apiKey, oauth, teamToken, "wrong-token", "CLIENTSECRET", "Bearer"} {
			assert.NotContains(t, string(b), secret, path)
		}
		return nil
	}))
	assert.GreaterOrEqual(t, files, 3, "ledger, conversation log and record were written")
	for _, secret := range []string{apiKey, oauth, teamToken, "wrong-token", "CLIENTSECRET", "Bearer"} {
		assert.NotContains(t, logs(), secret)
	}
	assert.Contains(t, logs(), "unauthorized request")
}

func TestTLS(t *testing.T) {
	isolate(t)
	certPEM, keyPEM := selfSigned(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "upstream")
	}))
	defer up.Close()
	addr, _ := serveBG(t, "--upstream", up.URL, "--tls-cert", writeFile(t, "cert.pem", certPEM), "--tls-key", writeFile(t, "key.pem", keyPEM))
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM([]byte(certPEM)))
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := c.Get("https://" + addr + "/v1/models")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, "upstream", string(body))
}

func selfSigned(t *testing.T) (certPEM, keyPEM string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "synaxi test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}))
}
