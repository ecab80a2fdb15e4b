module github.com/example/nginx-operator/hack/release

go 1.26.0

require (
	github.com/opencontainers/go-digest v1.0.0
	github.com/opencontainers/image-spec v1.1.1
	github.com/spdx/tools-golang v0.5.7
	go.yaml.in/yaml/v3 v3.0.4
)

require github.com/anchore/go-struct-converter v0.1.0 // indirect
