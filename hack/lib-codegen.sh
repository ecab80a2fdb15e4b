# Shared by the code generation scripts (sourced, not run).

# The generators are pinned in the hack/ module (hack/tools.go), not in the product's go.mod.
HACK_MODULE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"

# codegen_dir prints the directory of k8s.io/code-generator at the version hack/go.mod requires.
# `go list -m` prints an empty directory for a module that is not in the module cache yet
# (a fresh clone, a new machine); `go mod download` fetches it first and prints where it is.
codegen_dir() {
  local dir
  dir="$(go -C "${HACK_MODULE}" mod download -json k8s.io/code-generator | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  if [[ ! -f "${dir}/kube_codegen.sh" ]]; then
    echo "cannot find kube_codegen.sh of k8s.io/code-generator (got '${dir}')" >&2
    return 1
  fi
  echo "${dir}"
}

# module_dir prints the directory of module $1 at version $2 in the module cache, downloading it
# first when needed (a fresh clone, a new machine).
module_dir() {
  go -C "${HACK_MODULE}" mod download -json "$1@$2" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}

# require_protoc fails with the package to install when protoc is not on PATH: go-to-protobuf
# runs it to compile the generated .proto files.
require_protoc() {
  if ! command -v protoc >/dev/null; then
    echo "protoc not found: install Debian's protobuf-compiler (apt-get install -y protobuf-compiler)" >&2
    return 1
  fi
}

# hack_tool <name> [args...] builds the hack/ module's command ./<name> and runs it from the
# repository root, where its default paths (artifacts/, bundle/) resolve.
hack_tool() {
  local name="$1" bin
  shift
  bin="$(mktemp -d)"
  go -C "${HACK_MODULE}" build -o "${bin}/${name}" "./${name}"
  "${bin}/${name}" "$@"
  rm -rf "${bin}"
}
