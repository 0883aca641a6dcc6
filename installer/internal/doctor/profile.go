package doctor

import (
	"context"
	"errors"
	"fmt"

	"github.com/synaxi/synaxi/learning/store"
)

// checkProfile reads the learned profile and, when profile.json is
// damaged, names the one command that restores it.
func checkProfile(_ context.Context, f *facts) Check {
	const name = "learned profile"
	s := store.Open(store.Dir(f.d))
	p, err := s.Load()
	switch {
	case errors.Is(err, store.ErrDamaged):
		good, gerr := s.LastGood()
		if gerr != nil || good == 0 {
			return fails(name, err.Error()+"; no saved version reads",
				"synaxi profile reset (starts afresh; the damaged file is kept beside it)")
		}
		return fails(name, err.Error(),
			fmt.Sprintf("synaxi profile rollback (restores v%d, the last good version; the damaged file is kept beside it)", good))
	case err != nil:
		return fails(name, err.Error(), "make "+s.Path()+" readable")
	}
	return pass(name, fmt.Sprintf("v%d, %d entries", p.Version, len(p.Entries)))
}
