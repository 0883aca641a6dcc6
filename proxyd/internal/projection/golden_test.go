package projection

import (
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/proxyd/internal/projection/validate"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func recordedWorker(t *testing.T) [][]byte {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "worker-survey.jsonl.gz"))
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 64<<20)
	var out [][]byte
	for sc.Scan() {
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	require.NoError(t, sc.Err())
	return out
}

// TestRecordedWorkerCacheStability is the golden cache-stability test on a
// worker conversation recorded from the real client through the proxy:
// every request projects to a valid request; request n+1 re-serves request
// n's messages byte-identical (cache_control aside) except the previous
// current turn, and except at re-projection points; a fresh engine (a
// restarted proxy) serves the same bytes; the bytes match the golden file.
func TestRecordedWorkerCacheStability(t *testing.T) {
	bodies := recordedWorker(t)
	require.GreaterOrEqual(t, len(bodies), 20)
	for _, budget := range []int{8000, 0} {
		t.Run(fmt.Sprint("budget=", budget), func(t *testing.T) {
			cfg := Config{BudgetTokens: budget, AlwaysEngage: true}
			var prev []byte
			var digests []string
			reprojections := 0
			warm := New(cfg)
			for i, body := range bodies {
				require.NoError(t, validate.Request(body), "recorded request %d", i)
				r, err := warm.ProjectBody(context.Background(), body, "")
				require.NoError(t, err)
				require.NoError(t, validate.Request(r.Body), "request %d", i)
				again, err := New(cfg).ProjectBody(context.Background(), body, "")
				require.NoError(t, err)
				require.Equal(t, string(r.Body), string(again.Body), "request %d after a restart", i)
				if r.Reprojected {
					reprojections++
				} else if prev != nil {
					assert.Equal(t, -1, validate.PrefixBreak(prev, r.Body), "request %d: unsanctioned prefix change", i)
				}
				prev = r.Body
				h := sha256.Sum256(r.Body)
				digests = append(digests, fmt.Sprintf("%s reprojected=%v breakpoints=%d", hex.EncodeToString(h[:8]), r.Reprojected, r.Breakpoints))
			}
			if budget == 8000 {
				assert.Positive(t, reprojections, "a working set over the budget re-projects")
				assert.Less(t, reprojections, len(bodies)/3, "re-projection is rare")
			}
			golden := filepath.Join("testdata", fmt.Sprintf("worker-survey-%d.golden", budget))
			got := strings.Join(digests, "\n") + "\n"
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run with -update to create it")
			assertGolden(t, string(want), got)
		})
	}
}

// assertGolden reports the first request whose served bytes differ from
// the golden file.
func assertGolden(t *testing.T, want, got string) {
	t.Helper()
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		if i >= len(w) || i >= len(g) || w[i] != g[i] {
			t.Errorf("served bytes differ from the golden file from request %d on (%d vs %d lines); if intended, run with -update", i, len(g), len(w))
			return
		}
	}
}
