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
	"k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	generatedopenapi "github.com/example/nginx-operator/pkg/generated/openapi"
)

// NewRecommendedConfig is the generic server's recommended configuration with this
// server's codecs and OpenAPI v2 and v3 documents (kubectl explain, server-side apply).
// Options apply their flags to it.
func NewRecommendedConfig() *genericapiserver.RecommendedConfig {
	c := genericapiserver.NewRecommendedConfig(Codecs)
	namer := openapi.NewDefinitionNamer(Scheme)
	c.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(generatedopenapi.GetOpenAPIDefinitions, namer)
	c.OpenAPIConfig.Info.Title = "nginx-operator"
	c.OpenAPIConfig.Info.Version = v1alpha2.SchemeGroupVersion.Version
	c.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(generatedopenapi.GetOpenAPIDefinitions, namer)
	c.OpenAPIV3Config.Info.Title = "nginx-operator"
	c.OpenAPIV3Config.Info.Version = v1alpha2.SchemeGroupVersion.Version
	return c
}
