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

package faults

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// process is one child process the suite started, handled by its PID only.
type process struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process is gone
}

// startProcess starts binary with args, its output into logFile; the process dies with
// the test binary.
func startProcess(name, logFile, binary string, args ...string) (*process, error) {
	log, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	p := &process{name: name, cmd: exec.Command(binary, args...), exited: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = log, log
	p.cmd.SysProcAttr = dieWithTheTest()
	if err := p.cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	go func() { _ = p.cmd.Wait(); log.Close(); close(p.exited) }()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// kill sends SIGKILL and waits for the process to be gone.
func (p *process) kill(t testing.TB) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("killing %s pid %d: %v", p.name, p.pid(), err)
	}
	<-p.exited
}

// stop asks the process to end, and kills it after 30 s; nil or gone is a no-op.
func (p *process) stop(sig os.Signal) {
	if p == nil {
		return
	}
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}
