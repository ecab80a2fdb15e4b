#!/usr/bin/env bash
# The tests must test what ships: every module the product's packages are built from has to be
# built at the same version in the other modules of this repository (pkg/apis and
# pkg/generated, whose own unit tests run with their go.mod; hack/ and test/, which build the
# product through a replace directive), which would otherwise compile it against other versions.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
GO=${GO:-go}

product="$(mktemp)" && trap 'rm -f "${product}"' EXIT
"${GO}" list -deps -test -f '{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}}{{end}}{{end}}' ./... | grep -v '^github.com/example/nginx-operator/' | sort -u >"${product}"
ret=0
for module in pkg/apis pkg/generated cmd/kubectl-nginx hack test; do
  drift="$(join "${product}" <("${GO}" -C "${module}" list -deps -test -f '{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}}{{end}}{{end}}' ./... | sort -u) | awk '$2 != $3')"
  if [[ -n "${drift}" ]]; then
    echo "module ${module}/ selects other versions of the product's dependencies (product, ${module}):" >&2
    echo "${drift}" | sed 's/^/  /' >&2
    ret=1
  fi
done
((ret == 0)) && echo "pkg/apis, pkg/generated, cmd/kubectl-nginx, hack/ and test/ select the product's dependency versions ($(wc -l <"${product}") modules)."
exit "${ret}"
