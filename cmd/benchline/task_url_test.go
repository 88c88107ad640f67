package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
)

// TestTaskCheckURL: task check reads a task file at an http URL and its
// data from the URL's folder through
// the source layer, scores given replies, and a missing data file fails
// naming its URL.
func TestTaskCheckURL(t *testing.T) {
	files := map[string]string{
		"/tasks/exact/task.yaml": `name: capitals
description: capitals
data: {test: {path: data/rows.jsonl}}
columns: {id: id, target: capital}
prompt:
  messages: [{role: user, content: "Capital of {{ country }}?"}]
scorers: [{type: exact_match, name: exact, ignore_case: true}]
`,
		"/tasks/exact/data/rows.jsonl": `{"id": "fr", "country": "France", "capital": "Paris"}
{"id": "de", "country": "Germany", "capital": "Berlin"}
`,
		"/tasks/missing/task.yaml": `name: missing
description: its data is not served
data: {test: {path: gone.jsonl}}
columns: {id: id, target: capital}
prompt:
  messages: [{role: user, content: "{{ country }}"}]
scorers: [{type: exact_match}]
`,
	}
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(body))
	}))
	defer srv.Close()
	dir := t.TempDir()
	replies := dir + "/replies.jsonl"
	if err := writeFile(replies, `{"id": "fr", "reply": "paris"}
{"id": "de", "reply": "Munich"}
`); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rep, err := checkTaskFrom(ctx, nil, srv.URL+"/tasks/exact/task.yaml", 3, replies, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Task != "capitals" || rep.Scored != 2 || rep.Means["exact"] != 0.5 {
		t.Fatalf("task %q scored %d, means %v: want capitals, 2 and exact 0.5", rep.Task, rep.Scored, rep.Means)
	}
	if len(rep.Samples) != 2 || !strings.Contains(rep.Samples[0].Messages[0]["content"], "France") {
		t.Errorf("samples %+v: want fr's prompt rendered from the served row", rep.Samples)
	}
	mu.Lock()
	requested := strings.Join(paths, " ")
	mu.Unlock()
	if !strings.Contains(requested, "/tasks/exact/data/rows.jsonl") {
		t.Errorf("requests %v: the data path was not resolved against the task file's folder", paths)
	}
	_, err = checkTaskFrom(ctx, nil, srv.URL+"/tasks/missing/task.yaml", 3, "", nil)
	if err == nil || !strings.Contains(err.Error(), srv.URL+"/tasks/missing/gone.jsonl") {
		t.Errorf("missing data: %v, want an error naming %s/tasks/missing/gone.jsonl", err, srv.URL)
	}
	if _, err := checkTaskFrom(ctx, nil, "ftp://example.com/task.yaml", 3, "", nil); err == nil || !strings.Contains(err.Error(), "ftp://example.com/task.yaml") {
		t.Errorf("ftp URL: %v, want an error naming it", err)
	}
}

func writeFile(path, body string) error { return os.WriteFile(path, []byte(body), 0o644) }
