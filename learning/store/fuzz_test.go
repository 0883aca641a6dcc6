package store

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadProfile feeds readProfile (decode, then the lifecycle migration)
// any bytes: it returns a profile or an error, never panics, and whatever
// it returns publishes no entry that is not confirmed.
func FuzzReadProfile(f *testing.F) {
	f.Add([]byte(`{"version":3,"entries":[{"id":"a","scope":"project","project":"/r","dimension":"guards","text":"x","count":1,"sessions":["s"],"evidence":[{"session":"s","quote":"x"}]}]}`))
	f.Add([]byte(`{"entries":[{"id":"b","scope":"global","state":"confirmed","confirmed_by":"reinforced","flags":[{"kind":"dangerous","reason":"rm"}],"evidence":[{}]}]}`))
	f.Add([]byte(`{"entries":[{"state":"maybe"}],"forgotten":[{"why":"reject"}]}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "profile.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		p, err := readProfile(path)
		if err != nil {
			return
		}
		for _, project := range []string{"", "/r"} {
			for _, e := range p.Published(project) {
				if e.State != Confirmed {
					t.Fatalf("published an entry in state %q", e.State)
				}
				if e.Danger() != "" && e.ConfirmedBy != ByUser {
					t.Fatalf("published a dangerous entry no user accepted: %+v", e)
				}
			}
			_ = p.Candidates(project)
		}
		_ = p.Validate()
	})
}
