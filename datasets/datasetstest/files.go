package datasetstest

import (
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
)

// AppendLine appends line and a newline to the file at path, creating it
// if need be: how tests add a bad line to a copy of a builder's fixtures
// (see SourceDir).
func AppendLine(t testing.TB, path, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
}

// CopyFixtures copies the fixtures/ directory of the test's package to a
// fresh directory (SourceDir), lets edit change the copy when it is set,
// and returns the copy's path.
func CopyFixtures(t testing.TB, edit func(dir string)) string {
	t.Helper()
	dir := SourceDir(t, "fixtures", nil)
	if edit != nil {
		edit(dir)
	}
	return dir
}

// ServeDir serves the files of dir over real HTTP until the test ends and
// returns the server's URL: a source that cannot be listed.
func ServeDir(t testing.TB, dir string) string {
	t.Helper()
	hs := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(hs.Close)
	return hs.URL
}

// DiskAndHTTP returns dir as two sources of the same files: the folder
// itself and its ServeDir URL (with a trailing slash).
func DiskAndHTTP(t testing.TB, dir string) []string {
	t.Helper()
	return []string{dir, ServeDir(t, dir) + "/"}
}
