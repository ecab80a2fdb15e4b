/*
Copyright The nginx-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package nginxreload reloads nginx in place: when the kubelet has refreshed every
// content volume with what the controller asked for (the pod's content-hashes
// annotation), it sends SIGHUP to nginx's master process and tells, from nginx's error
// log and its worker processes, whether nginx took the new configuration. It runs in the
// nginx-exporter sidecar, which shares the pod's process namespace and nginx's user.
package nginxreload

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/example/nginx-operator/pkg/apis/operator/operand/reload"
)

// Defaults of the Reloader's fields.
const (
	DefaultInterval = 250 * time.Millisecond
	DefaultTimeout  = 10 * time.Second
	DefaultProcRoot = "/proc"
	// DefaultHealthDelay is how long after a reload the health path is requested: the
	// old workers may still accept a connection or two until the master tells them to
	// stop, and would answer with the previous configuration.
	DefaultHealthDelay = time.Second

	// checkInterval paces the look at the log and the workers after a SIGHUP: nginx
	// answers within milliseconds, or with a large configuration within seconds.
	checkInterval = 50 * time.Millisecond
)

// Reloader compares, every Interval, what the controller wants (DesiredFile), what the
// volumes hold (ContentDir) and what nginx runs, and reloads nginx when the volumes hold
// the wanted content and nginx runs something else. Content nginx refused is not tried
// again; the next new content is. Set the fields, then call Run once.
type Reloader struct {
	// ContentDir holds one directory per content volume, named by the volume
	// (reload.ContentDirectory).
	ContentDir string
	// DesiredFile holds the pod's reload.ContentHashesAnnotation
	// (reload.DesiredFile); missing or empty while the controller has not set it.
	DesiredFile string
	// IncludeFile, on a pod of a staged reload, is the file that says which configuration
	// nginx includes; it counts as the volume reload.IncludeVolume. Empty: none.
	IncludeFile string
	// HealthURL, when set, is requested HealthDelay after every reload that loaded
	// content (0: DefaultHealthDelay); State's Health tells the answer.
	HealthURL   string
	HealthDelay time.Duration
	// ErrorLog is the file nginx writes its errors to (reload.ErrorLog). Empty:
	// only new workers tell a reload's result, and a refusal's reason is not known.
	ErrorLog string
	// LogOut receives a copy of every line of ErrorLog (the sidecar's stderr); nil
	// drops them.
	LogOut io.Writer
	// MaxErrorLogBytes is the size beyond which ErrorLog is emptied once read
	// (0: DefaultMaxErrorLogBytes).
	MaxErrorLogBytes int64
	// ProcRoot is where processes are found ("": DefaultProcRoot).
	ProcRoot string
	// AcceptMaster, when set, narrows the nginx master processes found to the ones it
	// accepts: a host that sees many pods' processes (tests) has more than one.
	AcceptMaster func(pid int) bool
	// Interval between two looks at the content (0: DefaultInterval); Timeout, the
	// time nginx has after a SIGHUP to start a new worker or log why not (0:
	// DefaultTimeout).
	Interval time.Duration
	Timeout  time.Duration
	Logger   *slog.Logger

	// Used by Run's goroutine alone.
	volumes  volumeHasher
	log      *logTail
	problems map[string]string

	mu    sync.Mutex
	state reload.State
	// lastFailed is the result of the last reload (false before any).
	lastFailed bool
	// polls counts completed looks, so that tests can wait for one to pass.
	polls int64
}

// State is a snapshot of what the Reloader knows.
func (r *Reloader) State() reload.State {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state
}

// Run looks at the content every Interval until ctx is done. What the volumes hold when
// it starts is taken as what nginx runs: nginx started with it.
func (r *Reloader) Run(ctx context.Context) {
	r.init()
	loaded := reload.FormatContentHashes(r.present())
	r.mu.Lock()
	r.state.Loaded = loaded
	r.mu.Unlock()
	r.Logger.Info("reloading nginx in place when its content changes", "contentDir", r.ContentDir,
		"desiredFile", r.DesiredFile, "errorLog", r.ErrorLog, "loaded", loaded)
	tick := time.NewTicker(r.Interval)
	defer tick.Stop()
	for {
		r.poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (r *Reloader) init() {
	if r.ProcRoot == "" {
		r.ProcRoot = DefaultProcRoot
	}
	if r.Interval <= 0 {
		r.Interval = DefaultInterval
	}
	if r.Timeout <= 0 {
		r.Timeout = DefaultTimeout
	}
	if r.MaxErrorLogBytes <= 0 {
		r.MaxErrorLogBytes = DefaultMaxErrorLogBytes
	}
	if r.Logger == nil {
		r.Logger = slog.New(slog.DiscardHandler)
	}
	if r.ErrorLog != "" {
		r.log = &logTail{path: r.ErrorLog, max: r.MaxErrorLogBytes, out: r.LogOut}
	}
	r.problems = map[string]string{}
}

// poll is one look: the log is copied on every one, not only during reloads.
func (r *Reloader) poll(ctx context.Context) {
	r.readLog()
	want := r.desired()
	desired, mounted := reload.FormatContentHashes(want), ""
	if len(want) > 0 {
		mounted = reload.FormatContentHashes(r.mounted(want))
	}
	r.mu.Lock()
	r.state.Desired, r.state.Mounted = desired, mounted
	loaded, rejected := r.state.Loaded, r.state.Rejected
	r.mu.Unlock()
	if desired != "" && mounted == desired && desired != loaded && desired != rejected {
		r.reload(ctx, desired)
	}
	r.mu.Lock()
	r.polls++
	r.mu.Unlock()
}

// desired reads DesiredFile; nil while nothing is asked for, or what is asked cannot be
// read.
func (r *Reloader) desired() map[string]string {
	data, err := os.ReadFile(r.DesiredFile)
	if errors.Is(err, fs.ErrNotExist) {
		r.report("desired", nil)
		return nil
	}
	if err != nil {
		r.report("desired", err)
		return nil
	}
	hashes, err := reload.ParseContentHashes(string(data))
	if err != nil {
		err = fmt.Errorf("%s: %w", r.DesiredFile, err)
	}
	r.report("desired", err)
	return hashes
}

// mounted hashes the volumes named in want; one not mounted (yet) has no hash.
func (r *Reloader) mounted(want map[string]string) map[string]string {
	hashes := map[string]string{}
	for volume := range want {
		if volume == reload.IncludeVolume && r.IncludeFile != "" {
			if h, ok := r.includeHash(); ok {
				hashes[volume] = h
			}
			continue
		}
		// A volume name is a DNS label: never a path out of ContentDir.
		if volume != filepath.Base(volume) || strings.HasPrefix(volume, ".") {
			r.report("volume "+volume, fmt.Errorf("%q is no volume name", volume))
			continue
		}
		h, err := r.volumes.hash(filepath.Join(r.ContentDir, volume))
		switch {
		case err == nil:
			hashes[volume] = h
			r.report("volume "+volume, nil)
		case errors.Is(err, fs.ErrNotExist):
			r.report("volume "+volume, nil) // not mounted yet
		default:
			r.report("volume "+volume, err)
		}
	}
	return hashes
}

// includeHash hashes IncludeFile as the volume reload.IncludeVolume; false while it is
// not there.
func (r *Reloader) includeHash() (string, bool) {
	data, err := os.ReadFile(r.IncludeFile)
	if errors.Is(err, fs.ErrNotExist) {
		r.report("include", nil)
		return "", false
	}
	r.report("include", err)
	if err != nil {
		return "", false
	}
	return reload.ContentHash(map[string][]byte{reload.IncludeVolume: data}), true
}

// present hashes every volume in ContentDir, and IncludeFile.
func (r *Reloader) present() map[string]string {
	entries, err := os.ReadDir(r.ContentDir)
	r.report("content", err)
	hashes := map[string]string{}
	if r.IncludeFile != "" {
		if h, ok := r.includeHash(); ok {
			hashes[reload.IncludeVolume] = h
		}
	}
	for _, e := range entries {
		dir := filepath.Join(r.ContentDir, e.Name())
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || strings.HasPrefix(e.Name(), "..") {
			continue
		}
		h, err := r.volumes.hash(dir)
		r.report("volume "+e.Name(), err)
		if err == nil {
			hashes[e.Name()] = h
		}
	}
	return hashes
}

// reload signals nginx and records its answer.
func (r *Reloader) reload(ctx context.Context, desired string) {
	start := time.Now()
	failure, err := r.signalAndWait(ctx)
	if err != nil {
		return // stopped while waiting: nobody asks for the result any more
	}
	took := time.Since(start).Round(time.Millisecond)
	r.mu.Lock()
	r.state.Reloads++
	r.lastFailed = failure != ""
	if failure == "" {
		r.state.Loaded, r.state.Rejected, r.state.Message = desired, "", ""
	} else {
		r.state.Failures++
		r.state.Rejected, r.state.Message = desired, failure
	}
	r.mu.Unlock()
	if failure == "" {
		r.Logger.Info("nginx reloaded", "result", "success", "content", desired, "duration", took.String())
		if r.HealthURL != "" {
			select {
			case <-ctx.Done():
				return
			case <-time.After(cmp.Or(r.HealthDelay, DefaultHealthDelay)):
			}
			h := checkHealth(ctx, r.HealthURL, desired)
			r.mu.Lock()
			r.state.Health = &h
			r.mu.Unlock()
			if h.Failed() {
				r.Logger.Warn("the health path failed after the reload", "url", r.HealthURL, "code", h.Code, "err", h.Error)
			}
		}
	} else {
		r.Logger.Warn("nginx kept its configuration", "result", "failure", "content", desired, "duration", took.String(), "reason", failure)
	}
}

// signalAndWait sends SIGHUP and waits for nginx's answer: "" when it started a new
// worker (it took the configuration), the reason otherwise. An error means ctx ended.
func (r *Reloader) signalAndWait(ctx context.Context) (string, error) {
	master, err := findMaster(r.ProcRoot, r.AcceptMaster)
	if err != nil {
		return err.Error(), nil
	}
	before, err := workers(r.ProcRoot, master)
	if err != nil {
		return fmt.Sprintf("listing nginx's workers: %v", err), nil
	}
	old := map[int]bool{}
	for _, pid := range before {
		old[pid] = true
	}
	r.readLog() // what nginx logged before the signal is not its answer
	if err := signalReload(master); err != nil {
		return fmt.Sprintf("signalling nginx's master process %d: %v", master, err), nil
	}
	deadline := time.Now().Add(r.Timeout)
	tick := time.NewTicker(checkInterval)
	defer tick.Stop()
	for {
		for _, line := range r.readLog() {
			if msg, ok := failureLine(line); ok {
				return msg, nil
			}
		}
		now, err := workers(r.ProcRoot, master)
		r.report("workers", err)
		for _, pid := range now {
			if !old[pid] {
				return "", nil
			}
		}
		if !time.Now().Before(deadline) {
			msg := fmt.Sprintf("nginx started no new worker within %s of SIGHUP", r.Timeout)
			if r.log == nil {
				msg += ": nginx kept its configuration; its log says why"
			}
			return msg, nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-tick.C:
		}
	}
}

func (r *Reloader) readLog() []string {
	if r.log == nil {
		return nil
	}
	lines, err := r.log.read()
	r.report("error log", err)
	return lines
}

// report logs a problem of source once, not on every look, and again when it changes.
func (r *Reloader) report(source string, err error) {
	if err == nil {
		delete(r.problems, source)
		return
	}
	if r.problems[source] == err.Error() {
		return
	}
	r.problems[source] = err.Error()
	r.Logger.Warn("reload in place: "+source, "err", err)
}
