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

package controller

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

// protobufAccept asks for protobuf and takes JSON from a server that cannot send it.
const protobufAccept = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON

// withProtobuf returns a copy of cfg whose clients send protobuf bodies and ask for
// protobuf responses: for NginxOperator (its types have generated protobuf marshalers)
// and for Deployments, Services, Events and Leases alike. Left empty, controller-runtime
// picks protobuf only for the built-in types. Server-side apply still sends its patch
// body as apply YAML/JSON, as Kubernetes requires.
func withProtobuf(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = protobufAccept
	return cfg
}
