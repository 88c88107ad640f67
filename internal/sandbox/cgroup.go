package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroupDriver creates per-run cgroups. It is detected once, by New.
// Version 1 uses the memory, pids, cpu and cpuacct hierarchies (each
// optional); version 2 uses one directory with the delegated controllers.
type cgroupDriver struct {
	version int
	// v1: controller name -> parent directory (the worker's own cgroup in
	// that hierarchy). v2: "" -> parent directory, controllers in ctrls.
	parents map[string]string
	ctrls   map[string]bool
}

// mechanism returns the enforcement name for a controller, or "" if the
// controller is not available.
func (d *cgroupDriver) mechanism(ctrl string) string {
	if d == nil || !d.ctrls[ctrl] {
		return ""
	}
	return "cgroup-v" + strconv.Itoa(d.version)
}

type mount struct {
	root, point, fstype string
	opts                []string
}

func readMounts() ([]mount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ms []mount
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent maj:min root point opts [optional...] - fstype source superopts
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, f := range fields {
			if f == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || len(fields) < sep+4 || len(fields) < 5 {
			continue
		}
		ms = append(ms, mount{root: fields[3], point: unescapeMount(fields[4]), fstype: fields[sep+1],
			opts: strings.Split(fields[sep+3], ",")})
	}
	return ms, sc.Err()
}

func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// selfCgroups parses /proc/self/cgroup: controller -> path ("" for v2).
func selfCgroups() (map[string]string, error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out, nil
}

var v1Controllers = []string{"memory", "pids", "cpu", "cpuacct"}

// detectCgroups finds writable cgroup hierarchies. It returns nil (no error)
// when none is usable, so that the sandbox degrades to rlimits.
func detectCgroups() *cgroupDriver {
	mounts, err := readMounts()
	if err != nil {
		return nil
	}
	self, err := selfCgroups()
	if err != nil {
		return nil
	}
	d := &cgroupDriver{version: 1, parents: map[string]string{}, ctrls: map[string]bool{}}
	for _, m := range mounts {
		if m.fstype != "cgroup" {
			continue
		}
		for _, c := range v1Controllers {
			if d.ctrls[c] || !contains(m.opts, c) {
				continue
			}
			p, ok := self[c]
			if !ok {
				continue
			}
			rel := strings.TrimPrefix(p, m.root)
			if m.root != "/" && !strings.HasPrefix(p, m.root) {
				continue
			}
			dir := filepath.Join(m.point, rel)
			if probeCgroupDir(dir) {
				d.parents[c] = dir
				d.ctrls[c] = true
			}
		}
	}
	if d.ctrls["memory"] || d.ctrls["pids"] {
		return d
	}
	// cgroup v2: the worker's own cgroup must be able to delegate controllers.
	for _, m := range mounts {
		if m.fstype != "cgroup2" {
			continue
		}
		p, ok := self[""]
		if !ok {
			continue
		}
		dir := filepath.Join(m.point, strings.TrimPrefix(p, m.root))
		if d2 := detectV2(dir); d2 != nil {
			return d2
		}
	}
	return nil
}

func detectV2(dir string) *cgroupDriver {
	sub, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil {
		return nil
	}
	avail, _ := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	have := strings.Fields(string(sub))
	var want []string
	for _, c := range []string{"memory", "pids", "cpu"} {
		if !contains(have, c) && contains(strings.Fields(string(avail)), c) {
			want = append(want, "+"+c)
		}
	}
	if len(want) > 0 {
		// Fails (EBUSY) if the worker's cgroup holds processes; then only
		// what is already delegated is used.
		_ = os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(strings.Join(want, " ")), 0)
		sub, _ = os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
		have = strings.Fields(string(sub))
	}
	d := &cgroupDriver{version: 2, parents: map[string]string{"": dir}, ctrls: map[string]bool{}}
	for _, c := range []string{"memory", "pids", "cpu"} {
		if contains(have, c) {
			d.ctrls[c] = true
		}
	}
	if d.ctrls["cpu"] {
		d.ctrls["cpuacct"] = true // cpu.stat usage_usec is always there; accounting via cpu
	}
	if !(d.ctrls["memory"] || d.ctrls["pids"]) || !probeCgroupDir(dir) {
		return nil
	}
	return d
}

func probeCgroupDir(dir string) bool {
	p := filepath.Join(dir, fmt.Sprintf("benchline-probe-%d", os.Getpid()))
	if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return false
	}
	return os.Remove(p) == nil
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// runCgroup is the set of cgroup directories of one run.
type runCgroup struct {
	d    *cgroupDriver
	dirs map[string]string // controller -> dir (v2: every controller -> the one dir)
	all  []string          // distinct dirs, for add/kill/remove
}

// newRunCgroup creates the run's cgroups and sets the limits. On error
// everything created is removed.
func (d *cgroupDriver) newRunCgroup(name string, l Limits) (_ *runCgroup, err error) {
	rc := &runCgroup{d: d, dirs: map[string]string{}}
	defer func() {
		if err != nil {
			rc.remove()
		}
	}()
	mk := func(dir string) error {
		if err := os.Mkdir(dir, 0o755); err != nil {
			return fmt.Errorf("mkdir %s: %w", dir, err)
		}
		rc.all = append(rc.all, dir)
		return nil
	}
	if d.version == 2 {
		dir := filepath.Join(d.parents[""], name)
		if err := mk(dir); err != nil {
			return nil, err
		}
		for c := range d.ctrls {
			rc.dirs[c] = dir
		}
		if d.ctrls["memory"] {
			if err := writeCg(dir, "memory.max", l.MemoryBytes); err != nil {
				return nil, err
			}
			_ = writeCg(dir, "memory.swap.max", 0)
		}
		if d.ctrls["pids"] {
			if err := writeCg(dir, "pids.max", int64(l.Processes)); err != nil {
				return nil, err
			}
		}
		if d.ctrls["cpu"] && l.CPUs > 0 {
			v := fmt.Sprintf("%d 100000", int64(l.CPUs*100000))
			if err := os.WriteFile(filepath.Join(dir, "cpu.max"), []byte(v), 0); err != nil {
				return nil, fmt.Errorf("cpu.max: %w", err)
			}
		}
		return rc, nil
	}
	for _, c := range v1Controllers {
		if !d.ctrls[c] {
			continue
		}
		dir := filepath.Join(d.parents[c], name)
		if err := mk(dir); err != nil {
			return nil, err
		}
		rc.dirs[c] = dir
		switch c {
		case "memory":
			if err := writeCg(dir, "memory.limit_in_bytes", l.MemoryBytes); err != nil {
				return nil, err
			}
			// No swap: memsw must be set after limit_in_bytes. Absent without swap accounting.
			_ = writeCg(dir, "memory.memsw.limit_in_bytes", l.MemoryBytes)
		case "pids":
			if err := writeCg(dir, "pids.max", int64(l.Processes)); err != nil {
				return nil, err
			}
		case "cpu":
			if l.CPUs > 0 {
				if err := writeCg(dir, "cpu.cfs_period_us", 100000); err != nil {
					return nil, err
				}
				if err := writeCg(dir, "cpu.cfs_quota_us", int64(l.CPUs*100000)); err != nil {
					return nil, err
				}
			}
		}
	}
	return rc, nil
}

func writeCg(dir, file string, v int64) error {
	if err := os.WriteFile(filepath.Join(dir, file), []byte(strconv.FormatInt(v, 10)), 0); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	return nil
}

func readCgInt(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil
}

// readKey reads "key value" lines (memory.oom_control, cpu.stat, memory.events).
func readKey(path, key string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == key {
			n, err := strconv.ParseInt(f[1], 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// add moves pid into every cgroup of the run.
func (rc *runCgroup) add(pid int) error {
	for _, dir := range rc.all {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("add pid to %s: %w", dir, err)
		}
	}
	return nil
}

// cpuUsage returns the CPU time used by the run's processes.
func (rc *runCgroup) cpuUsage() (time.Duration, bool) {
	dir, ok := rc.dirs["cpuacct"]
	if !ok {
		return 0, false
	}
	if rc.d.version == 2 {
		us, ok := readKey(filepath.Join(dir, "cpu.stat"), "usage_usec")
		return time.Duration(us) * time.Microsecond, ok
	}
	ns, ok := readCgInt(filepath.Join(dir, "cpuacct.usage"))
	return time.Duration(ns), ok
}

// peakMemory returns the peak memory usage in bytes.
func (rc *runCgroup) peakMemory() (int64, bool) {
	dir, ok := rc.dirs["memory"]
	if !ok {
		return 0, false
	}
	if rc.d.version == 2 {
		return readCgInt(filepath.Join(dir, "memory.peak"))
	}
	return readCgInt(filepath.Join(dir, "memory.max_usage_in_bytes"))
}

// oomKilled reports whether the kernel OOM-killed a process of the run.
func (rc *runCgroup) oomKilled() bool {
	dir, ok := rc.dirs["memory"]
	if !ok {
		return false
	}
	var n int64
	if rc.d.version == 2 {
		n, _ = readKey(filepath.Join(dir, "memory.events"), "oom_kill")
	} else {
		n, _ = readKey(filepath.Join(dir, "memory.oom_control"), "oom_kill")
	}
	return n > 0
}

// pids lists the processes still in the run's cgroups.
func (rc *runCgroup) pids() []int {
	seen := map[int]bool{}
	var out []int
	for _, dir := range rc.all {
		b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if p, err := strconv.Atoi(f); err == nil && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// killAll SIGKILLs every process left in the run's cgroups until they are
// empty or the deadline passes. It reports whether the cgroups are empty.
func (rc *runCgroup) killAll(timeout time.Duration) bool {
	if rc.d.version == 2 && len(rc.all) == 1 {
		_ = os.WriteFile(filepath.Join(rc.all[0], "cgroup.kill"), []byte("1"), 0)
	}
	deadline := time.Now().Add(timeout)
	for {
		ps := rc.pids()
		if len(ps) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		for _, p := range ps {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(time.Millisecond)
	}
}

// remove kills what is left and removes the run's cgroup directories.
func (rc *runCgroup) remove() error {
	rc.killAll(5 * time.Second)
	var errs []error
	for i := len(rc.all) - 1; i >= 0; i-- {
		dir := rc.all[i]
		var err error
		for try := 0; try < 100; try++ {
			if err = os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
				err = nil
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
