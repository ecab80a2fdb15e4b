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
	"testing"
	"time"
)

// WaitFor's pauses grow to a second: a long wait asks about once a second, not four
// times. A slow machine can only make fewer calls, so the bound holds on any.
func TestWaitForAsksAboutOnceASecondInALongWait(t *testing.T) {
	calls := 0
	if until(context.Background(), 4*time.Second, waitForDelays(), func() bool { calls++; return false }) == nil {
		t.Fatal("until reported a condition that never held as met")
	}
	// At 0, 0.25, 0.75, 1.75, 2.75 and 3.75 s: six calls; a fixed 250 ms would make 17.
	if calls > 6 {
		t.Errorf("%d calls in 4s, want at most 6 (0, 0.25, 0.75, 1.75, 2.75, 3.75 s)", calls)
	}
	if calls < 2 {
		t.Errorf("%d calls in 4s: the delays did not repeat", calls)
	}
}

func TestPollReturnsOnceTheConditionHolds(t *testing.T) {
	calls := 0
	if !Poll(time.Minute, time.Millisecond, func() bool { calls++; return calls == 3 }) {
		t.Fatal("Poll gave up on a condition that held at the third call")
	}
	if calls != 3 {
		t.Errorf("%d calls, want 3: Poll goes on after the condition held", calls)
	}
}

func TestPollWhileStopsWhenItsContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	gone := errors.New("gone")
	time.AfterFunc(50*time.Millisecond, func() { cancel(gone) })
	start := time.Now()
	err := PollWhile(ctx, time.Minute, 10*time.Millisecond, func() bool { return false })
	if err != gone {
		t.Errorf("PollWhile returned %v, want the context's cause", err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("PollWhile took %s after its context ended", took)
	}
	if err := PollWhile(context.Background(), 50*time.Millisecond, 10*time.Millisecond, func() bool { return false }); !errors.Is(err, errTimedOut) {
		t.Errorf("PollWhile returned %v for a condition that never held, want a timeout", err)
	}
	calls := 0
	if err := PollWhile(context.Background(), time.Minute, time.Millisecond, func() bool { calls++; return calls == 3 }); err != nil || calls != 3 {
		t.Errorf("PollWhile: %v after %d calls, want nil at the third", err, calls)
	}
}
