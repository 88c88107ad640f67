package site

import (
	"net/http"
	"time"
)

// The bounds of `benchline leaderboard serve`'s HTTP server (NewServer).
// Every route is GET or HEAD and takes no body: a request that announces
// one is answered 413 and its connection closed, without reading it.
const (
	// ServeHeaderTimeout bounds reading a request's headers.
	ServeHeaderTimeout = 10 * time.Second
	// ServeReadTimeout bounds reading a whole request (headers included).
	ServeReadTimeout = 15 * time.Second
	// ServeWriteTimeout bounds a request's answer, from the end of its
	// headers to the last byte written (a download included).
	ServeWriteTimeout = 2 * time.Minute
	// ServeIdleTimeout closes a kept-alive connection that sends nothing.
	ServeIdleTimeout = 2 * time.Minute
	// ServeMaxHeaderBytes caps a request's headers (and request line).
	ServeMaxHeaderBytes = 64 << 10
)

// NewServer returns the HTTP server of `benchline leaderboard serve`:
// h (Guarded or Handler) with the bounds above.
func NewServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: ServeHeaderTimeout,
		ReadTimeout:       ServeReadTimeout,
		WriteTimeout:      ServeWriteTimeout,
		IdleTimeout:       ServeIdleTimeout,
		MaxHeaderBytes:    ServeMaxHeaderBytes,
	}
}
