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

package nginxoperator

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/registry/compact"
)

// compactNginxOperator shares what NginxOperators read from storage repeat: their
// metadata's common parts, image, port and Service settings, environment, inline
// nginx.conf (often the same few kilobytes in every object of a fleet) and condition
// texts.
func compactNginxOperator(obj runtime.Object) {
	o, ok := obj.(*operator.NginxOperator)
	if !ok {
		compact.Metadata(obj)
		return
	}
	compact.ObjectMeta(&o.ObjectMeta)
	s := &o.Spec
	s.Image = compact.String(s.Image)
	for i := range s.Ports {
		s.Ports[i].Name = compact.String(s.Ports[i].Name)
		s.Ports[i].Protocol = compact.String(s.Ports[i].Protocol)
	}
	for i := range s.Env {
		s.Env[i].Name = compact.String(s.Env[i].Name)
		s.Env[i].Value = compact.String(s.Env[i].Value)
	}
	if s.Config != nil {
		s.Config.Inline = compact.String(s.Config.Inline)
	}
	if s.Service != nil {
		s.Service.Type = compact.String(s.Service.Type)
		for i := range s.Service.Ports {
			s.Service.Ports[i].Name = compact.String(s.Service.Ports[i].Name)
		}
	}
	s.HealthcheckPath = compact.String(s.HealthcheckPath)
	st := &o.Status
	st.Selector = compact.String(st.Selector)
	for i := range st.Conditions {
		c := &st.Conditions[i]
		c.Type = compact.String(c.Type)
		c.Status = compact.String(c.Status)
		c.Reason = compact.String(c.Reason)
		c.Message = compact.String(c.Message)
	}
}
