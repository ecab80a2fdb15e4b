#!/usr/bin/env bash
# The scripts' one way to make certificates (hack/local-up.sh and the libraries it sources,
# hack/deploy-certs.sh): a certificate authority and the certificates it signs, P-256, with
# openssl and a config of their own, so the result does not depend on the system's
# openssl.cnf. The Go suites have test/framework's certs.go.
# openssl talks on stderr even when all is well: it is shown only when openssl fails. Each
# function returns non-zero at the first failure, also where set -e does not apply.

# cert_openssl ARGS...: openssl, quiet unless it fails.
cert_openssl() {
  local out
  if ! out="$(openssl "$@" 2>&1)"; then
    printf 'openssl %s failed:\n%s\n' "$1" "${out}" >&2
    return 1
  fi
}

# cert_ca DIR NAME SUBJECT DAYS: DIR/NAME.crt and DIR/NAME.key, a self-signed CA for
# SUBJECT (such as /CN=kubernetes-ca) that signs end-entity certificates only.
cert_ca() {
  local dir="$1" name="$2" subject="$3" days="$4"
  cat >"${dir}/${name}.cnf" <<EOF
[req]
distinguished_name = dn
[dn]
[v3_ca]
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
EOF
  cert_openssl ecparam -name prime256v1 -genkey -noout -out "${dir}/${name}.key" || return
  cert_openssl req -x509 -new -sha256 -days "${days}" -key "${dir}/${name}.key" \
    -config "${dir}/${name}.cnf" -extensions v3_ca -subj "${subject}" -out "${dir}/${name}.crt" || return
  rm -f "${dir}/${name}.cnf"
}

# cert_issue DIR CA NAME SUBJECT DAYS USAGES [SANS]: DIR/NAME.crt and DIR/NAME.key for
# SUBJECT (/O=group/CN=name), signed by DIR/CA.crt and DIR/CA.key, for the extended key
# USAGES (serverAuth, clientAuth or both, comma-separated) and the subjectAltName SANS
# (DNS:name, IP:address, comma-separated). NAME may name a subdirectory of DIR.
cert_issue() {
  local dir="$1" ca="$2" name="$3" subject="$4" days="$5" usages="$6" sans="${7:-}"
  cat >"${dir}/${name}.ext" <<EOF
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = ${usages}
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
EOF
  [[ -z "${sans}" ]] || printf 'subjectAltName = %s\n' "${sans}" >>"${dir}/${name}.ext"
  cert_openssl ecparam -name prime256v1 -genkey -noout -out "${dir}/${name}.key" || return
  cert_openssl req -new -sha256 -key "${dir}/${name}.key" -subj "${subject}" \
    -config <(printf '[req]\ndistinguished_name = dn\n[dn]\n') -out "${dir}/${name}.csr" || return
  # A random serial avoids a CA.srl file and collisions between renewals.
  cert_openssl x509 -req -sha256 -days "${days}" -in "${dir}/${name}.csr" \
    -CA "${dir}/${ca}.crt" -CAkey "${dir}/${ca}.key" -set_serial "0x$(openssl rand -hex 16)" \
    -extfile "${dir}/${name}.ext" -out "${dir}/${name}.crt" || return
  cert_openssl verify -CAfile "${dir}/${ca}.crt" "${dir}/${name}.crt" || return
  rm -f "${dir}/${name}.csr" "${dir}/${name}.ext"
}
