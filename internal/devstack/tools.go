package devstack

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// CacheDir is where `make setup` puts pinned tools: BENCHLINE_CACHE, else
// ~/.cache/benchline.
func CacheDir() string {
	if d := os.Getenv("BENCHLINE_CACHE"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "benchline-cache")
	}
	return filepath.Join(home, ".cache", "benchline")
}

// FindTool returns the path of a set-up tool (temporal, minio, moto_server):
// the cache's bin directory first, then PATH.
func FindTool(name string) (string, error) {
	p := filepath.Join(CacheDir(), "bin", name)
	if st, err := os.Stat(p); err == nil && !st.IsDir() {
		return p, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("devstack: %s not found in %s or on PATH: run `make setup` (it builds the pinned version)", name, filepath.Join(CacheDir(), "bin"))
}
