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

package integration

import (
	"context"
	"sync/atomic"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// handledPanics counts the panics recovered in this process (utilruntime.HandleCrash runs
// PanicHandlers first: the apiserver's handler chain, its watch cache), where a test of
// the binary looked for "panic" in its log.
var handledPanics atomic.Int64

func init() {
	utilruntime.PanicHandlers = append(utilruntime.PanicHandlers, func(context.Context, interface{}) { handledPanics.Add(1) })
}

// panics is how many panics this process recovered from since s was ready: s's unless
// another server of the process, idle between tests, had one.
func (s *server) panics() int64 { return handledPanics.Load() - s.panicsBefore }
