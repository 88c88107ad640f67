package reporteval

import "testing"

func TestFileID(t *testing.T) {
	// md5 of "" and of "abc", as listed in RFC 1321's test suite.
	for topic, want := range map[string]string{
		"":    "d41d8cd98f00b204e9800998ecf8427e",
		"abc": "900150983cd24fb0d6963f7d28e17f72",
	} {
		if got := FileID(topic); got != want {
			t.Errorf("FileID(%q) = %s, want %s", topic, got, want)
		}
	}
}
