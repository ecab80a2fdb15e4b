# Shared by the code generation scripts (sourced, not run).

# codegen_dir prints the directory of k8s.io/code-generator at the version go.mod requires.
# `go list -m` prints an empty directory for a module that is not in the module cache yet
# (a fresh clone, a new machine); `go mod download` fetches it first and prints where it is.
codegen_dir() {
  local dir
  dir="$(go mod download -json k8s.io/code-generator | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  if [[ ! -f "${dir}/kube_codegen.sh" ]]; then
    echo "cannot find kube_codegen.sh of k8s.io/code-generator (got '${dir}')" >&2
    return 1
  fi
  echo "${dir}"
}
