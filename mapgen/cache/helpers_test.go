package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Clear removes the persisted index and maps of root.
func (s Store) Clear(root string) error {
	if s.Dir == "" {
		return nil
	}
	if err := os.RemoveAll(s.dir(root)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("clear index of %s: %w", root, err)
	}
	return nil
}
