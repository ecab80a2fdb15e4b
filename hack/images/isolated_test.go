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

package images

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// inIsolatedNamespaces runs fn on an OS thread of its own, moved into a new network
// namespace (only a loopback interface, so servers fn starts cannot collide with the
// host's ports) and a new private mount namespace (what fn mounts is gone with it).
// Processes fn starts and sockets it dials live in those namespaces. The thread is
// never unlocked, so Go discards it, and the namespaces with it, when fn returns.
func inIsolatedNamespaces(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := syscall.Unshare(syscall.CLONE_NEWNET | syscall.CLONE_NEWNS); err != nil {
			errc <- fmt.Errorf("unshare network and mount namespaces: %w", err)
			return
		}
		if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
			errc <- fmt.Errorf("making mounts private: %w", err)
			return
		}
		if err := loopbackUp(); err != nil {
			errc <- err
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// loopbackUp sets IFF_UP on "lo", which a new network namespace starts without.
func loopbackUp() error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var ifreq [40]byte // struct ifreq: the name, then a union whose first member is the flags
	copy(ifreq[:syscall.IFNAMSIZ], "lo")
	for _, req := range []uintptr{syscall.SIOCGIFFLAGS, syscall.SIOCSIFFLAGS} {
		if req == syscall.SIOCSIFFLAGS {
			flags := binary.NativeEndian.Uint16(ifreq[syscall.IFNAMSIZ:]) | syscall.IFF_UP
			binary.NativeEndian.PutUint16(ifreq[syscall.IFNAMSIZ:], flags)
		}
		if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), req, uintptr(unsafe.Pointer(&ifreq[0]))); errno != 0 {
			return fmt.Errorf("bringing lo up: %w", errno)
		}
	}
	return nil
}

// mountRuntimeFilesystems gives a chroot what a container runtime would: /dev and /proc
// (nginx's access log is /dev/stdout, a link into /proc). Only inside inIsolatedNamespaces.
func mountRuntimeFilesystems(rootfs string) error {
	for _, m := range []struct {
		source, target, fstype string
		flags                  uintptr
	}{
		{"/dev", "dev", "", syscall.MS_BIND | syscall.MS_REC},
		{"proc", "proc", "proc", syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_NOEXEC},
	} {
		target := filepath.Join(rootfs, m.target)
		if err := os.MkdirAll(target, 0o755); err != nil {
			return err
		}
		if err := syscall.Mount(m.source, target, m.fstype, m.flags, ""); err != nil {
			return fmt.Errorf("mount %s on %s: %w", m.source, target, err)
		}
	}
	return nil
}

// httpGet does one plain HTTP/1.0 GET on the calling goroutine, so the connection is made
// from the namespace of the calling thread (net/http would dial on another goroutine).
func httpGet(addr string) (status int, body string, err error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0, "", err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return 0, "", err
	}
	if _, err := fmt.Fprintf(conn, "GET / HTTP/1.0\r\nHost: localhost\r\n\r\n"); err != nil {
		return 0, "", err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}
