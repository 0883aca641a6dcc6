package server

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each change the proxy makes to a request on its way upstream has one
// call site (outbound.go's package comment). A second call site of any of
// them, in any file of the package, fails this test; so does moving one.
// The runtime side, one outbound call per request sent upstream, is
// TestOutboundOnce.
func TestRewriteOnce(t *testing.T) {
	sites := callSites(t)
	want := map[string][]string{
		"withModel":           {"outbound"},                           // proxy.upstream_model
		"Del(TokenHeader)":    {"outbound"},                           // the team token
		"Del(ScopeHeader)":    {"outbound"},                           // a launch's scope
		"setBody":             {"outbound"},                           // the body sent
		"SetURL":              {"rewrite"},                            // the upstream's address
		"gate.Run":            {"project"},                            // the projection
		"project":             {"serveMessages"},                      // what is served, decided once
		"outbound":            {"New", "retryOriginal", "rewrite"},    // its three senders
		"sjson.SetBytes":      {"withModel"},                          // the only JSON edit
		"rewrite":             {"New"},                                // the reverse proxy's Rewrite
		"proxy.ServeHTTP":     {"forward"},                            // the one way into the reverse proxy
		"Transport.RoundTrip": {"retryOriginal", "upstreamReachable"}, // the sends around it (/readyz's HEAD carries nothing of a client's)
	}
	for call, fns := range want {
		assert.Equal(t, fns, sites[call], "call sites of %s", call)
	}
}

// callSites maps each call of interest to the functions calling it, sorted,
// one entry per call.
func callSites(t *testing.T) map[string][]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	out := map[string][]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		f, err := parser.ParseFile(fset, name, src, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if k := callName(call); k != "" {
					out[k] = append(out[k], fn.Name.Name)
				}
				return true
			})
			// A method value handed over (Rewrite: s.rewrite) is a call site too.
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				kv, ok := n.(*ast.KeyValueExpr)
				if !ok {
					return true
				}
				if sel, ok := kv.Value.(*ast.SelectorExpr); ok && sel.Sel.Name == "rewrite" {
					out["rewrite"] = append(out["rewrite"], fn.Name.Name)
				}
				return true
			})
		}
	}
	for _, k := range slices.Collect(maps.Keys(out)) {
		slices.Sort(out[k])
	}
	return out
}

func callName(call *ast.CallExpr) string {
	switch f := call.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		name := f.Sel.Name
		switch x := f.X.(type) {
		case *ast.Ident:
			if x.Name == "gate" || x.Name == "sjson" {
				return x.Name + "." + name
			}
		case *ast.SelectorExpr:
			if name == "ServeHTTP" && x.Sel.Name == "proxy" || name == "RoundTrip" && x.Sel.Name == "Transport" {
				return x.Sel.Name + "." + name
			}
		}
		if name == "Del" && len(call.Args) == 1 {
			if id, ok := call.Args[0].(*ast.Ident); ok && id.Name == "TokenHeader" {
				return "Del(TokenHeader)"
			}
			if sel, ok := call.Args[0].(*ast.SelectorExpr); ok && sel.Sel.Name == "ScopeHeader" {
				return "Del(ScopeHeader)"
			}
		}
		switch name {
		case "withModel", "setBody", "SetURL", "project", "outbound":
			return name
		}
	}
	return ""
}
