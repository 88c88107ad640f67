package datasetstest

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/benchline/benchline/datasets"
)

// UTF8Enforced says whether builders reject invalid UTF-8 before writing
// (issue #11, finding 3: datasets.EachLine and CheckRows do). When true,
// CheckSource requires every string of an accepted source's rows to be
// valid UTF-8.
var UTF8Enforced = true

// SourceDir copies the regular files under dir (a builder's fixtures) to a
// fresh temporary directory, then writes each of files (a slash-separated
// name below the directory, to its content) over the copy, and returns the
// directory: the source of one fuzzed build.
func SourceDir(t testing.TB, dir string, files map[string][]byte) string {
	t.Helper()
	out := t.TempDir()
	if dir != "" {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return writeFile(filepath.Join(out, rel), b)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for name, b := range files {
		if err := writeFile(filepath.Join(out, filepath.FromSlash(name)), b); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func writeFile(p string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, b, 0o644)
}

// FixtureFile reads the file name of the fixtures/ directory of the test's
// package, whole and as lines (each with its newline), to seed a fuzz
// target with.
func FixtureFile(f *testing.F, name string) ([]byte, [][]byte) {
	f.Helper()
	b, err := os.ReadFile(filepath.Join("fixtures", name))
	if err != nil {
		f.Fatal(err)
	}
	return b, bytes.SplitAfter(b, []byte("\n"))
}

// FuzzFile fuzzes b on a copy of the package's fixtures in which the
// fuzzer's input replaces the file name (SourceDir), checking every build
// with CheckSource.
func FuzzFile[T any](f *testing.F, b datasets.Builder, name string) {
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := SourceDir(t, "fixtures", map[string][]byte{name: data})
		CheckSource[T](t, b, datasets.Request{Source: dir})
	})
}

// CheckSource is the body of a builder's fuzz target: it builds req with b
// (see Build) and checks what a build of outside input must guarantee.
// Either Plan fails with a *datasets.InputError naming a file (bad input,
// which stops a build without retrying), or every planned part writes the
// planned number of rows and reads back; with UTF8Enforced, every string
// of those rows is also valid UTF-8. Any other error, a panic or a part
// that fails to write after Plan accepted the input fails t.
func CheckSource[T any](t *testing.T, b datasets.Builder, req datasets.Request) {
	t.Helper()
	_, rows, err := Build[T](t, b, req, nil)
	if err != nil {
		var ie *datasets.InputError
		if !errors.As(err, &ie) {
			t.Fatalf("Plan failed with %T, not *datasets.InputError (bad input would be retried): %v", err, err)
		}
		if ie.File == "" {
			t.Fatalf("InputError names no file: %v", err)
		}
		return
	}
	if !UTF8Enforced {
		return
	}
	for i, r := range rows {
		if field, ok := invalidUTF8(reflect.ValueOf(r)); ok {
			t.Fatalf("row %d: field %s is not valid UTF-8, and the build accepted it", i, field)
		}
	}
}

// invalidUTF8 finds a string field of v (a struct, or a pointer to a
// string) that is not valid UTF-8.
func invalidUTF8(v reflect.Value) (string, bool) {
	switch v.Kind() {
	case reflect.String:
		return "", !utf8.ValidString(v.String())
	case reflect.Pointer:
		if v.IsNil() {
			return "", false
		}
		return invalidUTF8(v.Elem())
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			if sub, bad := invalidUTF8(v.Field(i)); bad {
				name := v.Type().Field(i).Name
				if sub != "" {
					name += "." + sub
				}
				return name, true
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if sub, bad := invalidUTF8(v.Index(i)); bad {
				return sub, true
			}
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			if _, bad := invalidUTF8(iter.Key()); bad {
				return "map key", true
			}
			if sub, bad := invalidUTF8(iter.Value()); bad {
				return sub, true
			}
		}
	}
	return "", false
}
