#!/usr/bin/env bash
# Builds the project's OCI images with buildah, offline (only the Go module proxy and
# Debian's apt repositories are used), each written as a docker-archive that
# `docker load`, `podman load` and `ctr images import` accept:
#
#   nginx-operator  ${IMAGE_REGISTRY}/nginx-operator:${IMAGE_TAG}   /apiserver, /controller, /etcd-snapshot (Dockerfile)
#                   and ${IMAGE_REGISTRY}/nginx-operator/nginx-exporter:${IMAGE_TAG}, /nginx-exporter alone
#                   (the Dockerfile's stage nginx-exporter), the nginx pods' sidecar
#   pause           ${IMAGE_REGISTRY}/nginx-operator/pause:3.10     sandbox image of the local real node
#   etcd            ${IMAGE_REGISTRY}/nginx-operator/etcd:<version> the etcd `make tools` built
#   nginx           ${IMAGE_REGISTRY}/nginx-operator/nginx:<debian version>  the operand, ports 80 and 8080
#                   and ${IMAGE_REGISTRY}/nginx-operator/nginx-unprivileged:<debian version>, the
#                   same as user 101 on port 8080 (the stand-in for the default operand image)
#   prometheus      ${IMAGE_REGISTRY}/nginx-operator/prometheus:<version>  the Prometheus and config
#                   reloader `make tools` built, for the real-node test's Prometheus Operator step
#                   (only when named)
#
# Usage: hack/images/build.sh [nginx-operator|pause|etcd|nginx|prometheus ...]   (default: the first four)
#
# Environment:
#   IMAGE_REGISTRY  registry part of every reference (default: localhost)
#   VERSION         semantic version stamped into the binaries and labels
#                   (default: the one in pkg/version/version.go)
#   IMAGE_TAG       tag of the nginx-operator image (default: VERSION with + turned into -)
#   TOOLS_BIN_DIR   where `make tools` put its binaries (default: hack/tools/bin)
#   IMAGES_ENV      the file the built images are recorded in (default: _output/images/images.env;
#                   hack/release.sh records a release's elsewhere, so what tests and scripts
#                   deploy from the shared file stays what `make images` built)
#   PLATFORMS       e.g. "linux/amd64 linux/arm64": also build the nginx-operator image for
#                   each of these as one OCI image index, nginx-operator-index-<tag>.tar
#                   (NGINX_OPERATOR_INDEX_* in images.env; the exporter's likewise,
#                   nginx-exporter-index-<tag>.tar, NGINX_EXPORTER_INDEX_*); push it with
#                   skopeo copy --all oci-archive:<file> docker://<registry>/nginx-operator:<tag>
#                   The etcd image likewise: etcd-index-<version>.tar (ETCD_INDEX_*), of static
#                   binaries compiled for each platform from the etcd module `make tools` uses.
#
# Output, in _output/images/: <name>-<tag>.tar for each image, and images.env, which
# names each image and archive (NGINX_OPERATOR_IMAGE, NGINX_OPERATOR_ARCHIVE, PAUSE_IMAGE,
# ...) for scripts and tests. An image is rebuilt only when its inputs changed: a
# digest of everything that goes into it is kept in _output/images/.inputs/. The Go
# build cache makes an unchanged binary cheap, and .debs are downloaded once per version.
set -euo pipefail
umask 022

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
cd "${ROOT}"
IMAGES_DIR="${ROOT}/hack/images"
OUT="${ROOT}/_output/images"
# The Dockerfile's prebuilt stage and .dockerignore name this directory.
BIN="${OUT}/bin"
WORK="${OUT}/work"
DEBS="${OUT}/debs"
REGISTRY="${IMAGE_REGISTRY:-localhost}"
PAUSE_TAG="3.10"
NGINX_DEBS=(nginx nginx-common libc6 libssl3 libpcre2-8-0 zlib1g libcrypt1)

DEFAULT_IMAGES=(nginx-operator pause etcd nginx)
KNOWN_IMAGES=("${DEFAULT_IMAGES[@]}" prometheus)
IMAGES=("$@")
((${#IMAGES[@]})) || IMAGES=("${DEFAULT_IMAGES[@]}")
for name in "${IMAGES[@]}"; do
  [[ " ${KNOWN_IMAGES[*]} " == *" ${name} "* ]] || { echo "unknown image '${name}'; known: ${KNOWN_IMAGES[*]}" >&2; exit 2; }
done
command -v buildah >/dev/null || { echo "buildah is required (Debian: apt-get install buildah)" >&2; exit 1; }

mkdir -p "${BIN}" "${WORK}" "${DEBS}"
# One build at a time per checkout: they share the buildah store and the work directory.
exec 9>"${OUT}/.lock"
flock 9

# A private vfs store (no overlay or fuse needed) that is emptied after every image: the
# archives are the product, so repeated builds never grow it.
STORE="${OUT}/buildah"
bah() { buildah --root "${STORE}/root" --runroot "${STORE}/run" --storage-driver vfs "$@"; }
empty_store() {
  bah rm --all >/dev/null 2>&1 || true
  bah rmi --all --force >/dev/null 2>&1 || true
}
empty_store
trap empty_store EXIT

# Images are dated with the commit's time (the binaries' build date too), not the build's.
SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}"

# digest_of <path>... prints one digest of the paths' names, modes, owners, link targets
# and contents, plus whatever is on stdin.
digest_of() {
  {
    cat
    for path in "$@"; do
      (cd "${path%/*}" && find "${path##*/}" -printf '%p %y %m %U %G %l\n' | LC_ALL=C sort)
      find "${path}" -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum | sed "s|${path}||"
    done
  } | sha256sum | cut -d' ' -f1
}

# archive_image <name> <ref> <context> <dockerfile> <inputs-digest> [buildah bud args...]
# builds the image unless the archive of these inputs exists, and records it in images.env.
archive_image() {
  local name="$1" ref="$2" context="$3" dockerfile="$4" digest="$5"
  shift 5
  local tag="${ref##*:}"
  local archive="${OUT}/${name}-${tag}.tar"
  local stamp="${OUT}/.inputs/${name}/${tag}"
  mkdir -p "${OUT}/.inputs/${name}"
  if [[ -f "${archive}" && "$(cat "${stamp}" 2>/dev/null)" == "${digest}" ]]; then
    touch "${stamp}"
    echo "cached  ${ref}  ${archive#"${ROOT}/"} ($(du -m "${archive}" | cut -f1) MiB)"
  else
    local start=${SECONDS} log="${OUT}/${name}.build.log"
    rm -f "${stamp}" "${archive}.tmp"
    if ! if [[ -n "${INDEX_PLATFORMS:-}" ]]; then
           bud_index "${archive}.tmp" "${ref}" "${context}" "${dockerfile}" "$@"
         else
           bud -f "${dockerfile}" -t "${ref}" "$@" "${context}" &&
             bah push --quiet "${ref}" "docker-archive:${archive}.tmp:${ref}"
         fi >"${log}" 2>&1; then
      cat "${log}" >&2
      echo "building ${ref} failed (log: ${log#"${ROOT}/"})" >&2
      exit 1
    fi
    empty_store
    mv "${archive}.tmp" "${archive}"
    echo "${digest}" >"${stamp}"
    echo "built   ${ref}  ${archive#"${ROOT}/"} ($(du -m "${archive}" | cut -f1) MiB) in $((SECONDS - start))s"
  fi
  record "${name}" "${ref}" "${archive}"
  prune_archives "${name}"
}

bud() { bah bud --isolation chroot --pull=never --identity-label=false --timestamp "${SOURCE_DATE_EPOCH}" "$@"; }

# bud_index <oci-archive> <ref> <context> <dockerfile> [bud args...] builds the image for
# each of INDEX_PLATFORMS into one manifest list and writes it as an OCI image index.
# Nothing runs inside the images, so no emulator is needed for other architectures.
bud_index() {
  local out="$1" ref="$2" context="$3" dockerfile="$4" platform
  shift 4
  bah manifest create "${ref}" || return
  for platform in ${INDEX_PLATFORMS}; do
    bud --platform "${platform}" --manifest "${ref}" -f "${dockerfile}" "$@" "${context}" || return
  done
  bah manifest push --quiet --all --format oci "${ref}" "oci-archive:${out}:${ref}"
}

# prune_archives <name> keeps the archives of the ${KEEP_ARCHIVES} tags of an image used
# last (a new tag per build, as an upgrade test makes, would otherwise fill the disk).
KEEP_ARCHIVES=3
prune_archives() {
  local tag
  ls -t "${OUT}/.inputs/$1" | tail -n +$((KEEP_ARCHIVES + 1)) | while read -r tag; do
    rm -f "${OUT}/$1-${tag}.tar" "${OUT}/.inputs/$1/${tag}"
    echo "removed ${OUT#"${ROOT}/"}/$1-${tag}.tar (only the ${KEEP_ARCHIVES} last used tags are kept)"
  done
}

IMAGES_ENV="${IMAGES_ENV:-${OUT}/images.env}"
record() { # record <name> <ref> <archive>: NAME_IMAGE and NAME_ARCHIVE in ${IMAGES_ENV}
  local var
  var="$(tr 'a-z-' 'A-Z_' <<<"$1")"
  touch "${IMAGES_ENV}"
  { grep -v -e "^${var}_IMAGE=" -e "^${var}_ARCHIVE=" "${IMAGES_ENV}" || true
    echo "${var}_IMAGE=$2"
    echo "${var}_ARCHIVE=$3"
  } >"${IMAGES_ENV}.tmp"
  mv "${IMAGES_ENV}.tmp" "${IMAGES_ENV}"
}

# go_build <output> <package> <ldflags>: a static, reproducible build; go skips the link
# when the output is already up to date.
go_build() {
  CGO_ENABLED=0 GOOS=linux go build -trimpath -buildvcs=false -ldflags "$3" -o "$1" "$2"
}

build_nginx_operator() {
  local version="${VERSION:-}"
  if [[ -z "${version}" ]]; then
    version="$(sed -n 's/^[[:space:]]*gitVersion[[:space:]]*=[[:space:]]*"\(v[^"]*\)".*/\1/p' pkg/version/version.go 2>/dev/null | head -n1)"
  fi
  # The binaries refuse to start with a version that is not semantic; fail here instead.
  if [[ ! "${version}" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$ ]]; then
    echo "VERSION='${version}' is not a semantic version like v0.1.0 (set VERSION, or check pkg/version/version.go)" >&2
    exit 1
  fi
  local tag="${IMAGE_TAG:-${version//+/-}}"
  [[ "${tag}" =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]] || { echo "IMAGE_TAG='${tag}' is not a valid image tag" >&2; exit 1; }
  local revision tree_state=clean pkg
  revision="$(git rev-parse HEAD 2>/dev/null || true)"
  [[ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]] || tree_state=dirty
  pkg="$(go list -m)/pkg/version"
  local ldflags="-s -w -X ${pkg}.gitVersion=${version} -X ${pkg}.gitCommit=${revision}"
  ldflags+=" -X ${pkg}.gitTreeState=${tree_state} -X ${pkg}.buildDate=$(date -u -d "@${SOURCE_DATE_EPOCH}" +%Y-%m-%dT%H:%M:%SZ)"
  # The binaries of each platform go to bin/<os>_<arch>/, where the Dockerfile's prebuilt
  # stage takes them from for its TARGETOS and TARGETARCH.
  local host="linux/$(go env GOARCH)" platforms=() platform start=${SECONDS}
  read -r -a platforms <<<"$(tr ',' ' ' <<<"${PLATFORMS:-}")"
  local builds=("${host}") index=()
  for platform in "${platforms[@]}"; do
    [[ "${platform}" =~ ^linux/(amd64|arm64)$ ]] || { echo "PLATFORMS: '${platform}' is not linux/amd64 or linux/arm64" >&2; exit 2; }
    [[ " ${builds[*]} " == *" ${platform} "* ]] || builds+=("${platform}")
    [[ " ${index[*]} " == *" ${platform} "* ]] || index+=("${platform}")
  done
  # Each version keeps its own stamped binaries, so that builds of two versions (make images
  # and a release cut in the same run) do not relink each other's every time; the Dockerfile
  # takes them from bin/<os>_<arch>/, hard links to the version's.
  for platform in "${builds[@]}"; do
    local dir="${BIN}/${platform/\//_}" stamped="${OUT}/stamped/${version}/${platform/\//_}" cmd
    mkdir -p "${dir}"
    for cmd in apiserver controller etcd-snapshot nginx-exporter; do
      GOARCH="${platform#linux/}" go_build "${stamped}/${cmd}" "./cmd/${cmd}" "${ldflags}"
      ln -f "${stamped}/${cmd}" "${dir}/${cmd}"
    done
  done
  echo "go      apiserver, controller, etcd-snapshot, nginx-exporter for ${builds[*]} (${version}, ${tree_state}) in $((SECONDS - start))s"

  # Two images from these binaries: the operator's (the Dockerfile's last stage) and the
  # nginx pods' sidecar (its stage nginx-exporter), each also as an index when asked.
  local name ref digest dirs=() target
  for platform in "${index[@]}"; do dirs+=("${BIN}/${platform/\//_}"); done
  for name in nginx-operator nginx-exporter; do
    ref="${REGISTRY}/nginx-operator:${tag}" target=()
    [[ "${name}" == nginx-operator ]] || ref="${REGISTRY}/nginx-operator/${name}:${tag}" target=(--target "${name}")
    local args=(--build-arg BINARIES=prebuilt --build-arg VERSION="${version}" --build-arg REVISION="${revision}" "${target[@]}")
    digest="$(printf '%s\n' "${ref}" "${version}" "${revision}" "${SOURCE_DATE_EPOCH}" |
      digest_of "${ROOT}/Dockerfile" "${ROOT}/.dockerignore" "${BIN}/${host/\//_}")"
    archive_image "${name}" "${ref}" "${ROOT}" "${ROOT}/Dockerfile" "${digest}" --platform "${host}" "${args[@]}"
    ((${#index[@]})) || continue
    digest="$(printf '%s\n' "${ref}" "${version}" "${revision}" "${SOURCE_DATE_EPOCH}" "${index[*]}" |
      digest_of "${ROOT}/Dockerfile" "${ROOT}/.dockerignore" "${dirs[@]}")"
    INDEX_PLATFORMS="${index[*]}" archive_image "${name}-index" "${ref}" "${ROOT}" "${ROOT}/Dockerfile" "${digest}" "${args[@]}"
  done
}

build_pause() {
  local start=${SECONDS} context="${WORK}/pause"
  (cd hack && go_build "${BIN}/pause" ./images/pause "-s -w")  # a program of the hack/ module
  echo "go      pause in $((SECONDS - start))s"
  rm -rf "${context}" && mkdir -p "${context}/rootfs"
  cp "${BIN}/pause" "${context}/rootfs/pause"
  stage_image pause "${REGISTRY}/nginx-operator/pause:${PAUSE_TAG}" "${context}" "${PAUSE_TAG}"
}

build_etcd() {
  local env_sh="${TOOLS_BIN_DIR:-${ROOT}/hack/tools/bin}/env.sh" ETCD_BIN="" ETCDCTL_BIN="" ETCDUTL_BIN=""
  # shellcheck disable=SC1090
  [[ -f "${env_sh}" ]] && source "${env_sh}"
  if [[ ! -x "${ETCD_BIN}" || ! -x "${ETCDCTL_BIN}" || ! -x "${ETCDUTL_BIN}" ]]; then
    echo "the etcd image needs the etcd, etcdctl and etcdutl that 'make tools' builds (not all in ${env_sh}): run make tools first" >&2
    exit 1
  fi
  local version context="${WORK}/etcd"
  version="$("${ETCD_BIN}" --version | sed -n 's/^etcd Version: //p')"
  [[ -n "${version}" ]] || { echo "cannot tell the version of ${ETCD_BIN}" >&2; exit 1; }
  # data/ becomes /var/lib/etcd, owned by etcd's user (see the Dockerfile).
  rm -rf "${context}" && mkdir -p "${context}/data"
  etcd_rootfs "${context}/rootfs/linux_$(go env GOARCH)" "${ETCD_BIN}" "${ETCDCTL_BIN}" "${ETCDUTL_BIN}"
  stage_image etcd "${REGISTRY}/nginx-operator/etcd:${version}" "${context}" "${version}"

  local platforms=() platform index=()
  read -r -a platforms <<<"$(tr ',' ' ' <<<"${PLATFORMS:-}")"
  for platform in "${platforms[@]}"; do
    [[ "${platform}" =~ ^linux/(amd64|arm64)$ ]] || { echo "PLATFORMS: '${platform}' is not linux/amd64 or linux/arm64" >&2; exit 2; }
    [[ " ${index[*]} " == *" ${platform} "* ]] || index+=("${platform}")
  done
  ((${#index[@]} == 0)) || build_etcd_index "${version}" "${index[@]}"
}

# build_etcd_index <version> <platform>... builds the etcd image for each platform as one
# OCI image index. The etcd `make tools` built is linked against this machine's libc, which
# serves no other architecture: the index has static builds of the same module for each.
build_etcd_index() {
  local version="$1" context="${WORK}/etcd-index" start=${SECONDS} platform bin cmd
  shift
  rm -rf "${context}" && mkdir -p "${context}/data"
  for platform in "$@"; do
    bin="${BIN}/etcd/${platform/\//_}"
    for cmd in server etcdctl etcdutl; do
      (cd hack/tools && GOARCH="${platform#linux/}" go_build "${bin}/${cmd/server/etcd}" "go.etcd.io/etcd/${cmd}/v3" "-s -w")
    done
    etcd_rootfs "${context}/rootfs/${platform/\//_}" "${bin}/etcd" "${bin}/etcdctl" "${bin}/etcdutl"
  done
  echo "go      etcd, etcdctl, etcdutl for $* in $((SECONDS - start))s"
  local ref="${REGISTRY}/nginx-operator/etcd:${version}" digest
  digest="$(printf '%s\n' "${ref}" "${version}" "$*" | digest_of "${IMAGES_DIR}/etcd/Dockerfile" "${context}/rootfs")"
  INDEX_PLATFORMS="$*" archive_image etcd-index "${ref}" "${context}" "${IMAGES_DIR}/etcd/Dockerfile" "${digest}" --build-arg VERSION="${version}"
}

# etcd_rootfs <dir> <etcd> <etcdctl> <etcdutl> stages one platform's files of the etcd image,
# which the Dockerfile takes from rootfs/<os>_<arch>/.
etcd_rootfs() {
  local rootfs="$1" bin lib
  shift
  mkdir -p "${rootfs}/usr/local/bin" "${rootfs}/var/lib" "${rootfs}/tmp"
  # etcdctl and etcdutl as in etcd's own images: member operations, snapshots and restores
  # run in a pod of this image (docs/operations.md), which has no shell.
  for bin in "$@"; do
    cp "${bin}" "${rootfs}/usr/local/bin/${bin##*/}"
    # A cgo build needs its loader and libc; take the host's, which it was linked against.
    for lib in $(shared_libraries "${bin}" /); do
      cp -L --parents "${lib}" "${rootfs}/"
    done
  done
  chmod 1777 "${rootfs}/tmp"
  # etcd's default URLs name localhost; kubelet and docker mount their own /etc/hosts over this.
  mkdir -p "${rootfs}/etc"
  printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"${rootfs}/etc/hosts"
}

build_prometheus() {
  local env_sh="${TOOLS_BIN_DIR:-${ROOT}/hack/tools/bin}/env.sh" PROMETHEUS_BIN="" PROMETHEUS_CONFIG_RELOADER_BIN=""
  # shellcheck disable=SC1090
  [[ -f "${env_sh}" ]] && source "${env_sh}"
  if [[ ! -x "${PROMETHEUS_BIN}" || ! -x "${PROMETHEUS_CONFIG_RELOADER_BIN}" ]]; then
    echo "the prometheus image needs the prometheus and prometheus-config-reloader that 'make tools' builds as root (not in ${env_sh})" >&2
    exit 1
  fi
  local version context="${WORK}/prometheus"
  version="$("${PROMETHEUS_BIN}" --version | sed -n 's/^prometheus, version \([^ ]*\) .*/\1/p')"
  [[ -n "${version}" ]] || { echo "cannot tell the version of ${PROMETHEUS_BIN}" >&2; exit 1; }
  rm -rf "${context}" && mkdir -p "${context}/rootfs/bin" "${context}/rootfs/tmp"
  local bin
  for bin in "${PROMETHEUS_BIN}" "${PROMETHEUS_CONFIG_RELOADER_BIN}"; do
    [[ -z "$(elf_interpreter "${bin}")" ]] || { echo "${bin} is linked dynamically; the image has no libc" >&2; exit 1; }
    cp "${bin}" "${context}/rootfs/bin/${bin##*/}"
  done
  chmod 1777 "${context}/rootfs/tmp"
  stage_image prometheus "${REGISTRY}/nginx-operator/prometheus:${version}" "${context}" "${version}"
}

# shared_libraries <binary> <root> prints the loader and the shared libraries the binary
# loads when run in <root>, as paths inside <root>; nothing for a static binary. It runs
# <root>'s own loader in list mode and fails if a library is not found inside <root>.
shared_libraries() {
  local binary="$1" root="${2%/}" interp listing
  interp="$(LC_ALL=C elf_interpreter "${binary}")"
  [[ -n "${interp}" ]] || return 0
  local multiarch dirs
  multiarch="$(uname -m)-linux-gnu"
  dirs="${root}/lib/${multiarch}:${root}/usr/lib/${multiarch}:${root}/lib:${root}/usr/lib"
  listing="$("${root}${interp}" --library-path "${dirs}" --list "${binary}")"
  if grep -q 'not found' <<<"${listing}"; then
    echo "${binary} needs libraries missing from ${root:-/}:" >&2
    grep 'not found' <<<"${listing}" >&2
    return 1
  fi
  echo "${interp}"
  local lib
  for lib in $(sed -n 's/^.* => \(\/[^ ]*\) (0x[0-9a-f]*)$/\1/p' <<<"${listing}"); do
    [[ -z "${root}" || "${lib}" == "${root}/"* ]] || { echo "${lib} resolved outside ${root}" >&2; return 1; }
    echo "${lib#"${root}"}"
  done
}

# elf_interpreter <binary> prints the dynamic loader (ELF PT_INTERP) a binary asks for,
# or nothing for a static binary; ldd (libc-bin) spares a dependency on binutils.
elf_interpreter() {
  local out
  out="$(ldd "$1" 2>/dev/null)" || return 0
  sed -n 's/^[[:space:]]*\(\/[^ ]*ld-linux[^ ]*\) (0x[0-9a-f]*)$/\1/p' <<<"${out}" | head -n1
}

build_nginx() {
  # Keyed by the candidate version of every package: a Debian update makes a new image.
  local candidates pkg version wanted=() missing=() deb
  candidates="$(LC_ALL=C apt-cache policy "${NGINX_DEBS[@]}" |
    awk '/^[^ ]/ { sub(":$", "", $1); p = $1 } /^ *Candidate:/ { print p "=" $2 }')"
  for pkg in "${NGINX_DEBS[@]}"; do
    version="$(sed -n "s/^${pkg}=//p" <<<"${candidates}")"
    if [[ -z "${version}" || "${version}" == "(none)" ]]; then
      echo "apt knows no version of ${pkg}; run apt-get update" >&2
      exit 1
    fi
    wanted+=("${pkg}=${version}")
    deb_file "${pkg}=${version}" >/dev/null || missing+=("${pkg}=${version}")
  done
  if ((${#missing[@]})); then
    local start=${SECONDS}
    (cd "${DEBS}" && apt-get download -q -o APT::Sandbox::User=root "${missing[@]}" >/dev/null)
    echo "apt     downloaded ${missing[*]} in $((SECONDS - start))s"
  fi
  local debs=()
  for pkg in "${wanted[@]}"; do debs+=("$(deb_file "${pkg}")"); done
  for deb in "${DEBS}"/*.deb; do # versions these replaced
    [[ " ${debs[*]} " == *" ${deb} "* ]] || rm -f "${deb}"
  done

  local context="${WORK}/nginx" staging="${WORK}/nginx-debs"
  local rootfs="${context}/rootfs" libs file
  rm -rf "${context}" "${staging}" && mkdir -p "${rootfs}" "${staging}"
  for deb in "${debs[@]}"; do dpkg-deb -x "${deb}" "${staging}"; done
  # The binary, its loader and libraries as Debian ships them, the welcome page, MIME
  # types and the packages' copyright files; then our configuration, users and the
  # directories nginx writes to.
  libs="$(shared_libraries "${staging}/usr/sbin/nginx" "${staging}")"
  for file in /usr/sbin/nginx ${libs} /etc/nginx/mime.types /usr/share/nginx/html/index.html \
    $(printf '/usr/share/doc/%s/copyright ' "${NGINX_DEBS[@]}"); do
    mkdir -p "${rootfs}${file%/*}"
    cp -L "${staging}${file}" "${rootfs}${file}"
  done
  (cd "${IMAGES_DIR}/nginx/rootfs" && find . -type f -exec install -D -m 0644 {} "${rootfs}/{}" \;)
  mkdir -p "${rootfs}/var/lib/nginx" "${rootfs}/var/log/nginx" "${rootfs}/run" "${rootfs}/tmp"
  # nginx opens its compiled-in log files when a configuration names none: to the
  # container's output, as in the official images.
  ln -sf /dev/stderr "${rootfs}/var/log/nginx/error.log"
  ln -sf /dev/stdout "${rootfs}/var/log/nginx/access.log"
  chmod 1777 "${rootfs}/tmp"
  rm -rf "${staging}"

  local nginx_version="${wanted[0]#*=}" tag
  tag="$(tr -c 'A-Za-z0-9_.\n-' '-' <<<"${nginx_version}")"
  stage_image nginx "${REGISTRY}/nginx-operator/nginx:${tag}" "${context}" "${nginx_version}" "${wanted[*]}"

  # The same files as user 101 on port 8080, with a user and group of that id.
  local unprivileged="${WORK}/nginx-unprivileged"
  rm -rf "${unprivileged}" && mkdir -p "${unprivileged}"
  cp -a "${context}/rootfs" "${unprivileged}/rootfs"
  install -m 0644 "${IMAGES_DIR}/nginx-unprivileged/nginx.conf" "${unprivileged}/rootfs/etc/nginx/nginx.conf"
  echo 'nginx:x:101:101:nginx:/nonexistent:/sbin/nologin' >>"${unprivileged}/rootfs/etc/passwd"
  echo 'nginx:x:101:' >>"${unprivileged}/rootfs/etc/group"
  stage_image nginx-unprivileged "${REGISTRY}/nginx-operator/nginx-unprivileged:${tag}" "${unprivileged}" "${nginx_version}" "${wanted[*]}"
}

# deb_file <package>=<version> prints the cached .deb of that version, if there is one.
deb_file() {
  local pkg="${1%%=*}" version="${1#*=}"
  compgen -G "${DEBS}/${pkg}_${version//:/%3a}_*.deb"
}

# stage_image <name> <ref> <context> <version> [extra digest input]: builds
# hack/images/<name>/Dockerfile on <context> (which holds rootfs/).
stage_image() {
  local name="$1" ref="$2" context="$3" version="$4" extra="${5:-}" dockerfile="${IMAGES_DIR}/$1/Dockerfile" digest
  digest="$(printf '%s\n' "${ref}" "${version}" "${extra}" | digest_of "${dockerfile}" "${context}/rootfs")"
  archive_image "${name}" "${ref}" "${context}" "${dockerfile}" "${digest}" --build-arg VERSION="${version}"
}

total=${SECONDS}
for name in "${IMAGES[@]}"; do
  "build_${name//-/_}"
done
echo "images  ${IMAGES[*]} ready in $((SECONDS - total))s; see ${IMAGES_ENV#"${ROOT}/"}"
