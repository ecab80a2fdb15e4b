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

package framework

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// WaitFor polls done until it is true and returns how long that took; it fails the
// test after timeout. Timeouts bound what never happens; they are not a measure.
func WaitFor(t testing.TB, timeout time.Duration, what string, done func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	if until(context.Background(), timeout, waitForDelays(), done) != nil {
		t.Fatalf("timed out after %s waiting for %s", timeout, what)
	}
	return time.Since(start)
}

// waitForDelays are WaitFor's pauses between two calls: 250 ms, 500 ms, then a second.
// A condition that holds soon is seen soon, and a long wait (pods, rollouts, scrapes)
// does not start a kubectl and a request to kube-apiserver four times a second, which on
// two cores takes CPU from the very components waited for.
func waitForDelays() wait.DelayFunc {
	return wait.Backoff{Duration: 250 * time.Millisecond, Factor: 2, Cap: time.Second, Steps: 3}.DelayFunc()
}

// Poll calls done at once and then every interval until it returns true (Poll returns
// true) or timeout has passed (false).
func Poll(timeout, interval time.Duration, done func() bool) bool {
	return until(context.Background(), timeout, wait.Backoff{Duration: interval}.DelayFunc(), done) == nil
}

// PollWhile is Poll for a condition that only something running can bring about: it also
// stops as soon as ctx ends, as a Process's Context does when the process exits, and
// returns why (context.Cause). It returns nil once done holds, and an error naming the
// timeout when that passed first.
func PollWhile(ctx context.Context, timeout, interval time.Duration, done func() bool) error {
	return until(ctx, timeout, wait.Backoff{Duration: interval}.DelayFunc(), done)
}

// errTimedOut is until's error when its timeout passed.
var errTimedOut = errors.New("timed out")

// until is the one polling loop of the suites: done at once, then after each delay, for
// at most timeout and while parent lasts. It returns nil once done holds, parent's cause
// when parent ended first, or an error saying the timeout passed.
func until(parent context.Context, timeout time.Duration, delays wait.DelayFunc, done func() bool) error {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	if delays.Until(ctx, true, false, func(context.Context) (bool, error) { return done(), nil }) == nil {
		return nil
	}
	if parent.Err() != nil {
		return context.Cause(parent)
	}
	return fmt.Errorf("%w after %s", errTimedOut, timeout)
}
