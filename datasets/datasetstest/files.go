package datasetstest

import (
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
