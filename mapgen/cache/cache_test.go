package cache

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/mapgen/symbols"
)

func TestDir(t *testing.T) {
	d := xdg.Dirs{Cache: "/x/cache/synaxi"}
	assert.Equal(t, "/x/cache/synaxi/mapgen", Dir(d))
}

// fill sets every field reachable from v to a non-zero value derived from
// seed, so a codec that forgets a field fails the round trip.
func fill(v reflect.Value, seed int) { fillDepth(v, seed, 0) }

func fillDepth(v reflect.Value, seed, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d·", seed))
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(seed + 1))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Struct:
		for i := range v.NumField() {
			fillDepth(v.Field(i), seed*7+i, depth)
		}
	case reflect.Slice:
		n := 2
		if depth > 2 { // bound recursion (Def.Children); decoding gives nil
			return
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fillDepth(s.Index(i), seed*3+i+100, depth+1)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for i := range 3 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(k, seed+i)
			fill(e, seed+i)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	default:
		panic(fmt.Sprintf("fill: add a case for %s (and write the new field in codec.go)", v.Kind()))
	}
}

func TestCodecWritesEveryField(t *testing.T) {
	var f symbols.File
	fill(reflect.ValueOf(&f).Elem(), 1)
	require.NotEmpty(t, f.Defs[0].Children, "the fill reaches nested definitions")
	var e enc
	encodeFile(&e, &f)
	d := &dec{b: e.b}
	got := decodeFile(d, true)
	require.NoError(t, d.err)
	assert.Empty(t, d.b)
	assert.Equal(t, f, got)
}

func sampleData(root string) *Data {
	return &Data{
		Meta: Meta{
			Root: root, Built: 1e18, Unparsed: map[string]int{"rust": 2},
			Sources: []Source{{Path: "/x/.gitignore", Exists: true, Size: 3, ModTime: 5}, {Path: "/y/.gitignore"}},
			Dirs:    []DirStamp{{Rel: "", ModTime: 7}, {Rel: "a", ModTime: 8}},
			Files: []FileStamp{
				{Rel: "a/x.go", Size: 10, ModTime: 9, Hash: [32]byte{1}},
				{Rel: "a/y.go", Size: 11, ModTime: 9, Hash: [32]byte{2}, Skip: true},
				{Rel: "b.go", Size: 12, ModTime: 9, Hash: [32]byte{3}},
			},
		},
		Parsed: []symbols.File{
			{Lang: "go", Package: "a", Lines: 3, Defs: []symbols.Def{{Name: "T", Kind: "type", Start: 1, End: 3,
				Children: []symbols.Def{{Name: "M", Kind: "method", Start: 2, End: 2}}}}, Refs: map[string]int{"fmt.Println": 2, "Q": 1}},
			{},
			{Lang: "go", Package: "b", Lines: 1, Defs: []symbols.Def{{Name: "Q", Kind: "func", Start: 1, End: 1}}, Refs: map[string]int{".M": 1}},
		},
	}
}

func TestSaveLoad(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	_, ok := s.Load("/repo")
	assert.False(t, ok, "nothing saved yet")
	d := sampleData("/repo")
	require.NoError(t, s.Save(d))

	snap, ok := s.Load("/repo")
	require.True(t, ok)
	assert.Equal(t, d.Meta, snap.Meta)
	assert.Equal(t, d.ID(), snap.ID)
	for i := range d.Files {
		f, err := snap.File(i)
		require.NoError(t, err)
		assert.Equal(t, d.Parsed[i], f, d.Files[i].Rel)
	}
	require.NoError(t, snap.LoadAll())
	f, err := snap.File(2)
	require.NoError(t, err)
	assert.Equal(t, d.Parsed[2], f)

	assert.Equal(t, []int{0}, snap.DefinedIn("T"))
	assert.Equal(t, []int{0}, snap.DefinedIn("M"), "nested definitions are listed")
	assert.Equal(t, []int{2}, snap.DefinedIn("Q"))
	assert.Nil(t, snap.DefinedIn("Nope"))
	assert.Equal(t, []int{0}, snap.ReferencedIn("Println"))
	assert.Equal(t, []int{0}, snap.ReferencedIn("Q"))
	assert.Equal(t, []int{2}, snap.ReferencedIn("M"))

	_, ok = s.Load("/other")
	assert.False(t, ok, "another root has its own index")

	st, err := os.Stat(s.indexPath("/repo"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
}

func TestDamagedOrForeignIndexIsAMiss(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	require.NoError(t, s.Save(sampleData("/repo")))
	good, err := os.ReadFile(s.indexPath("/repo"))
	require.NoError(t, err)
	cases := map[string][]byte{
		"empty":     {},
		"truncated": good[:len(good)-5],
		"longer":    append(append([]byte{}, good...), 0),
		"magic":     append([]byte("X"), good[1:]...),
		"format":    append(append([]byte(magic), 99), good[len(magic)+1:]...),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(s.indexPath("/repo"), data, 0o600))
			_, ok := s.Load("/repo")
			assert.False(t, ok)
		})
	}
}

func FuzzReadIndex(f *testing.F) {
	s := Store{Dir: f.TempDir()}
	require.NoError(f, s.Save(sampleData("/repo")))
	good, err := os.ReadFile(s.indexPath("/repo"))
	require.NoError(f, err)
	f.Add(good)
	f.Add(good[:len(good)/2])
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "index")
		require.NoError(t, os.WriteFile(p, data, 0o600))
		fh, err := os.Open(p)
		require.NoError(t, err)
		defer fh.Close()
		snap, err := readIndex(fh)
		if err != nil {
			return
		}
		for i := range snap.Files {
			_, _ = snap.File(i) // errors are fine; panics are not
		}
		snap.DefinedIn("T")
		snap.ReferencedIn("M")
	})
}

// TestConcurrentSavesNeverTear saves two different indexes from many
// goroutines while others load: every load sees one of them whole.
func TestConcurrentSavesNeverTear(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	a, b := sampleData("/repo"), sampleData("/repo")
	b.Files = b.Files[:2]
	b.Parsed = b.Parsed[:2]
	require.NoError(t, s.Save(a))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 10 {
				d := a
				if i%2 == 1 {
					d = b
				}
				assert.NoError(t, s.Save(d))
			}
		})
		wg.Go(func() {
			for range 20 {
				snap, ok := s.Load("/repo")
				if !assert.True(t, ok) {
					return
				}
				assert.Contains(t, []string{a.ID(), b.ID()}, snap.ID)
				for j := range snap.Files {
					_, err := snap.File(j)
					assert.NoError(t, err)
				}
			}
		})
	}
	wg.Wait()
}

func TestMaps(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	assert.Nil(t, s.Maps("/repo", "id1"))
	require.NoError(t, s.PutMap("/repo", "id1", "k1", json.RawMessage(`{"a":1}`)))
	require.NoError(t, s.PutMap("/repo", "id1", "k2", json.RawMessage(`{"a":2}`)))
	assert.Len(t, s.Maps("/repo", "id1"), 2)
	assert.Nil(t, s.Maps("/repo", "id2"), "maps of other content are not served")
	require.NoError(t, s.PutMap("/repo", "id2", "k1", json.RawMessage(`{"a":3}`)))
	assert.Equal(t, map[string]json.RawMessage{"k1": json.RawMessage(`{"a":3}`)}, s.Maps("/repo", "id2"))
	for i := range MaxMaps + 1 {
		require.NoError(t, s.PutMap("/repo", "id2", fmt.Sprint(i), json.RawMessage(`1`)))
	}
	assert.LessOrEqual(t, len(s.Maps("/repo", "id2")), MaxMaps)
	require.NoError(t, s.Clear("/repo"))
	assert.Nil(t, s.Maps("/repo", "id2"))
}
