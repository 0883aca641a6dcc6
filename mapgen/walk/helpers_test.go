package walk

import (
	"context"
	"os"
)

// Walk returns the files under root, sorted by path, that accept admits
// (typically by extension) and that no ignore rule, skipped directory or
// outward symbolic link excludes, reading git's global excludes file through
// the process environment. (tests; the index calls Scan).
func Walk(ctx context.Context, root Root, accept func(rel string) bool) (files []File, truncated bool, err error) {
	res, err := Scan(ctx, root, accept, os.Getenv)
	return res.Files, res.Truncated, err
}
