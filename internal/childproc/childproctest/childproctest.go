// Package childproctest helps tests of code that starts child processes.
package childproctest

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// StartOnDyingThread calls start from a goroutine locked to its OS thread
// that returns without unlocking it, so the Go runtime ends that thread,
// and returns start's result once the thread is gone. A goroutine that
// landed on the main thread (which the runtime parks instead of ending)
// is given up and another one tried.
func StartOnDyingThread[T any](t *testing.T, start func() (T, error)) T {
	t.Helper()
	type result struct {
		v     T
		err   error
		tid   int
		again bool
	}
	for range 10 {
		res := make(chan result, 1)
		go func() {
			runtime.LockOSThread() // not unlocked: the thread ends with this goroutine
			tid := unix.Gettid()
			if tid == os.Getpid() {
				res <- result{again: true}
				return
			}
			v, err := start()
			res <- result{v: v, err: err, tid: tid}
		}()
		r := <-res
		if r.again {
			continue
		}
		if r.err != nil {
			t.Fatal(r.err)
		}
		task := "/proc/self/task/" + strconv.Itoa(r.tid)
		deadline := time.Now().Add(time.Minute)
		for {
			if _, err := os.Stat(task); errors.Is(err, os.ErrNotExist) {
				return r.v
			}
			if time.Now().After(deadline) {
				t.Fatalf("thread %d still exists a minute after its locked goroutine returned", r.tid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	t.Fatal("every goroutine ran on the main thread")
	var zero T
	return zero
}
