#!/usr/bin/env bash
# Creates the serving certificate of the nginx-operator aggregated API server and wires it up:
#   1. a CA and a serving certificate for the apiserver Service's DNS names (openssl),
#   2. the Secret nginx-operator-apiserver-tls in nginx-operator-system,
#   3. spec.caBundle of both APIServices, so the kube-aggregator verifies that certificate.
# Run after `kubectl apply -k artifacts/deploy`; uses the cluster of $KUBECONFIG.
# Re-running renews the serving certificate; the apiserver reloads it without a restart.
#
# Usage: hack/deploy-certs.sh [--print-only]
#   --print-only or DRY_RUN=1  only write the files and print the base64 caBundle
#   OUT_DIR=dir                keep the files there (default: a temp dir, removed unless printing only);
#                              an existing ca.crt/ca.key there is reused, so the caBundle stays valid
#   CA_DAYS, CERT_DAYS         validity in days (default 3650 and 365)
#   KUBECTL                    kubectl binary (default: kubectl)
set -euo pipefail

NAMESPACE=nginx-operator-system
SERVICE=nginx-operator-apiserver
SECRET=nginx-operator-apiserver-tls
APISERVICES=(v1alpha2.operator.example.com v1alpha1.operator.example.com)
KUBECTL=${KUBECTL:-kubectl}
CA_DAYS=${CA_DAYS:-3650}
CERT_DAYS=${CERT_DAYS:-365}

dry_run=${DRY_RUN:-0}
for arg in "$@"; do
  case $arg in
    --print-only | --dry-run) dry_run=1 ;;
    -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument: $arg" >&2; exit 2 ;;
  esac
done
[[ $dry_run == 0 || $dry_run == false ]] && dry_run=0 || dry_run=1

command -v openssl >/dev/null || { echo "openssl not found" >&2; exit 1; }
if [[ $dry_run == 0 ]]; then
  command -v "$KUBECTL" >/dev/null || { echo "$KUBECTL not found" >&2; exit 1; }
fi

if [[ -n ${OUT_DIR:-} ]]; then
  mkdir -p "$OUT_DIR"
  dir=$OUT_DIR
else
  dir=$(mktemp -d)
  # Private keys should not linger; in print-only mode the files are the point, so keep them.
  [[ $dry_run == 1 ]] || trap 'rm -rf "$dir"' EXIT
fi
umask 077

# The kube-aggregator dials the Service by its .svc name; .svc.cluster.local for in-cluster clients.
dns1=$SERVICE.$NAMESPACE.svc
dns2=$dns1.cluster.local

# A minimal config, so the result does not depend on the system's openssl.cnf.
cat >"$dir/openssl.cnf" <<EOF
[req]
distinguished_name = dn
prompt = no
[dn]
CN = $SERVICE-ca
[v3_ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
EOF
cat >"$dir/tls.ext" <<EOF
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:$dns1, DNS:$dns2
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
EOF

if [[ -s $dir/ca.crt && -s $dir/ca.key ]]; then
  echo "Reusing the CA in $dir" >&2
else
  openssl ecparam -name prime256v1 -genkey -noout -out "$dir/ca.key"
  openssl req -x509 -new -sha256 -days "$CA_DAYS" -key "$dir/ca.key" \
    -config "$dir/openssl.cnf" -extensions v3_ca -out "$dir/ca.crt"
fi

openssl ecparam -name prime256v1 -genkey -noout -out "$dir/tls.key"
openssl req -new -sha256 -key "$dir/tls.key" -config "$dir/openssl.cnf" \
  -subj "/CN=$dns1" -out "$dir/tls.csr"
# A random serial avoids a ca.srl file and collisions between renewals.
openssl x509 -req -sha256 -days "$CERT_DAYS" -in "$dir/tls.csr" \
  -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -set_serial "0x$(openssl rand -hex 16)" \
  -extfile "$dir/tls.ext" -out "$dir/tls.crt"
openssl verify -CAfile "$dir/ca.crt" "$dir/tls.crt" >/dev/null

# -A: one line, the form a caBundle takes.
ca_bundle=$(openssl base64 -A -in "$dir/ca.crt")

if [[ $dry_run == 1 ]]; then
  echo "Files in $dir: ca.crt ca.key tls.crt tls.key" >&2
  echo "caBundle:" >&2
  echo "$ca_bundle"
  exit 0
fi

# Apply rather than create, so a re-run replaces the certificate in place. ca.crt, as
# cert-manager writes it, is what clients such as Prometheus verify the apiserver with.
"$KUBECTL" -n "$NAMESPACE" create secret generic "$SECRET" --type=kubernetes.io/tls \
  --from-file=tls.crt="$dir/tls.crt" --from-file=tls.key="$dir/tls.key" --from-file=ca.crt="$dir/ca.crt" \
  --dry-run=client -o yaml |
  "$KUBECTL" apply -f -

for apiservice in "${APISERVICES[@]}"; do
  "$KUBECTL" patch apiservice "$apiservice" --type merge \
    -p "{\"spec\":{\"caBundle\":\"$ca_bundle\"}}"
done
