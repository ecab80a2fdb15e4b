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

// Package requester is the admission plugin that keeps an NginxOperator from granting its
// writer more than the writer holds: the controller acts with its own broad identity, so
// every Secret, ConfigMap and ServiceAccount a spec makes it use, and every power beyond
// the restricted Pod Security profile or a ClusterIP Service, is authorized as the user
// who writes the object, as RBAC's escalation check does for RoleBindings. It judges the
// result, not the difference: an update that can change what the pods run or reference is
// authorized for everything the resulting spec asks, also what the stored object already
// had (a new image given an old Secret is a new grant). Writes that cannot change the pods
// (status, /scale, replicas, the object's own labels and annotations) are not checked.
package requester

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

// PluginName is the plugin's name in --enable-admission-plugins and --disable-admission-plugins.
const PluginName = "NginxOperatorRequesterAuthorization"

// Register adds the plugin to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) { return New(), nil })
}

// Plugin authorizes what an NginxOperator asks of the controller as its writer.
type Plugin struct {
	*admission.Handler
	authorizer authorizer.UnconditionalAuthorizer
}

var (
	_ admission.ValidationInterface            = &Plugin{}
	_ admission.InitializationValidator        = &Plugin{}
	_ initializer.WantsUnconditionalAuthorizer = &Plugin{}
)

// New returns the plugin; the server's admission initializer gives it the authorizer.
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update)}
}

// SetUnconditionalAuthorizer takes the server's delegated authorizer, whose decisions are
// cached like those of every request.
func (p *Plugin) SetUnconditionalAuthorizer(a authorizer.UnconditionalAuthorizer) { p.authorizer = a }

// ValidateInitialization refuses to run without an authorizer.
func (p *Plugin) ValidateInitialization() error {
	if p.authorizer == nil {
		return errors.New(PluginName + " needs an authorizer")
	}
	return nil
}

// Validate refuses, with 403 Forbidden, a create or a pod-changing update whose spec asks
// for anything the writer is not allowed; the message names each field and the permission
// it needs.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != operator.Resource("nginxoperators") || a.GetSubresource() != "" {
		return nil
	}
	obj, ok := a.GetObject().(*operator.NginxOperator)
	if !ok {
		return nil
	}
	if old, ok := a.GetOldObject().(*operator.NginxOperator); ok && !changesPods(&old.Spec, &obj.Spec) {
		return nil
	}
	decided := map[permission]error{}
	var denied []string
	for _, k := range asks(&obj.Spec) {
		err, known := decided[k.need]
		if !known {
			err = p.authorize(ctx, a, k.need)
			decided[k.need] = err
		}
		if err != nil {
			denied = append(denied, fmt.Sprintf("%s (%s) needs permission to %s in namespace %q: %v", k.path, k.what, k.need, a.GetNamespace(), err))
		}
	}
	if len(denied) > 0 {
		return admission.NewForbidden(a, errors.New(strings.Join(denied, "; ")))
	}
	return nil
}

// authorize asks whether the writer may do what the permission names; nil means yes.
func (p *Plugin) authorize(ctx context.Context, a admission.Attributes, need permission) error {
	decision, reason, err := p.authorizer.Authorize(ctx, authorizer.AttributesRecord{
		User:            a.GetUserInfo(),
		Verb:            need.verb,
		APIGroup:        need.group,
		Namespace:       a.GetNamespace(),
		Resource:        need.resource,
		Subresource:     need.subresource,
		Name:            need.name,
		ResourceRequest: true,
	})
	switch {
	case decision == authorizer.DecisionAllow:
		return nil
	case err != nil:
		return fmt.Errorf("the authorizer failed: %w", err)
	case reason != "":
		return fmt.Errorf("user %q does not have it: %s", a.GetUserInfo().GetName(), reason)
	}
	return fmt.Errorf("user %q does not have it", a.GetUserInfo().GetName())
}
