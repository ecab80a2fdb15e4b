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

package server

// Complete applies what parsing the flags cannot: the emulated versions and feature
// gates (the registry is set right after parsing, so nothing reads a gate before its
// final value), and the option groups standalone mode has no use for.
func (o *Options) Complete() error {
	if err := o.ComponentGlobalsRegistry.Set(); err != nil {
		return err
	}
	if o.Standalone {
		// Nothing to delegate to: no kube-apiserver, no admission webhooks, no flow control objects.
		o.Recommended.Authentication = nil
		o.Recommended.Authorization = nil
		o.Recommended.CoreAPI = nil
		o.Recommended.Admission = nil
		o.Recommended.Features.EnablePriorityAndFairness = false
	}
	return nil
}
