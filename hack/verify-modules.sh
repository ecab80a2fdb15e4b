#!/usr/bin/env bash
# The tests must test what ships: every module the product's packages are built from has to be
# selected at the same version in the tooling modules (hack/, test/), which build the product
# through a replace directive and would otherwise compile it against other versions.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
GO=${GO:-go}

product="$(mktemp)" && trap 'rm -f "${product}"' EXIT
"${GO}" list -deps -test -f '{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}}{{end}}{{end}}' ./... | sort -u >"${product}"
ret=0
for module in hack test; do
  drift="$(join "${product}" <("${GO}" -C "${module}" list -m -f '{{if not .Main}}{{.Path}} {{.Version}}{{end}}' all | sort -u) | awk '$2 != $3')"
  if [[ -n "${drift}" ]]; then
    echo "module ${module}/ selects other versions of the product's dependencies (product, ${module}):" >&2
    echo "${drift}" | sed 's/^/  /' >&2
    ret=1
  fi
done
((ret == 0)) && echo "hack/ and test/ build the product with its own dependency versions ($(wc -l <"${product}") modules)."
exit "${ret}"
