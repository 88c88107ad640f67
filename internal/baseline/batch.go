package baseline

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/benchline/benchline/internal/modelapi"
)

// BatchOptions configures the server's files and batches endpoints (the
// OpenAI Batch API: POST /v1/files, GET /v1/files/{id}/content, POST
// /v1/batches, GET /v1/batches[/{id}], POST /v1/batches/{id}/cancel).
// A batch answers every line as a chat completion would (without the
// interactive Faults) once Delay has passed since it was created.
type BatchOptions struct {
	// Delay is how long a batch stays in_progress [0: answered at the
	// first poll].
	Delay time.Duration
	// Expire is the share of batches that end "expired" with every line
	// in the error file (batch_expired) instead of answering.
	Expire float64
	// Never is the share of batches that never complete (they stay
	// in_progress until cancelled).
	Never float64
	// FailLines is the share of lines answered in the error file with a
	// 500; the draw depends on the line's custom_id only, so the same
	// request fails again in a later batch.
	FailLines float64
	// MaxFileBytes bounds an upload [200 MB]; MaxFiles the files held
	// [10000] and MaxHeldBytes their bytes [1 GiB] (older files are
	// dropped first, so a long-lived dev stack's memory does not grow with
	// the batches it has answered).
	MaxFileBytes int64
	MaxFiles     int
	MaxHeldBytes int64
}

// ParseBatchOptions parses "delay=2s,expire=0.1,never=0.05,fail_lines=0.02".
func ParseBatchOptions(s string) (BatchOptions, error) {
	var o BatchOptions
	err := eachKV("batch options", "delay, expire, never, fail_lines", s, func(k, v string) (err error) {
		switch k {
		case "delay":
			o.Delay, err = time.ParseDuration(v)
		case "expire":
			o.Expire, err = strconv.ParseFloat(v, 64)
		case "never":
			o.Never, err = strconv.ParseFloat(v, 64)
		case "fail_lines":
			o.FailLines, err = strconv.ParseFloat(v, 64)
		default:
			return errUnknownKey
		}
		return err
	})
	if err != nil {
		return BatchOptions{}, err
	}
	return o, o.Validate()
}

// Validate checks the shares.
func (o BatchOptions) Validate() error {
	for _, f := range []float64{o.Expire, o.Never, o.FailLines} {
		if f < 0 || f > 1 {
			return fmt.Errorf("baseline: batch shares must be within [0, 1], got %v", f)
		}
	}
	if o.Expire+o.Never > 1 {
		return fmt.Errorf("baseline: batch expire + never = %v exceeds 1", o.Expire+o.Never)
	}
	if o.Delay < 0 || o.MaxFileBytes < 0 || o.MaxFiles < 0 || o.MaxHeldBytes < 0 {
		return fmt.Errorf("baseline: batch delay and limits must not be negative")
	}
	return nil
}

// BatchStats counts the batch endpoints' work.
type BatchStats struct {
	Files      int64 // uploads
	Created    int64 // batches created
	Lines      int64 // lines answered (output or error file)
	Cancelled  int64 // batches cancelled
	MaxPerKey  int   // most batches created with one benchline_key (1: none twice)
	Duplicates int   // keys with more than one batch
}

type batchFile struct {
	id      string
	name    string
	purpose string
	data    []byte
	created int64
}

type batchJob struct {
	ID               string         `json:"id"`
	Object           string         `json:"object"`
	Endpoint         string         `json:"endpoint"`
	InputFileID      string         `json:"input_file_id"`
	CompletionWindow string         `json:"completion_window"`
	Status           string         `json:"status"`
	OutputFileID     *string        `json:"output_file_id"`
	ErrorFileID      *string        `json:"error_file_id"`
	CreatedAt        int64          `json:"created_at"`
	CompletedAt      *int64         `json:"completed_at,omitempty"`
	ExpiredAt        *int64         `json:"expired_at,omitempty"`
	CancelledAt      *int64         `json:"cancelled_at,omitempty"`
	RequestCounts    batchCounts    `json:"request_counts"`
	Metadata         map[string]any `json:"metadata"`

	created time.Time
	fate    string // "", "expire" or "never"
}

type batchCounts struct {
	Total     int `json:"total"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
}

// batches is the server's batch state.
type batches struct {
	mu      sync.Mutex
	files   map[string]*batchFile
	order   []string // file ids, oldest first
	held    int64    // the files' bytes
	jobs    map[string]*batchJob
	jobIDs  []string // oldest first
	perKey  map[string]int
	next    int64
	stats   BatchStats
	working map[string]bool // batches being answered
}

func (s *Server) routeBatches() {
	s.b = &batches{files: map[string]*batchFile{}, jobs: map[string]*batchJob{}, perKey: map[string]int{}, working: map[string]bool{}}
	if s.opts.Batch.MaxFileBytes == 0 {
		s.opts.Batch.MaxFileBytes = 200_000_000
	}
	if s.opts.Batch.MaxFiles == 0 {
		s.opts.Batch.MaxFiles = 10000
	}
	if s.opts.Batch.MaxHeldBytes == 0 {
		s.opts.Batch.MaxHeldBytes = 1 << 30
	}
	s.mux.HandleFunc("POST /v1/files", s.uploadFile)
	s.mux.HandleFunc("GET /v1/files/{id}", s.getFile)
	s.mux.HandleFunc("GET /v1/files/{id}/content", s.fileContent)
	s.mux.HandleFunc("POST /v1/batches", s.createBatch)
	s.mux.HandleFunc("GET /v1/batches", s.listBatches)
	s.mux.HandleFunc("GET /v1/batches/{id}", s.getBatch)
	s.mux.HandleFunc("POST /v1/batches/{id}/cancel", s.cancelBatch)
}

// BatchStats returns the batch counters.
func (s *Server) BatchStats() BatchStats {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	st := s.b.stats
	for _, n := range s.b.perKey {
		st.MaxPerKey = max(st.MaxPerKey, n)
		if n > 1 {
			st.Duplicates++
		}
	}
	return st
}

func (b *batches) id(prefix string) string {
	b.next++
	return fmt.Sprintf("%s-%d", prefix, b.next)
}

// addFile stores data as a new file, dropping the oldest files while more
// than maxFiles or maxBytes are held (never the new one); the caller holds
// b.mu.
func (b *batches) addFile(name, purpose string, data []byte, maxFiles int, maxBytes int64) *batchFile {
	f := &batchFile{id: b.id("file-baseline"), name: name, purpose: purpose, data: data, created: time.Now().Unix()}
	b.files[f.id] = f
	b.order = append(b.order, f.id)
	b.held += int64(len(data))
	for len(b.order) > 1 && (len(b.order) > maxFiles || b.held > maxBytes) {
		if old := b.files[b.order[0]]; old != nil {
			b.held -= int64(len(old.data))
		}
		delete(b.files, b.order[0])
		b.order = b.order[1:]
	}
	return f
}

func fileJSON(f *batchFile) map[string]any {
	return map[string]any{"id": f.id, "object": "file", "bytes": len(f.data), "created_at": f.created,
		"filename": f.name, "purpose": f.purpose, "status": "processed"}
}

func (s *Server) uploadFile(w http.ResponseWriter, r *http.Request) {
	limit := s.opts.Batch.MaxFileBytes
	r.Body = http.MaxBytesReader(w, r.Body, limit+1<<20)
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "", "baseline: upload: "+err.Error())
		return
	}
	file, hdr, err := r.FormFile("file")
	if err != nil {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "", "baseline: upload: no file part: "+err.Error())
		return
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, limit+1))
	if err != nil || int64(len(data)) > limit {
		s.fail(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "", fmt.Sprintf("baseline: upload exceeds %d bytes", limit))
		return
	}
	s.b.mu.Lock()
	f := s.b.addFile(hdr.Filename, r.FormValue("purpose"), data, s.opts.Batch.MaxFiles, s.opts.Batch.MaxHeldBytes)
	s.b.stats.Files++
	s.b.mu.Unlock()
	writeJSON(w, http.StatusOK, fileJSON(f))
}

func (s *Server) file(w http.ResponseWriter, r *http.Request) *batchFile {
	s.b.mu.Lock()
	f := s.b.files[r.PathValue("id")]
	s.b.mu.Unlock()
	if f == nil {
		s.fail(w, http.StatusNotFound, "invalid_request_error", "", "baseline: no file "+r.PathValue("id"))
	}
	return f
}

func (s *Server) getFile(w http.ResponseWriter, r *http.Request) {
	if f := s.file(w, r); f != nil {
		writeJSON(w, http.StatusOK, fileJSON(f))
	}
}

func (s *Server) fileContent(w http.ResponseWriter, r *http.Request) {
	if f := s.file(w, r); f != nil {
		w.Header().Set("Content-Type", "application/jsonl")
		w.Header().Set("Content-Length", strconv.Itoa(len(f.data)))
		_, _ = w.Write(f.data)
	}
}

func (s *Server) createBatch(w http.ResponseWriter, r *http.Request) {
	var req struct {
		InputFileID      string         `json:"input_file_id"`
		Endpoint         string         `json:"endpoint"`
		CompletionWindow string         `json:"completion_window"`
		Metadata         map[string]any `json:"metadata"`
	}
	if !s.decode(w, r, &req) {
		return
	}
	if req.Endpoint != "/v1/chat/completions" {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "", "baseline: batches serve only /v1/chat/completions")
		return
	}
	if d, err := time.ParseDuration(req.CompletionWindow); err != nil || d <= 0 {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "", fmt.Sprintf("baseline: completion_window %q is not a duration", req.CompletionWindow))
		return
	}
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	f := s.b.files[req.InputFileID]
	if f == nil {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "", "baseline: no input file "+req.InputFileID)
		return
	}
	sum := sha256.Sum256(f.data)
	now := time.Now()
	j := &batchJob{ID: s.b.id("batch-baseline"), Object: "batch", Endpoint: req.Endpoint, InputFileID: f.id,
		CompletionWindow: req.CompletionWindow, Status: "in_progress", CreatedAt: now.Unix(), Metadata: req.Metadata,
		created: now, RequestCounts: batchCounts{Total: countLines(f.data)}}
	u := hashOf(fmt.Sprintf("%x", sum), s.opts.Seed, "batch").uniform()
	switch {
	case u < s.opts.Batch.Expire:
		j.fate = "expire"
	case u < s.opts.Batch.Expire+s.opts.Batch.Never:
		j.fate = "never"
	}
	key, _ := req.Metadata["benchline_key"].(string)
	if key == "" {
		key = "file:" + f.id
	}
	s.b.perKey[key]++
	s.b.jobs[j.ID] = j
	s.b.jobIDs = append(s.b.jobIDs, j.ID)
	s.b.stats.Created++
	writeJSON(w, http.StatusOK, j)
}

func (s *Server) listBatches(w http.ResponseWriter, r *http.Request) {
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	if limit <= 0 || limit > 100 {
		limit = 20
	}
	after := r.URL.Query().Get("after")
	s.b.mu.Lock()
	ids := slices.Clone(s.b.jobIDs)
	slices.Reverse(ids) // newest first
	if after != "" {
		if i := slices.Index(ids, after); i >= 0 {
			ids = ids[i+1:]
		}
	}
	more := len(ids) > limit
	ids = ids[:min(limit, len(ids))]
	data := make([]batchJob, 0, len(ids))
	for _, id := range ids {
		data = append(data, *s.b.jobs[id])
	}
	s.b.mu.Unlock()
	out := map[string]any{"object": "list", "data": data, "has_more": more}
	if len(ids) > 0 {
		out["first_id"], out["last_id"] = ids[0], ids[len(ids)-1]
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getBatch(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.b.mu.Lock()
	j := s.b.jobs[id]
	ready := j != nil && j.Status == "in_progress" && j.fate != "never" && time.Since(j.created) >= s.opts.Batch.Delay && !s.b.working[id]
	if ready {
		s.b.working[id] = true
	}
	s.b.mu.Unlock()
	if j == nil {
		s.fail(w, http.StatusNotFound, "invalid_request_error", "", "baseline: no batch "+id)
		return
	}
	if ready {
		s.finishBatch(r.Context(), j)
	}
	s.b.mu.Lock()
	out := *j
	s.b.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) cancelBatch(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	j := s.b.jobs[id]
	if j == nil {
		s.fail(w, http.StatusNotFound, "invalid_request_error", "", "baseline: no batch "+id)
		return
	}
	if j.Status == "in_progress" && !s.b.working[id] {
		f := s.b.files[j.InputFileID]
		var data []byte
		if f != nil {
			data = f.data
		}
		s.endBatchLocked(j, "cancelled", nil, failAll(data, "batch_cancelled", "the batch was cancelled"))
		s.b.stats.Cancelled++
	}
	writeJSON(w, http.StatusOK, *j)
}

// failAll is an error file naming every line of input with code.
func failAll(input []byte, code, msg string) []byte {
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(input))
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		var l struct {
			CustomID string `json:"custom_id"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		b, _ := json.Marshal(map[string]any{"id": "err-" + l.CustomID, "custom_id": l.CustomID, "response": nil,
			"error": map[string]string{"code": code, "message": msg}})
		out.Write(b)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// endBatchLocked stores the output and error files and ends j with
// status; the caller holds s.b.mu.
func (s *Server) endBatchLocked(j *batchJob, status string, output, errs []byte) {
	now := time.Now().Unix()
	j.Status = status
	if len(output) > 0 {
		f := s.b.addFile(j.ID+"-output.jsonl", "batch_output", output, s.opts.Batch.MaxFiles, s.opts.Batch.MaxHeldBytes)
		j.OutputFileID = &f.id
	}
	if len(errs) > 0 {
		f := s.b.addFile(j.ID+"-errors.jsonl", "batch_output", errs, s.opts.Batch.MaxFiles, s.opts.Batch.MaxHeldBytes)
		j.ErrorFileID = &f.id
	}
	j.RequestCounts.Completed = countLines(output)
	j.RequestCounts.Failed = countLines(errs)
	s.b.stats.Lines += int64(j.RequestCounts.Completed + j.RequestCounts.Failed)
	switch status {
	case "completed":
		j.CompletedAt = &now
	case "expired":
		j.ExpiredAt = &now
	case "cancelled":
		j.CancelledAt = &now
	}
}

// finishBatch answers every line of j's input (or expires it).
func (s *Server) finishBatch(ctx context.Context, j *batchJob) {
	s.b.mu.Lock()
	f := s.b.files[j.InputFileID]
	s.b.mu.Unlock()
	var input []byte
	if f != nil {
		input = f.data
	}
	status := "completed"
	var output, errs bytes.Buffer
	if j.fate == "expire" {
		status = "expired"
		errs.Write(failAll(input, "batch_expired", "the batch expired before this request was answered"))
	} else {
		s.answerLines(ctx, input, &output, &errs)
	}
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	delete(s.b.working, j.ID)
	if j.Status == "in_progress" {
		s.endBatchLocked(j, status, output.Bytes(), errs.Bytes())
	}
}

type noFaultsKey struct{}

// answerLines answers each input line through the chat completions
// handler, writing answers (200) to output and other statuses and
// injected line failures to errs.
func (s *Server) answerLines(ctx context.Context, input []byte, output, errs *bytes.Buffer) {
	sc := bufio.NewScanner(bytes.NewReader(input))
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		var l struct {
			CustomID string          `json:"custom_id"`
			Method   string          `json:"method"`
			URL      string          `json:"url"`
			Body     json.RawMessage `json:"body"`
			Oracle   string          `json:"benchline_oracle"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.CustomID == "" {
			writeLine(errs, l.CustomID, 400, map[string]any{"error": map[string]any{"message": "baseline: line does not decode", "code": "invalid_line"}})
			continue
		}
		if s.opts.Batch.FailLines > 0 && hashOf(l.CustomID, s.opts.Seed, "batch-line").uniform() < s.opts.Batch.FailLines {
			writeLine(errs, l.CustomID, 500, map[string]any{"error": map[string]any{"message": "baseline: injected failed line", "type": "server_error"}})
			continue
		}
		req := httptest.NewRequestWithContext(context.WithValue(ctx, noFaultsKey{}, true), http.MethodPost, "/v1/chat/completions", bytes.NewReader(l.Body))
		if l.Oracle != "" {
			if _, err := base64.StdEncoding.DecodeString(l.Oracle); err == nil {
				req.Header.Set(modelapi.OracleHeader, l.Oracle)
			}
		}
		rec := httptest.NewRecorder()
		s.mux.ServeHTTP(rec, req)
		if rec.Code == http.StatusOK {
			writeLine(output, l.CustomID, rec.Code, json.RawMessage(bytes.TrimSpace(rec.Body.Bytes())))
		} else {
			writeLine(errs, l.CustomID, rec.Code, json.RawMessage(bytes.TrimSpace(rec.Body.Bytes())))
		}
	}
}

func writeLine(w *bytes.Buffer, customID string, status int, body any) {
	b, _ := json.Marshal(map[string]any{"id": "resp-" + customID, "custom_id": customID,
		"response": map[string]any{"status_code": status, "body": body}, "error": nil})
	w.Write(b)
	w.WriteByte('\n')
}

// countLines counts the lines of a JSONL file (a last line may lack its
// newline).
func countLines(b []byte) int {
	n := bytes.Count(b, []byte("\n"))
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}
