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

package apiserver

import (
	"context"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/endpoints/deprecation"
	"k8s.io/apiserver/pkg/warning"

	"github.com/example/nginx-operator/pkg/version"
)

// releaseNamedDeprecations maps the generic deprecation warning of every deprecated
// kind of group to one that says whose release the versions are. The generic text,
// "is deprecated in v0.1+", reads like a Kubernetes version in kubectl's output; the
// lifecycle tags of this API are nginx-operator releases.
func releaseNamedDeprecations(scheme *runtime.Scheme, group string) map[string]string {
	renames := map[string]string{}
	for gvk := range scheme.AllKnownTypes() {
		if gvk.Group != group || gvk.Version == runtime.APIVersionInternal {
			continue
		}
		obj, err := scheme.New(gvk)
		if err != nil {
			continue
		}
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		generic := deprecation.WarningMessage(obj)
		if generic == "" {
			continue
		}
		renames[generic] = strings.Replace(generic, " is deprecated in v", " is deprecated in "+version.ComponentName+" v", 1)
	}
	return renames
}

// renameWarnings replaces warnings found in renames on their way to the response.
func renameWarnings(handler http.Handler, renames map[string]string) http.Handler {
	if len(renames) == 0 {
		return handler
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		outer := req.Context()
		ctx := warning.WithWarningRecorder(outer, renamingRecorder{outer: outer, renames: renames})
		handler.ServeHTTP(w, req.WithContext(ctx))
	})
}

type renamingRecorder struct {
	outer   context.Context
	renames map[string]string
}

func (r renamingRecorder) AddWarning(agent, text string) {
	if renamed, ok := r.renames[text]; ok {
		text = renamed
	}
	warning.AddWarning(r.outer, agent, text)
}
